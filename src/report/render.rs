//! The report as text (aligned columns, no line over [`WIDTH`]), Markdown or JSON.
//!
//! In layers: `tables.rs` (aligned columns, tables, wrapped lines) at the bottom; `device.rs`
//! (what is said of one device) above it; `text.rs` and `markdown.rs` (the whole report) on top.

mod device;
mod host;
mod markdown;
mod tables;
mod text;

pub use tables::{WIDTH, wrapped};

use super::Report;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

/// What `--format` asks of `clxfer report` and `clxfer diff`: a rendering of the report, or CSV
/// tables; parsed once, by the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Report(Format),
    Csv,
}

impl Output {
    pub const WORDS: &'static [&'static str] = &["text", "json", "md", "csv"];

    pub fn parse(word: &str) -> Option<Output> {
        match word {
            "csv" => Some(Output::Csv),
            w => Format::parse(w).map(Output::Report),
        }
    }
}

impl Format {
    pub fn parse(word: &str) -> Option<Format> {
        match word {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            "md" => Some(Format::Markdown),
            _ => None,
        }
    }

    /// By a file name's extension: `.json`, `.md`, else text.
    pub fn for_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Format::Json,
            Some("md") => Format::Markdown,
            _ => Format::Text,
        }
    }
}

impl Report {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => text::text(self),
            Format::Markdown => markdown::markdown(self),
            Format::Json => {
                let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
                s.push('\n');
                s
            }
        }
    }
}
