//! One side of a comparison, read: a trace (JSON or protobuf), a report as clxfer writes it in
//! JSON (`CLXFER_REPORT=run.json`, `clxfer report --format json`: one report or an array of
//! them), or a directory of either (every `clxfer-*.json` and `clxfer-*.pftrace` trace in it, and
//! every `*.json` that is a report: `CLXFER_REPORT=dir/run.json` names a program's later
//! processes `run.1.json`, …; sorted).

use crate::report::{Report, from_trace};
use std::path::{Path, PathBuf};

/// The reports of `path`'s processes, a list per file (a file is one run: of one process, or of
/// a program that started several), and a warning for each report cut short.
pub fn reports(path: &Path) -> Result<(Vec<Vec<Report>>, Vec<String>), String> {
    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    // A directory's files on every core (`crate::trace::many`), then in their order.
    for read in crate::trace::many::each(&files(path)?, |file| run_of(file)) {
        let (run, said) = read?;
        runs.push(run);
        warnings.extend(said);
    }
    Ok((runs, warnings))
}

/// One file's reports (a report as written, or a trace's processes), and a warning for each cut
/// short.
fn run_of(file: &Path) -> Result<(Vec<Report>, Vec<String>), String> {
    if is_report(file)? {
        return Ok((read_report(file)?, Vec::new()));
    }
    let mut run = Vec::new();
    let mut warnings = Vec::new();
    for p in from_trace::report_file(file, None).map_err(|e| e.to_string())? {
        warnings.extend(p.warning);
        run.push(p.report);
    }
    Ok((run, warnings))
}

/// `path`, or the traces and reports of a directory.
pub fn files(path: &Path) -> Result<Vec<PathBuf>, String> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let unreadable =
        |e: std::io::Error| format!("cannot read the directory {}: {e}", path.display());
    // Its traces, in subdirectories too (`crate::trace::read::traces_in`), and its reports.
    let mut files = crate::trace::read::traces_in(path).map_err(unreadable)?;
    let entries = std::fs::read_dir(path).map_err(unreadable)?;
    files.extend(
        entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    !crate::trace::read::is_trace_name(n)
                        && n.ends_with(".json")
                        && is_report(p).unwrap_or(false)
                })
            }),
    );
    if files.is_empty() {
        return Err(format!(
            "{} is a directory with no trace (clxfer-*.json, clxfer-*.pftrace) and no JSON report \
             in it",
            path.display()
        ));
    }
    files.sort();
    Ok(files)
}

/// Whether the file is a report in JSON rather than a trace: its first key is `program` (a
/// trace's first event has `name`, `ph`, …).
pub fn is_report(path: &Path) -> Result<bool, String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let compact: Vec<u8> = head[..n]
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    Ok(compact.starts_with(b"{\"program\"") || compact.starts_with(b"[{\"program\""))
}

fn read_report(path: &Path) -> Result<Vec<Report>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bad = |e: serde_json::Error| format!("{}: not a clxfer report: {e}", path.display());
    if text.trim_start().starts_with('[') {
        serde_json::from_str(&text).map_err(bad)
    } else {
        serde_json::from_str(&text).map(|r| vec![r]).map_err(bad)
    }
}
