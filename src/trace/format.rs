//! The formats a trace is written and read in, in one place: each one's name (`CLXFER_FORMAT`),
//! file extensions, how its bytes are told apart, its serialiser (an [`Emit`]) and its decoder.
//! Every writer (the trace writer, `convert`, `merge`) and every reader (`crate::trace::read`)
//! goes through here, so a new format is its serialiser, its decoder, and a variant below
//! (docs/design.md says how).

use crate::event::{Emit, Ended, Read};
use crate::json::{read as json, write::Json};
use crate::perfetto::{decode, emit::Proto};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Chrome's JSON trace format: Perfetto, DevTools and `chrome://tracing` open it.
    #[default]
    Json,
    /// Perfetto's protobuf: about a third the size; Perfetto opens it, DevTools does not.
    Perfetto,
}

/// What a writer of traces does with the serialiser of the format asked for: the one match over
/// formats that picks a serialiser ([`Format::write_with`]).
pub trait Writer {
    type Out;
    fn with<E: Emit + 'static>(self) -> Self::Out;
}

impl Format {
    pub const ALL: [Format; 2] = [Format::Json, Format::Perfetto];
    /// Their names, as `CLXFER_FORMAT` takes them.
    pub const NAMES: [&'static str; 2] = ["json", "perfetto"];

    pub fn name(self) -> &'static str {
        Format::NAMES[self as usize]
    }

    pub fn named(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The extensions of its files: clxfer names its own traces with the first.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Format::Json => &["json"],
            Format::Perfetto => &["pftrace", "perfetto-trace", "pb"],
        }
    }

    /// The format a file's name says (JSON unless its extension is another format's).
    pub fn of_name(path: &Path) -> Format {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        (Format::ALL.into_iter())
            .find(|f| f.extensions().contains(&ext))
            .unwrap_or_default()
    }

    /// The format a trace's bytes are in (JSON unless they are another format's).
    pub fn of_bytes(b: &[u8]) -> Format {
        if decode::is_protobuf(b) {
            Format::Perfetto
        } else {
            Format::Json
        }
    }

    /// Hands each event of `b` to `f`, in order, and how far it has read to `read`; how the
    /// trace ended, or why it is not one in this format.
    pub fn decode(
        self,
        b: &[u8],
        mut f: impl FnMut(Read),
        read: impl FnMut(usize),
    ) -> Result<Ended, String> {
        match self {
            Format::Json => json::events(b, f, read),
            Format::Perfetto => decode::events(b, |e| f(Ok(e)), read)
                .map(|s| Ended {
                    closed: !s.truncated,
                    truncated: s.truncated,
                })
                .map_err(|e| format!("not a Perfetto protobuf trace: {}", e.0)),
        }
    }

    /// `w` done with this format's serialiser.
    pub fn write_with<W: Writer>(self, w: W) -> W::Out {
        match self {
            Format::Json => w.with::<Json>(),
            Format::Perfetto => w.with::<Proto>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_extensions_and_bytes_agree() {
        for f in Format::ALL {
            assert_eq!(Format::named(f.name()), Some(f));
            for ext in f.extensions() {
                assert_eq!(Format::of_name(Path::new(&format!("t.{ext}"))), f);
            }
        }
        assert_eq!(Format::of_bytes(b"[{\"ph\":\"X\"}]"), Format::Json);
        assert_eq!(Format::of_name(Path::new("t.txt")), Format::Json);
    }
}
