//! `clxfer run`: the program with clxfer loaded (as a loader layer, or by LD_PRELOAD), its exit
//! code passed through, and where each process's trace or report went.

use crate::{fail, layer_library, traces_in};
use std::collections::HashSet;
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// A report at exit (on stderr, or --report) instead of a trace.
    #[arg(long)]
    summary: bool,
    /// Where the traces go (CLXFER_DIR; default: that variable, else .); made if missing.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Where the report goes (CLXFER_REPORT): .json, .md or text; with a trace, beside it; `-`
    /// for stderr (a character device or FIFO, such as /dev/stderr, is written as it is).
    #[arg(long, value_name = "PATH")]
    report: Option<PathBuf>,
    /// Load clxfer by LD_PRELOAD instead of as an OpenCL loader layer (OPENCL_LAYERS).
    #[arg(long)]
    preload: bool,
    /// Time on the host only; leave the program's queues as they are.
    #[arg(long)]
    no_device_timing: bool,
    /// The vendor rules to classify with (CLXFER_RULES).
    #[arg(long, value_name = "R", value_parser = clap::builder::PossibleValuesParser::new(clxfer::model::rules::CHOICES))]
    rules: Option<String>,
    /// What clxfer says on stderr (CLXFER_LOG): warn, info or debug.
    #[arg(long, value_name = "LEVEL", value_parser = clap::builder::PossibleValuesParser::new(["warn", "info", "debug"]))]
    log: Option<String>,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM ARGS")]
    program: Vec<OsString>,
}

/// The clxfer traces in `dir` now.
fn ours(dir: &Path) -> HashSet<PathBuf> {
    traces_in(dir).unwrap_or_default().into_iter().collect()
}

/// Files named like `report` (`<stem>.json`, `<stem>.1.json`, …) in its directory.
fn reports(report: &Path) -> HashSet<PathBuf> {
    let dir = match report.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let stem = report
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n == report.file_name().unwrap_or_default()
                            || n.starts_with(&format!("{stem}."))
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The trace's last event, from the file's end (one event per line; the end event carries the
/// report): `None` when the trace has none (it was cut short).
fn end_event(trace: &Path) -> Option<serde_json::Value> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(trace).ok()?;
    let len = f.metadata().ok()?.len();
    let tail = len.min(8 << 20);
    f.seek(SeekFrom::Start(len - tail)).ok()?;
    let mut text = String::new();
    f.take(tail).read_to_string(&mut text).ok()?;
    let line = text
        .lines()
        .rev()
        .find(|l| l.contains(&format!("\"name\":\"{}\"", clxfer::sink::schema::TRACE_END)))?;
    serde_json::from_str(line.trim_end_matches(',')).ok()
}

/// `PATH (SIZE, N events)`, from the trace's end event (`None`: it was cut short).
fn about(trace: &Path, end: Option<&serde_json::Value>) -> String {
    let size = std::fs::metadata(trace).map(|m| m.len()).unwrap_or(0);
    let events = end
        .and_then(|e| e["args"]["events"].as_u64())
        .map_or_else(|| "cut short".to_string(), |n| format!("{n} events"));
    format!(
        "{} ({}, {events})",
        trace.display(),
        clxfer::units::bytes(size)
    )
}

/// The report's first finding in the trace's end event, with what it would save.
fn top_finding(end: &serde_json::Value) -> Option<String> {
    let f = end["args"]["report"]["findings"].get(0)?;
    let title = f["title"].as_str()?;
    Some(match f["saving_ns"].as_u64() {
        Some(ns) => format!("{title} (saves ~{})", clxfer::units::duration(ns)),
        None => title.to_string(),
    })
}

pub fn run(a: Args) -> ExitCode {
    let Some(lib) = layer_library() else {
        return fail("libclxfer.so is not next to the clxfer binary (build it with cargo build)");
    };
    // The user's CLXFER_* variables reach the program; a flag overrides its variable.
    let inherited = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    let out = a
        .out
        .clone()
        .or_else(|| inherited("CLXFER_DIR").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("."));
    if let Err(e) = std::fs::create_dir_all(&out) {
        return fail(format!(
            "cannot make the output directory {}: {e}",
            out.display()
        ));
    }
    let (program, args) = a.program.split_first().expect("clap requires the program");
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    let mode = if a.summary { Some("summary") } else { None };
    let flags: [(&str, Option<OsString>, &str); 5] = [
        ("CLXFER_MODE", mode.map(OsString::from), "--summary"),
        ("CLXFER_DIR", Some(out.clone().into_os_string()), "--out"),
        (
            "CLXFER_DEVICE_TIMING",
            a.no_device_timing.then(|| OsString::from("off")),
            "--no-device-timing",
        ),
        (
            "CLXFER_RULES",
            a.rules.clone().map(OsString::from),
            "--rules",
        ),
        ("CLXFER_LOG", a.log.clone().map(OsString::from), "--log"),
    ];
    let mut said = Vec::new();
    for (var, flag_value, flag) in flags {
        let from_flag = flag_value.is_some() && (var != "CLXFER_DIR" || a.out.is_some());
        match (flag_value, inherited(var)) {
            (Some(v), _) if from_flag => {
                said.push(format!("{var}={} ({flag})", v.to_string_lossy()));
                cmd.env(var, v);
            }
            (_, Some(v)) => said.push(format!("{var}={} (environment)", v.to_string_lossy())),
            (Some(v), None) => {
                cmd.env(var, v);
            }
            (None, None) => {}
        }
    }
    if let Some(r) = &a.report {
        cmd.env("CLXFER_REPORT", r);
        said.push(format!("CLXFER_REPORT={} (--report)", r.display()));
    }
    // Other CLXFER_* variables of the environment pass through as they are.
    for (k, v) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if k.starts_with("CLXFER_")
            && !said.iter().any(|s| s.starts_with(&format!("{k}=")))
            && !v.is_empty()
        {
            said.push(format!("{k}={} (environment)", v.to_string_lossy()));
        }
    }
    let log = a.log.clone().or_else(|| std::env::var("CLXFER_LOG").ok());
    if matches!(log.as_deref(), Some("info" | "debug")) && !said.is_empty() {
        eprintln!("clxfer: run: {}", said.join(", "));
    }
    let (var, sep) = if a.preload {
        ("LD_PRELOAD", ":")
    } else {
        ("OPENCL_LAYERS", ":")
    };
    let mut value = lib.clone().into_os_string();
    if let Some(old) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        value.push(sep);
        value.push(old);
    }
    cmd.env(var, value);
    let traces_before = ours(&out);
    let reports_before = a.report.as_deref().map(reports).unwrap_or_default();
    let status = match cmd.status() {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot run {}: {e}", program.to_string_lossy())),
    };
    let mut traces: Vec<PathBuf> = ours(&out).difference(&traces_before).cloned().collect();
    traces.sort();
    let summary = a.summary || inherited("CLXFER_MODE").is_some_and(|m| m == "summary");
    if !summary {
        if traces.is_empty() {
            eprintln!("clxfer: no trace written (did the program use OpenCL?)");
        }
        for t in &traces {
            let end = end_event(t);
            eprintln!("clxfer: trace: {}", about(t, end.as_ref()));
            if let Some(top) = end.as_ref().and_then(top_finding) {
                eprintln!("clxfer:   top finding: {top}");
            }
        }
        if let Some(t) = traces.first() {
            eprintln!("clxfer:   open it with: clxfer view {}", t.display());
        }
    }
    let stream = a.report.as_deref().map(clxfer::sink::trace_file::is_stream);
    match &a.report {
        Some(r) if r.as_os_str() == "-" => eprintln!("clxfer: report: above, on stderr"),
        Some(r) if stream == Some(true) => eprintln!("clxfer: report: written to {}", r.display()),
        Some(r) => {
            let mut made: Vec<PathBuf> = reports(r).difference(&reports_before).cloned().collect();
            made.sort();
            for m in made {
                eprintln!("clxfer: report: {}", m.display());
            }
        }
        None if summary => eprintln!("clxfer: report: above, on stderr"),
        None => {}
    }
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(code as u8),
        (None, Some(sig)) => {
            eprintln!("clxfer: the program was killed by signal {sig}");
            ExitCode::from(128u8.saturating_add(sig as u8))
        }
        _ => ExitCode::FAILURE,
    }
}
