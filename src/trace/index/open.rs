//! A trace file indexed, whichever its format: mapped (not copied), read on `threads` threads,
//! its parts put together; the map is kept, for the details read again on a click.

use super::build::{Index, build};
use super::details::{Source, details};
use crate::trace::format::Format;
use std::path::Path;
use std::sync::atomic::AtomicU64;

/// A trace file and its index.
pub struct Indexed {
    pub index: Index,
    pub source: Source,
    pub format: Format,
    map: Option<memmap2::Mmap>,
}

impl Indexed {
    /// Slice `i` of track `track`, read back whole with its command's other slice
    /// ([`details`]).
    pub fn details(&self, track: usize, i: usize) -> Result<serde_json::Value, String> {
        let b: &[u8] = self.map.as_deref().unwrap_or(&[]);
        details(&self.index, &self.source, b, track, i)
    }
}

/// The index of the trace at `path`, read on `threads` threads; `read` counts the bytes read.
pub fn open(path: &Path, threads: usize, read: &AtomicU64) -> Result<Indexed, String> {
    let map = crate::trace::read::mapped(path).map_err(|e| e.0)?;
    let b: &[u8] = map.as_deref().unwrap_or(&[]);
    let format = Format::of_bytes(b);
    let (parts, source) = match format {
        Format::Json => (super::json::read(b, threads, read)?, Source::Json),
        Format::Perfetto => {
            let (part, tables) = super::proto::read(b, read)?;
            (vec![part], Source::Perfetto(tables))
        }
    };
    let index = build(parts, threads);
    if index.events == 0 {
        return Err(format!("{}: no events", path.display()));
    }
    Ok(Indexed {
        index,
        source,
        format,
        map,
    })
}
