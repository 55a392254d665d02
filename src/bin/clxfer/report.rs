//! `clxfer report` and `clxfer merge`: reading saved traces.

use crate::fail;
use clxfer::report::{Format, from_trace};
use clxfer::trace::{merge, read};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub fn report(traces: &[PathBuf], format: &str) -> ExitCode {
    let Some(format) = Format::parse(format) else {
        return fail(format!("--format {format}: accepted: text|json|md"));
    };
    let mut out = String::new();
    for (i, path) in traces.iter().enumerate() {
        let report = match from_trace::report_file(path) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        if i > 0 && format != Format::Json {
            out.push('\n');
        }
        out += &report.render(format);
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
    ExitCode::SUCCESS
}

pub fn merge(traces: &[PathBuf], out: &Path) -> ExitCode {
    let mut read = Vec::new();
    for path in traces {
        match read::read_file(path) {
            Ok(t) => read.push((path.display().to_string(), t)),
            Err(e) => return fail(e),
        }
    }
    let inputs: Vec<merge::Input> = read
        .iter()
        .map(|(name, trace)| merge::Input {
            name: name.clone(),
            trace,
        })
        .collect();
    let events = match merge::merge(&inputs) {
        Ok(e) => e,
        Err(e) => return fail(e),
    };
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(out);
    let written = file.and_then(|mut f| f.write_all(merge::to_json(&events).as_bytes()));
    if let Err(e) = written {
        return fail(format!(
            "cannot write {}: {e} (an existing file is never overwritten)",
            out.display()
        ));
    }
    eprintln!(
        "clxfer: merged {} traces ({} events) into {}",
        traces.len(),
        events.len(),
        out.display()
    );
    ExitCode::SUCCESS
}
