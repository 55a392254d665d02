//! `clxfer report` and `clxfer merge`: reading saved traces.

use crate::{fail, traces_in};
use clxfer::report::{Format, from_trace};
use clxfer::trace::merge;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The traces named, a directory standing for every `clxfer-*.json` in it (sorted).
fn expand(traces: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for t in traces {
        if !t.is_dir() {
            files.push(t.clone());
            continue;
        }
        let mut inside =
            traces_in(t).map_err(|e| format!("cannot read the directory {}: {e}", t.display()))?;
        if inside.is_empty() {
            return Err(format!(
                "{} is a directory with no clxfer-*.json trace",
                t.display()
            ));
        }
        inside.sort();
        files.extend(inside);
    }
    Ok(files)
}

pub fn report(traces: &[PathBuf], format: &str) -> ExitCode {
    let Some(format) = Format::parse(format) else {
        return fail(format!("--format {format}: accepted: text|json|md"));
    };
    let traces = match expand(traces) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let mut rendered = Vec::new();
    for path in &traces {
        let processes = match from_trace::report_file(path) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        for p in processes {
            if let Some(warning) = &p.cut_short {
                eprintln!("clxfer: warning: {warning}");
            }
            rendered.push(p.report.render(format));
        }
    }
    // Several processes (traces, or a merge) as JSON: one document, an array of their reports.
    let out = match format {
        Format::Json if rendered.len() > 1 => format!(
            "[\n{}\n]\n",
            rendered
                .iter()
                .map(|r| r.trim_end())
                .collect::<Vec<_>>()
                .join(",\n")
        ),
        _ => rendered.join("\n"),
    };
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
