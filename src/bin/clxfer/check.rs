//! `clxfer check`: traces against every rule Perfetto's JSON importer imposes.

use std::path::PathBuf;
use std::process::ExitCode;

/// Shown violations per trace; the rest are counted.
const SHOWN: usize = 50;

pub fn check(traces: &[PathBuf]) -> ExitCode {
    let mut code = 0u8;
    for path in traces {
        match clxfer::trace::check::check_file(path) {
            Err(e) => {
                eprintln!("clxfer: {e}");
                code = 2;
            }
            Ok(r) => {
                let shape = match (r.closed, r.truncated) {
                    (true, _) => "closed",
                    (false, false) => "not closed (the program did not exit normally?)",
                    (false, true) => "cut short: the last event is incomplete and ignored",
                };
                if r.ok() {
                    println!(
                        "{}: ok: {} events, {} slices, {} flows; {shape}",
                        path.display(),
                        r.events,
                        r.slices,
                        r.flows
                    );
                } else {
                    println!(
                        "{}: {} violation(s) in {} events; {shape}",
                        path.display(),
                        r.violation_count,
                        r.events
                    );
                    for v in r.violations.iter().take(SHOWN) {
                        println!("  {v}");
                    }
                    let shown = r.violations.len().min(SHOWN);
                    if r.violation_count > shown {
                        println!("  … and {} more", r.violation_count - shown);
                    }
                    code = code.max(1);
                }
            }
        }
    }
    ExitCode::from(code)
}
