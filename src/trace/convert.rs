//! `clxfer convert`: a trace from one format to the other, JSON (`.json`) or Perfetto's protobuf
//! (`.pftrace`, `.perfetto-trace`), event by event (any size): what is compact stays compact,
//! what repeats stays said once (each format's readers expand it alike).

use super::read::{ReadError, read_file_with};
use crate::perfetto::encode::Encoder;
use crate::perfetto::replay;
use std::io::Write;
use std::path::Path;

/// Bytes of packets gathered before a write.
const FLUSH_AT: usize = 1 << 20;

/// Whether `path` names a protobuf trace (by its extension).
pub fn is_protobuf_name(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("pftrace" | "perfetto-trace" | "pb")
    )
}

/// What a conversion wrote.
#[derive(Debug, Clone, Copy)]
pub struct Converted {
    pub events: usize,
    /// The input had its end event: it was not cut short (nor then is the output).
    pub ended: bool,
}

/// Converts `input` (either format) into `out`, in the format `out_name` names.
pub fn convert_file(
    input: &Path,
    out_name: &Path,
    mut out: impl Write,
) -> Result<Converted, String> {
    let mut failed: Option<std::io::Error> = None;
    let mut n = 0;
    let mut ended = false;
    let end = crate::vocab::schema::TRACE_END;
    let result = if is_protobuf_name(out_name) {
        let mut enc = Encoder::new(0);
        let shape = read_file_with(input, |_, e| {
            ended |= e["name"] == end;
            replay::event(&mut enc, &e);
            n += 1;
            if enc.out.len() >= FLUSH_AT && failed.is_none() {
                failed = out.write_all(&enc.out).err();
                enc.out.clear();
            }
        });
        if failed.is_none() {
            failed = out.write_all(&enc.out).err();
        }
        shape
    } else {
        let shape = read_file_with(input, |_, e| {
            ended |= e["name"] == end;
            if failed.is_some() {
                return;
            }
            let sep: &[u8] = if n == 0 { b"[\n" } else { b",\n" };
            failed = out
                .write_all(sep)
                .and_then(|_| serde_json::to_writer(&mut out, &e).map_err(std::io::Error::other))
                .err();
            n += 1;
        });
        if failed.is_none() {
            failed = out
                .write_all(if n == 0 { b"[\n]\n" } else { b"\n]\n" })
                .err();
        }
        shape
    };
    result.map_err(|ReadError(e)| e)?;
    match failed {
        Some(e) => Err(e.to_string()),
        None => Ok(Converted { events: n, ended }),
    }
}
