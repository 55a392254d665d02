//! What each kind of option accepts: a value checked against it ([`validate`]), and the same
//! said for people (the README's options table, `clxfer doctor`).

use super::{Kind, OPTIONS, OptSpec};
use std::fmt::Write as _;

/// The value to use, or the accepted values for the warning.
pub(super) fn validate(spec: &OptSpec, raw: &str) -> Result<String, String> {
    let value = raw.trim();
    match spec.kind {
        Kind::Choice(words) => {
            let lower = value.to_ascii_lowercase();
            words
                .iter()
                .find(|w| **w == lower)
                .map(|w| w.to_string())
                .ok_or_else(|| words.join("|"))
        }
        Kind::Path if value.is_empty() => Err("a non-empty file name or path".into()),
        Kind::Path => Ok(value.to_string()),
        Kind::EntryPoint
            if value.is_empty()
                || (value.starts_with("cl")
                    && value.chars().all(|c| c.is_ascii_alphanumeric())) =>
        {
            Ok(value.to_string())
        }
        Kind::EntryPoint => Err("an OpenCL function name such as clEnqueueWriteBuffer".into()),
        Kind::Millis | Kind::Count => {
            value
                .parse::<u64>()
                .map(|n| n.to_string())
                .map_err(|_| match spec.kind {
                    Kind::Millis => "a whole number of milliseconds".into(),
                    _ => "a whole number".into(),
                })
        }
        Kind::Bytes if value.is_empty() => Ok(String::new()),
        Kind::Bytes => crate::units::parse_bytes(value)
            .filter(|&n| n > 0)
            .map(|n| n.to_string())
            .ok_or_else(|| "a size with its unit, such as 4GiB, 512MiB or 16GB".into()),
        Kind::Mebibytes => value
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=4096).contains(n))
            .map(|n| n.to_string())
            .ok_or_else(|| "a whole number of MiB from 1 to 4096".into()),
    }
}

/// How a value is written in the docs table.
pub fn accepted(spec: &OptSpec) -> String {
    match spec.kind {
        Kind::Choice(words) => words
            .iter()
            .map(|w| format!("`{w}`"))
            .collect::<Vec<_>>()
            .join(" \\| "),
        Kind::Path => "path".into(),
        Kind::EntryPoint => "entry point name".into(),
        Kind::Millis => "milliseconds".into(),
        Kind::Count => "a whole number".into(),
        Kind::Mebibytes => "MiB (1–4096)".into(),
        Kind::Bytes => "a size (`4GiB`)".into(),
    }
}

/// The README's options table, generated from [`OPTIONS`] (a test checks README.md holds it).
pub fn markdown_table() -> String {
    let mut out =
        String::from("| Variable | Values | Default | What it does |\n|---|---|---|---|\n");
    for spec in OPTIONS {
        let default = if spec.default.is_empty() {
            "(unset)".to_string()
        } else {
            format!("`{}`", spec.default)
        };
        let doc = spec.doc.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            spec.var,
            accepted(spec),
            default,
            doc
        );
    }
    out
}
