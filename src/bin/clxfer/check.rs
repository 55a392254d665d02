//! `clxfer check`: traces against every rule Perfetto's JSON importer imposes, and with
//! `--require` a run's report against the user's rules (`clxfer::compare::guard`).

use clxfer::compare::guard::{self, Rule};
use clxfer::compare::input;
use clxfer::report::Report;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What checking one file says, kept until the files before it have said theirs: the files are
/// checked on every core (`clxfer::trace::many`), their lines printed in order.
#[derive(Default)]
struct Said(Vec<(bool, String)>);

impl Said {
    /// A line for stdout.
    fn out(&mut self, line: String) {
        self.0.push((false, line));
    }

    /// A `clxfer:` line for stderr.
    fn err(&mut self, line: String) {
        self.0.push((true, format!("clxfer: {line}")));
    }

    /// Prints the lines, stdout's with the progress bar out of their way.
    fn print(self) {
        for (err, line) in self.0 {
            if err {
                eprintln!("{line}");
            } else {
                crate::progress::suspend(|| println!("{line}"));
            }
        }
    }
}

/// A line on stdout, kept in `$said`.
macro_rules! out {
    ($said:expr, $($t:tt)*) => { $said.out(format!($($t)*)) };
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
    // Every file named or in a directory named, in order (a directory that cannot be listed is
    // an error in its place), then checked on every core.
    let items: Vec<Result<PathBuf, String>> = traces
        .iter()
        .flat_map(|path| match input::files(path) {
            Ok(files) => files.into_iter().map(Ok).collect(),
            Err(e) => vec![Err(e)],
        })
        .collect();
    let checked = clxfer::trace::many::each(&items, |item| {
        let mut said = Said::default();
        let code = match item {
            Ok(file) => check_file(file, &rules, &baseline, &mut said),
            Err(e) => {
                said.err(e.clone());
                2
            }
        };
        (code, said)
    });
    let mut code = 0u8;
    for (c, said) in checked {
        said.print();
        code = code.max(c);
    }
    ExitCode::from(code)
}

/// One file: its Perfetto rules (a trace's), then the user's rules.
fn check_file(path: &Path, rules: &[Rule], baseline: &[Report], said: &mut Said) -> u8 {
    let is_report = match input::is_report(path) {
        Ok(r) => r,
        Err(e) => {
            said.err(e);
            return 2;
        }
    };
    let mut code = 0;
    if !is_report {
        code = perfetto(path, said);
        if code == 2 || rules.is_empty() {
            return code;
        }
    } else if rules.is_empty() {
        out!(
            said,
            "{}: a report, not a trace: nothing of Perfetto's to check",
            path.display()
        );
        return 0;
    }
    let reports = match input::reports(path) {
        Ok((runs, _)) => runs.into_iter().flatten().collect::<Vec<_>>(),
        Err(e) => {
            said.err(e);
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
            out!(
                said,
                "{who}: {n} rule{} held",
                if n == 1 { "" } else { "s" }
            );
        }
        for b in &broken {
            out!(said, "{who}: broken: {b}");
        }
        if !broken.is_empty() {
            code = code.max(1);
        }
    }
    code
}

/// The trace against Perfetto's importer: 0 ok, 1 violations, 2 not a trace.
fn perfetto(path: &Path, said: &mut Said) -> u8 {
    match clxfer::trace::check::check_file(path) {
        Err(e) => {
            said.err(e.to_string());
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
                    said,
                    "{}: ok: {} events, {} slices, {} flows; {shape}",
                    path.display(),
                    r.events,
                    r.slices,
                    r.flows
                );
                return 0;
            }
            out!(
                said,
                "{}: {} violation(s) in {} events; {shape}",
                path.display(),
                r.violation_count,
                r.events
            );
            for v in r.violations.iter().take(SHOWN) {
                out!(said, "  {v}");
            }
            let shown = r.violations.len().min(SHOWN);
            if r.violation_count > shown {
                out!(said, "  … and {} more", r.violation_count - shown);
            }
            1
        }
    }
}
