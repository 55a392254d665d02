//! `clxfer report` and `clxfer merge`: reading saved traces.

use crate::fail;
use clxfer::report::{Format, from_trace};
use clxfer::trace::merge;
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
    // An input that cannot be opened is named before anything is written.
    for t in traces {
        if let Err(e) = std::fs::File::open(t) {
            return fail(format!("cannot read {}: {e}", t.display()));
        }
    }
    let file = match clxfer::sink::trace_file::open_new(out) {
        Ok(f) => f,
        Err(e) => {
            return fail(format!(
                "cannot write {}: {e} (an existing file is never overwritten)",
                out.display()
            ));
        }
    };
    let mut w = std::io::BufWriter::new(file);
    let merged = merge::merge_files(traces, &mut w).and_then(|n| {
        w.flush().map_err(|e| e.to_string())?;
        Ok(n)
    });
    match merged {
        Ok(n) => {
            let (t, e) = (traces.len(), n);
            eprintln!(
                "clxfer: merged {t} trace{} ({e} event{}) into {}",
                if t == 1 { "" } else { "s" },
                if e == 1 { "" } else { "s" },
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            // Leave no half-written file behind.
            let _ = std::fs::remove_file(out);
            fail(e)
        }
    }
}
