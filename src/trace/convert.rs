//! `clxfer convert`: a trace from one format to the other, JSON (`.json`) or Perfetto's protobuf
//! (`.pftrace`, `.perfetto-trace`), event by event (any size): each event read ([`Event`]) and
//! written again by the other format's serialiser ([`Emit`]). What is compact stays compact,
//! what repeats stays said once (each format's readers expand it alike).

use super::format::{Format, Writer};
use super::read::{ReadError, read_file_with};
use crate::event::{self, Emit, Heads};
use std::io::Write;
use std::path::Path;

/// Bytes of packets gathered before a write.
const FLUSH_AT: usize = 1 << 20;

/// What a conversion wrote.
#[derive(Debug, Clone, Copy)]
pub struct Converted {
    pub events: usize,
    /// The input had its end event: it was not cut short (nor then is the output).
    pub ended: bool,
}

/// Converts `input` (any format) into `out`, in the format `out_name` names.
pub fn convert_file(input: &Path, out_name: &Path, out: impl Write) -> Result<Converted, String> {
    Format::of_name(out_name).write_with(Convert { input, out })
}

/// A conversion waiting for its format's serialiser.
struct Convert<'a, W> {
    input: &'a Path,
    out: W,
}

impl<W: Write> Writer for Convert<'_, W> {
    type Out = Result<Converted, String>;
    fn with<E: Emit + 'static>(self) -> Self::Out {
        convert_with::<E>(self.input, self.out)
    }
}

/// [`convert_file`] into the format `E` writes. Events that are not events (`clxfer check` says
/// why) are left out.
fn convert_with<E: Emit>(input: &Path, mut out: impl Write) -> Result<Converted, String> {
    let mut j = E::default();
    j.start(0, FLUSH_AT);
    let mut heads = Heads::default();
    let mut failed: Option<std::io::Error> = None;
    let (mut n, mut ended) = (0, false);
    let end = crate::vocab::schema::TRACE_END;
    let shape = read_file_with(input, |_, e| {
        let Ok(e) = e else { return };
        ended |= e.name == end;
        event::write(&mut j, &e, &mut heads);
        n += 1;
        if j.bytes().len() >= FLUSH_AT && failed.is_none() {
            failed = out.write_all(j.bytes()).err();
            j.clear();
        }
    });
    j.finish();
    if failed.is_none() {
        failed = out.write_all(j.bytes()).err();
    }
    shape.map_err(|ReadError(e)| e)?;
    match failed {
        Some(e) => Err(e.to_string()),
        None => Ok(Converted { events: n, ended }),
    }
}
