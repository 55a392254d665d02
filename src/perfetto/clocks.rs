//! A sequence's clocks as a reader resolves them: the snapshot's clocks (their readings at one
//! instant, and which are incremental), the sequence's default clock, and each packet's
//! timestamp turned into nanoseconds on clxfer's own clock (its start is 0). An incremental
//! clock's timestamps are deltas from the last one on it, as Perfetto's clock tracker reads them.

use super::fields::{clock as c, packet as p};
use super::wire::{self, Malformed};
use rustc_hash::FxHashMap;

#[derive(Clone, Copy)]
struct Clock {
    /// Its reading at the snapshot.
    at_snapshot: u64,
    incremental: bool,
    /// An incremental clock's last value.
    last: u64,
}

#[derive(Default)]
pub struct Clocks {
    clocks: FxHashMap<u64, Clock>,
    default: Option<u64>,
}

impl Clocks {
    /// Reads a packet's `ClockSnapshot` and `TracePacketDefaults` (either may be `None`).
    pub fn packet(
        &mut self,
        snapshot: Option<&[u8]>,
        defaults: Option<&[u8]>,
    ) -> Result<(), Malformed> {
        for field in wire::fields(snapshot.unwrap_or_default()) {
            let (c::SNAPSHOT_CLOCKS, v) = field? else {
                continue;
            };
            let (mut id, mut at, mut incremental) = (0, 0, false);
            for inner in wire::fields(v.bytes()) {
                match inner? {
                    (c::CLOCK_ID, v) => id = v.uint(),
                    (c::CLOCK_TIMESTAMP, v) => at = v.uint(),
                    (c::CLOCK_INCREMENTAL, v) => incremental = v.uint() != 0,
                    _ => {}
                }
            }
            let clock = Clock {
                at_snapshot: at,
                incremental,
                last: at,
            };
            self.clocks.insert(id, clock);
        }
        for field in wire::fields(defaults.unwrap_or_default()) {
            if let (c::DEFAULTS_CLOCK_ID, v) = field? {
                self.default = Some(v.uint());
            }
        }
        Ok(())
    }

    /// A packet's time on clxfer's clock: its `timestamp` on the clock it names
    /// (`timestamp_clock_id`), or on the sequence's default; a clock the snapshot never named
    /// gives `None` (a timestamp clxfer did not write).
    pub fn resolve(&mut self, ts: u64, clock: Option<u64>) -> Option<u64> {
        let id = clock.or(self.default).unwrap_or(c::CLXFER);
        let base = self.clocks.get(&c::CLXFER).map_or(0, |c| c.at_snapshot);
        let clock = self.clocks.get_mut(&id)?;
        let value = if clock.incremental {
            clock.last = clock.last.wrapping_add(ts);
            clock.last
        } else {
            ts
        };
        Some(value.wrapping_sub(clock.at_snapshot).wrapping_add(base))
    }
}

/// The packet fields [`Clocks`] reads: (timestamp, its clock, snapshot, defaults).
pub type Stamp<'a> = (Option<u64>, Option<u64>, Option<&'a [u8]>, Option<&'a [u8]>);

/// Whether a packet field is one of the [`Stamp`]'s, kept in `stamp`.
pub fn field<'a>(stamp: &mut Stamp<'a>, number: u32, v: &wire::Value<'a>) -> bool {
    match number {
        p::TIMESTAMP => stamp.0 = Some(v.uint()),
        p::TIMESTAMP_CLOCK_ID => stamp.1 = Some(v.uint()),
        p::CLOCK_SNAPSHOT => stamp.2 = Some(v.bytes()),
        p::DEFAULTS => stamp.3 = Some(v.bytes()),
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perfetto::encode::{Encoder, Scope};
    use crate::perfetto::fields::{self as f, event as ev};
    use crate::perfetto::intern::Label;

    /// Each packet's time read back as written, in order and out of order.
    #[test]
    fn deltas_and_absolute_times_read_back_as_written() {
        let mut e = Encoder::new(5_000_000);
        let track = e.track(Scope::Thread, (1, 2));
        let times = [10, 10, 250, 1_000_000_000, 90, 1_000_000_001, 0, 7];
        let label = (Label::Text("x"), Label::Text("c"));
        for &t in &times {
            e.open_event(ev::INSTANT, track, t, label);
            e.close_event(|_| {});
        }
        let mut clocks = Clocks::default();
        let mut read = Vec::new();
        for packet in wire::fields(&e.out) {
            let (f::TRACE_PACKET, packet) = packet.unwrap() else {
                panic!("not a packet")
            };
            let mut stamp: Stamp = (None, None, None, None);
            for x in wire::fields(packet.bytes()) {
                let (n, v) = x.unwrap();
                field(&mut stamp, n, &v);
            }
            clocks.packet(stamp.2, stamp.3).unwrap();
            if let Some(ts) = stamp.0 {
                read.push(clocks.resolve(ts, stamp.1).unwrap());
            }
        }
        assert_eq!(read, times);
        assert_eq!(clocks.resolve(1, Some(99)), None, "a clock never described");
    }
}
