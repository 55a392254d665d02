//! `clxfer diff`: two runs of a program compared.

use crate::fail;
use clxfer::compare::{self, input, render};
use clxfer::report::Output;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// `--pair BEFORE=AFTER`: two program names.
pub fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((b, a)) if !b.is_empty() && !a.is_empty() => Ok((b.into(), a.into())),
        _ => Err(format!("`{s}`: expected BEFORE=AFTER, two program names")),
    }
}

pub fn diff(before: &Path, after: &Path, format: Output, pairs: &[(String, String)]) -> ExitCode {
    let side = |p: &Path| {
        input::reports(p).map(|(reports, warnings)| {
            for w in warnings {
                eprintln!("clxfer: warning: {w}");
            }
            reports
        })
    };
    let (b, a) = match (side(before), side(after)) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    let d = compare::diff(&b, &a, pairs);
    let text = render::render(&d, format);
    crate::progress::suspend(|| std::io::stdout().write_all(text.as_bytes())).ok();
    ExitCode::SUCCESS
}
