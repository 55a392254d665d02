//! `clxfer check`: traces against every rule Perfetto's JSON importer imposes, and with
//! `--require` a run's report against the user's rules (`clxfer::compare::guard`).

use clxfer::compare::guard::{self, Rule};
use clxfer::compare::input;
use clxfer::report::Report;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A line on stdout, with the progress bar out of its way.
macro_rules! out {
    ($($t:tt)*) => { crate::progress::suspend(|| println!($($t)*)) };
}

/// Shown violations per trace; the rest are counted.
const SHOWN: usize = 50;

pub fn check(traces: &[PathBuf], require: &[String], baseline: Option<&Path>) -> ExitCode {
    let mut rules: Vec<Rule> = Vec::new();
    let mut bad = false;
    for text in require
        .iter()
        .flat_map(|r| r.split(','))
        .filter(|r| !r.trim().is_empty())
    {
        match guard::parse(text) {
            Ok(rule) => rules.push(rule),
            Err(e) => {
                eprintln!("clxfer: --require {e}");
                bad = true;
            }
        }
    }
    if let Some(r) = rules.iter().find(|r| r.needs_baseline())
        && baseline.is_none()
    {
        eprintln!(
            "clxfer: --require `{}` compares with a baseline: name it with --baseline FILE",
            r.text
        );
        bad = true;
    }
    if bad {
        eprintln!("clxfer: the rules: {}", guard::VOCABULARY);
        return ExitCode::from(2);
    }
    let baseline: Vec<Report> = match baseline.map(input::reports) {
        None => Vec::new(),
        Some(Ok((runs, _))) => runs.into_iter().flatten().collect(),
        Some(Err(e)) => {
            eprintln!("clxfer: --baseline: {e}");
            return ExitCode::from(2);
        }
    };
    let mut code = 0u8;
    for path in traces {
        let files = match input::files(path) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("clxfer: {e}");
                code = 2;
                continue;
            }
        };
        for file in files {
            code = code.max(check_file(&file, &rules, &baseline));
        }
    }
    ExitCode::from(code)
}

/// One file: its Perfetto rules (a trace's), then the user's rules.
fn check_file(path: &Path, rules: &[Rule], baseline: &[Report]) -> u8 {
    let is_report = match input::is_report(path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("clxfer: {e}");
            return 2;
        }
    };
    let mut code = 0;
    if !is_report {
        code = perfetto(path);
        if code == 2 || rules.is_empty() {
            return code;
        }
    } else if rules.is_empty() {
        out!(
            "{}: a report, not a trace: nothing of Perfetto's to check",
            path.display()
        );
        return 0;
    }
    let reports = match input::reports(path) {
        Ok((runs, _)) => runs.into_iter().flatten().collect::<Vec<_>>(),
        Err(e) => {
            eprintln!("clxfer: {e}");
            return 2;
        }
    };
    for r in &reports {
        let base = (baseline.iter())
            .find(|b| b.program == r.program)
            .or((baseline.len() == 1).then(|| &baseline[0]));
        let broken: Vec<String> = rules
            .iter()
            .filter_map(|rule| rule.broken(r, base))
            .collect();
        let who = format!("{}: {} (pid {})", path.display(), r.program, r.pid);
        if broken.is_empty() {
            let n = rules.len();
            out!("{who}: {n} rule{} held", if n == 1 { "" } else { "s" });
        }
        for b in &broken {
            out!("{who}: broken: {b}");
        }
        if !broken.is_empty() {
            code = code.max(1);
        }
    }
    code
}

/// The trace against Perfetto's importer: 0 ok, 1 violations, 2 not a trace.
fn perfetto(path: &Path) -> u8 {
    match clxfer::trace::check::check_file(path) {
        Err(e) => {
            eprintln!("clxfer: {e}");
            2
        }
        Ok(r) => {
            let shape = match (r.closed, r.truncated) {
                (true, _) => "closed",
                (false, false) => "not closed (the program did not exit normally?)",
                (false, true) => "cut short: the last event is incomplete and ignored",
            };
            if r.ok() {
                out!(
                    "{}: ok: {} events, {} slices, {} flows; {shape}",
                    path.display(),
                    r.events,
                    r.slices,
                    r.flows
                );
                return 0;
            }
            out!(
                "{}: {} violation(s) in {} events; {shape}",
                path.display(),
                r.violation_count,
                r.events
            );
            for v in r.violations.iter().take(SHOWN) {
                out!("  {v}");
            }
            let shown = r.violations.len().min(SHOWN);
            if r.violation_count > shown {
                out!("  … and {} more", r.violation_count - shown);
            }
            1
        }
    }
}
