//! The rules of Perfetto's protobuf import that a trace can break, checked (`clxfer check`):
//! every packet on a sequence that starts afresh; every interned name, category, annotation
//! name and string defined on its sequence before a packet uses it, and such a packet saying it
//! needs the sequence's state; every timestamp on a clock the sequence described (deltas on an
//! incremental one); every track described before an event is put on it; each slice's end on the
//! track of its begin, and not before it; each flow begun once and ended once. A file cut short in its
//! last packet (a killed program) is checked up to it, and its open slices and half flows are not
//! held against it.

use super::clocks::{self, Clocks, Stamp};
use super::fields::{
    self as f, annotation as a, event as ev, interned as i, packet as p, track as t,
};
use super::wire::{self, Malformed};
use rustc_hash::{FxHashMap, FxHashSet};

#[derive(Default)]
struct Sequence {
    /// Interned ids by table (the `InternedData` field number).
    iids: FxHashSet<(u32, u64)>,
    cleared: bool,
    clocks: Clocks,
}

#[derive(Default)]
struct Checker {
    sequences: FxHashMap<u64, Sequence>,
    tracks: FxHashSet<u64>,
    /// The begin times of the slices open on each track.
    open: FxHashMap<u64, Vec<u64>>,
    flows: FxHashMap<u64, (u32, u32)>,
    violations: Vec<String>,
    count: usize,
}

/// The violations found (the first `keep`), and how many there are in all.
pub fn check(b: &[u8], keep: usize) -> (Vec<String>, usize) {
    let mut c = Checker::default();
    let mut whole = true;
    for (n, field) in wire::fields(b).enumerate() {
        match field {
            Ok((f::TRACE_PACKET, packet)) => {
                if let Err(e) = c.packet(n, packet.bytes(), keep) {
                    c.say(keep, || format!("packet {n}: malformed: {}", e.0));
                }
            }
            Ok(_) => c.say(keep, || format!("field {n}: not a packet")),
            Err(_) => whole = false,
        }
    }
    if whole {
        let open: usize = c.open.values().map(Vec::len).sum();
        if open > 0 {
            c.say(keep, || format!("{open} slice(s) begun and never ended"));
        }
        let half = c.flows.values().filter(|&&(s, e)| s != 1 || e != 1).count();
        if half > 0 {
            c.say(keep, || {
                format!("{half} flow(s) not begun once and ended once")
            });
        }
    }
    (c.violations, c.count)
}

impl Checker {
    fn say(&mut self, keep: usize, text: impl FnOnce() -> String) {
        if self.violations.len() < keep {
            self.violations.push(text());
        }
        self.count += 1;
    }

    fn packet(&mut self, n: usize, b: &[u8], keep: usize) -> Result<(), Malformed> {
        let (mut seq, mut flags, mut first) = (None, 0, false);
        let (mut interned, mut event, mut track) = (None, None, None);
        let mut stamp: Stamp = (None, None, None, None);
        for field in wire::fields(b) {
            let (number, v) = field?;
            if clocks::field(&mut stamp, number, &v) {
                continue;
            }
            match (number, v) {
                (p::SEQUENCE_ID, v) => seq = Some(v.uint()),
                (p::SEQUENCE_FLAGS, v) => flags = v.uint(),
                (p::FIRST_ON_SEQUENCE, v) => first = v.uint() != 0,
                (p::INTERNED_DATA, v) => interned = Some(v.bytes()),
                (p::TRACK_EVENT, v) => event = Some(v.bytes()),
                (p::TRACK_DESCRIPTOR, v) => track = Some(v.bytes()),
                _ => {}
            }
        }
        let Some(seq) = seq else {
            self.say(keep, || format!("packet {n}: no sequence id"));
            return Ok(());
        };
        let s = self.sequences.entry(seq).or_default();
        if flags & p::INCREMENTAL_STATE_CLEARED != 0 {
            s.iids.clear();
            s.cleared = true;
        } else if first && !s.cleared {
            self.say(keep, || {
                format!("packet {n}: the sequence's first packet does not clear its state")
            });
        }
        if let Some(b) = interned {
            for field in wire::fields(b) {
                let (table, entry) = field?;
                for x in wire::fields(entry.bytes()) {
                    if let (i::IID, v) = x? {
                        self.sequences
                            .entry(seq)
                            .or_default()
                            .iids
                            .insert((table, v.uint()));
                    }
                }
            }
        }
        if let Some(b) = track {
            for field in wire::fields(b) {
                if let (t::UUID, v) = field? {
                    self.tracks.insert(v.uint());
                }
            }
        }
        let s = self.sequences.entry(seq).or_default();
        s.clocks.packet(stamp.2, stamp.3)?;
        let ts = stamp.0.and_then(|t| s.clocks.resolve(t, stamp.1));
        if stamp.0.is_some() && ts.is_none() {
            self.say(keep, || {
                format!("packet {n}: a timestamp on a clock its sequence never described")
            });
        }
        if let Some(b) = event {
            self.event(n, (seq, ts.unwrap_or(0)), flags, b, keep)?;
        }
        Ok(())
    }

    fn event(
        &mut self,
        n: usize,
        (seq, ts): (u64, u64),
        flags: u64,
        b: &[u8],
        keep: usize,
    ) -> Result<(), Malformed> {
        let (mut kind, mut uuid, mut refs) = (0, None, Vec::new());
        for field in wire::fields(b) {
            match field? {
                (ev::TYPE, v) => kind = v.uint(),
                (ev::TRACK_UUID, v) => uuid = Some(v.uint()),
                (ev::NAME_IID, v) => refs.push((i::NAMES, v.uint())),
                (ev::CATEGORY_IIDS, v) => refs.push((i::CATEGORIES, v.uint())),
                (ev::DEBUG_ANNOTATIONS, v) => annotation_refs(v.bytes(), &mut refs)?,
                (ev::FLOW_IDS, v) => self.flows.entry(v.uint()).or_default().0 += 1,
                (ev::TERMINATING_FLOW_IDS, v) => self.flows.entry(v.uint()).or_default().1 += 1,
                _ => {}
            }
        }
        if !refs.is_empty() && !self.sequences.entry(seq).or_default().cleared {
            self.say(keep, || {
                format!("packet {n}: uses the sequence's state before the sequence is cleared")
            });
        }
        if !refs.is_empty() && flags & p::NEEDS_INCREMENTAL_STATE == 0 {
            self.say(keep, || format!("packet {n}: refers to interned names without saying it needs the sequence's state"));
        }
        let known = &self.sequences.entry(seq).or_default().iids;
        let missing: Vec<_> = refs.into_iter().filter(|r| !known.contains(r)).collect();
        for (table, iid) in missing {
            self.say(keep, || {
                format!("packet {n}: interned id {iid} (table {table}) used before it is defined")
            });
        }
        let Some(uuid) = uuid.filter(|u| self.tracks.contains(u)) else {
            self.say(keep, || {
                format!("packet {n}: an event on a track not described before it")
            });
            return Ok(());
        };
        match kind {
            ev::SLICE_BEGIN => self.open.entry(uuid).or_default().push(ts),
            ev::SLICE_END => match self.open.get_mut(&uuid).and_then(Vec::pop) {
                Some(begin) if begin > ts => self.say(keep, || {
                    format!("packet {n}: a slice that ends before it begins")
                }),
                Some(_) => {}
                None => self.say(keep, || {
                    format!("packet {n}: a slice's end with no begin on its track")
                }),
            },
            _ => {}
        }
        Ok(())
    }
}

/// The interned ids an annotation (and what it holds) refers to.
fn annotation_refs(b: &[u8], refs: &mut Vec<(u32, u64)>) -> Result<(), Malformed> {
    for field in wire::fields(b) {
        match field? {
            (a::NAME_IID, v) => refs.push((i::ANNOTATION_NAMES, v.uint())),
            (a::STRING_IID, v) => refs.push((i::STRINGS, v.uint())),
            (a::DICT | a::ARRAY, v) => annotation_refs(v.bytes(), refs)?,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perfetto::encode::{Encoder, Scope};
    use crate::perfetto::intern::Label;

    /// (what is done to a good trace, a violation it must cause; "" for none).
    #[test]
    fn each_rule_is_checked() {
        let good = || {
            let mut e = Encoder::new(0);
            e.name_thread(7, 8, Some("main"), None);
            let track = e.track(Scope::Thread, (7, 8));
            let label = |name| (Label::Text(name), Label::Text("call"));
            e.open_event(ev::SLICE_BEGIN, track, 10, label("clFoo"));
            e.key("bytes").u64(4096);
            e.close_event(|_| {});
            e.slice_end(track, 15);
            e.flow(label("enqueue"), true, 1, (7, 8), 10);
            e.flow(label("enqueue"), false, 1, (7, 8), 12);
            e.out
        };
        let packets = |b: &[u8]| -> Vec<Vec<u8>> {
            wire::fields(b)
                .map(|f| f.unwrap().1.bytes().to_vec())
                .collect()
        };
        let join = |ps: &[Vec<u8>]| -> Vec<u8> {
            let mut out = Vec::new();
            for p in ps {
                wire::bytes(&mut out, f::TRACE_PACKET, p);
            }
            out
        };
        let all = packets(&good());
        // Without the packets that start a sequence.
        let unstarted: Vec<Vec<u8>> = (all.iter())
            .filter(|p| !wire::fields(p).any(|f| f.unwrap().0 == p::FIRST_ON_SEQUENCE))
            .cloned()
            .collect();
        let backwards = {
            let mut e = Encoder::new(0);
            let track = e.track(Scope::Thread, (7, 8));
            let label = (Label::Text("clFoo"), Label::Text("call"));
            e.open_event(ev::SLICE_BEGIN, track, 10, label);
            e.close_event(|_| {});
            e.slice_end(track, 5);
            e.out
        };
        let mut stray = Vec::new();
        wire::uint(&mut stray, p::TIMESTAMP, 3);
        wire::uint(&mut stray, p::TIMESTAMP_CLOCK_ID, 99);
        wire::uint(&mut stray, p::SEQUENCE_ID, 1);
        assert_eq!(check(&good(), 10).1, 0, "{:?}", check(&good(), 10).0);
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            (
                "no first packets",
                join(&unstarted),
                "before the sequence is cleared",
            ),
            (
                "no descriptor",
                join(&[&all[..1], &all[2..]].concat()),
                "track not described",
            ),
            (
                "no end",
                join(&[&all[..4], &all[5..]].concat()),
                "never ended",
            ),
            (
                "no flow end",
                join(&all[..all.len() - 1]),
                "flow(s) not begun once",
            ),
            ("ends before it begins", backwards, "ends before it begins"),
            (
                "a clock never described",
                join(&[all.clone(), vec![stray]].concat()),
                "never described",
            ),
            (
                "cut in its last packet",
                good()[..good().len() - 3].to_vec(),
                "",
            ),
        ];
        for (what, bytes, want) in cases {
            let (said, count) = check(&bytes, 10);
            if want.is_empty() {
                assert_eq!(count, 0, "{what}: {said:?}");
            } else {
                assert!(said.iter().any(|s| s.contains(want)), "{what}: {said:?}");
            }
        }
    }
}
