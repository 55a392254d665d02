//! `clxfer check`: every rule of perfetto-json.md that a trace can break, checked. A trace that
//! passes is drawn by Perfetto as written: no dropped or mis-nested slices, every arrow bound.

use super::read::{Read, ReadError};
use crate::event::{End, FlowId, Kind};
use serde_json::{Map, Value};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::path::Path;

/// The outcome for one trace.
#[derive(Debug, Default)]
pub struct Report {
    pub events: usize,
    pub slices: usize,
    pub flows: usize,
    pub closed: bool,
    pub truncated: bool,
    /// One line per violation, `event N: what`: the first [`KEPT`].
    pub violations: Vec<String>,
    /// How many violations there are in all.
    pub violation_count: usize,
}

/// Violations kept as text; the rest are only counted (a hostile file may break a rule per event).
pub const KEPT: usize = 1000;

impl Report {
    pub fn ok(&self) -> bool {
        self.violation_count == 0
    }

    fn violation(&mut self, text: impl FnOnce() -> String) {
        keep(&mut self.violations, &mut self.violation_count, text);
    }

    /// Violations found apart (sorted there), after those already kept.
    fn add(&mut self, texts: Vec<String>, count: usize) {
        let room = KEPT.saturating_sub(self.violations.len());
        self.violations.extend(texts.into_iter().take(room));
        self.violation_count += count;
    }
}

/// Counts a violation, and keeps its text while fewer than [`KEPT`] are kept.
fn keep(texts: &mut Vec<String>, count: &mut usize, text: impl FnOnce() -> String) {
    if texts.len() < KEPT {
        texts.push(text());
    }
    *count += 1;
}

/// Checks a file event by event (any size: see [`super::read::read_file_with`]).
pub fn check_file(path: &Path) -> Result<Report, ReadError> {
    // Mapped once for both passes.
    let map = super::read::mapped(path)?;
    let bytes: &[u8] = map.as_deref().unwrap_or(&[]);
    let r = check(bytes).map_err(|e| ReadError(format!("{}: {e}", path.display())));
    super::read::file_read(bytes.len());
    r
}

/// Checks a trace's bytes. A protobuf trace is checked twice: against the rules of Perfetto's
/// protobuf import (`crate::perfetto::rules`), and as the events it stands for against those
/// below.
pub fn check(bytes: &[u8]) -> Result<Report, ReadError> {
    let mut c = Checker::default();
    let shape = super::read::parse_with(bytes, |i, e| c.event(i, e))?;
    let mut r = c.finish(shape.closed, shape.truncated);
    if crate::perfetto::decode::is_protobuf(bytes) {
        let (texts, count) = crate::perfetto::rules::check(bytes, KEPT);
        r.add(texts, count);
    }
    Ok(r)
}

/// JSON numbers are exact up to 2^53; larger integers lose bits (Perfetto: above int64, doubles).
const EXACT: f64 = crate::vocab::schema::EXACT as f64;

#[derive(Clone, Copy)]
struct Slice {
    index: usize,
    start: u64,
    end: u64,
    cat: u32,
}

/// A flow end: (event index, pid, tid, ts in ns, category).
type FlowEnd = (usize, u32, u32, u64, u32);

/// A flow's starts and ends: one of each, inline, when the trace is right.
type FlowEnds = (SmallVec<[FlowEnd; 1]>, SmallVec<[FlowEnd; 1]>);

/// Checks events one at a time (a trace of any size streams through it); what it keeps per event
/// is small: 32 bytes per slice, one id and two ends per flow, categories once each.
#[derive(Default)]
pub struct Checker {
    r: Report,
    /// (pid, tid) → slices.
    tracks: HashMap<(u32, u32), Vec<Slice>>,
    /// flow id → its starts and ends.
    flows: HashMap<String, FlowEnds>,
    /// Category → its number in slices and flow ends.
    cats: HashMap<String, u32>,
}

impl Checker {
    fn bad(&mut self, i: usize, what: String) {
        self.r.violation(|| format!("event {i}: {what}"));
    }

    fn cat(&mut self, cat: &str) -> u32 {
        if let Some(&n) = self.cats.get(cat) {
            return n;
        }
        let n = self.cats.len() as u32;
        self.cats.insert(cat.to_string(), n);
        n
    }

    /// Event number `i`, or why it is not an event ([`crate::event::from_json`] says).
    pub fn event(&mut self, i: usize, e: Read) {
        self.r.events = self.r.events.max(i + 1);
        let e = match e {
            Ok(e) => e,
            Err(why) => return self.bad(i, why),
        };
        if let Some(path) = inexact(&e.args, "args") {
            self.bad(
                i,
                format!("{path} is a number beyond 2^53; write 64-bit values as hex strings"),
            );
        }
        let cat = self.cat(&e.cat);
        let (pid, tid, ts) = (e.pid, e.tid, e.ts);
        match &e.kind {
            Kind::Slice { dur } => {
                self.r.slices += 1;
                self.tracks.entry((pid, tid)).or_default().push(Slice {
                    index: i,
                    start: ts,
                    end: ts.saturating_add(*dur),
                    cat,
                });
            }
            Kind::Flow { end, id } => {
                let key = match id {
                    FlowId::Num(n) => n.to_string(),
                    FlowId::Text(t) => t.clone(),
                };
                // Perfetto and DevTools key a flow by its category, name and id.
                let key = format!("{key} ({}/{})", e.cat, e.name);
                let entry = self.flows.entry(key).or_default();
                let at = (i, pid, tid, ts, cat);
                match end {
                    End::Start => entry.0.push(at),
                    End::Finish => entry.1.push(at),
                    End::Step => {}
                }
            }
            _ => {}
        }
    }

    /// The verdict, once every event is in; `closed` and `truncated` as the reader found them.
    pub fn finish(mut self, closed: bool, truncated: bool) -> Report {
        self.r.closed = closed;
        self.r.truncated = truncated;
        // Slices on one track must nest or follow each other; partial overlaps are dropped or moved.
        let mut overlaps = Vec::new();
        let mut overlap_count = 0;
        // Tracks in order, so which violations are kept past KEPT does not depend on hashing.
        let mut keys: Vec<(u32, u32)> = self.tracks.keys().copied().collect();
        keys.sort_unstable();
        for (pid, tid) in keys {
            let Some(slices) = self.tracks.get_mut(&(pid, tid)) else {
                continue;
            };
            slices.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
            let mut open: Vec<Slice> = Vec::new();
            for s in slices.iter() {
                while open.last().is_some_and(|top| top.end <= s.start) {
                    open.pop();
                }
                if let Some(top) = open.last()
                    && s.end > top.end
                {
                    keep(&mut overlaps, &mut overlap_count, || {
                        format!(
                            "event {}: slice overlaps event {} on pid {pid} tid {tid} without nesting",
                            s.index, top.index
                        )
                    });
                }
                open.push(*s);
            }
        }
        overlaps.sort();
        let names: HashMap<u32, &str> = self.cats.iter().map(|(k, &v)| (v, k.as_str())).collect();
        // Whether an X slice of category `cat` starts at `ts` on the track (its slices are sorted).
        let starts_at = |pid: u32, tid: u32, ts: u64, cat: u32| {
            self.tracks.get(&(pid, tid)).is_some_and(|slices| {
                let first = slices.partition_point(|s| s.start < ts);
                slices[first..]
                    .iter()
                    .take_while(|s| s.start == ts)
                    .any(|s| s.cat == cat)
            })
        };
        let mut flow_errors = Vec::new();
        let mut flow_count = 0;
        for (id, (s, f)) in &self.flows {
            self.r.flows += 1;
            // A file cut short (a killed program) may end between a flow's two ends, which the writer
            // puts last, side by side: a start among the last two events is truncation, not damage.
            let cut = !closed && f.is_empty() && s.len() == 1 && s[0].0 + 2 >= self.r.events;
            if cut {
                continue;
            }
            if s.len() != 1 || f.len() != 1 {
                keep(&mut flow_errors, &mut flow_count, || {
                    format!(
                        "flow id {id}: {} start(s) and {} end(s); each flow needs exactly one of \
                         each, and ids must be unique",
                        s.len(),
                        f.len()
                    )
                });
            }
            if let (Some(start), Some(end)) = (s.first(), f.first())
                && start.3 == end.3
            {
                keep(&mut flow_errors, &mut flow_count, || {
                    format!(
                        "event {}: flow id {id} starts and ends at one timestamp, so DevTools \
                         takes its two ends for one and draws nothing",
                        end.0
                    )
                });
            }
            for &(i, pid, tid, ts, cat) in s.iter().chain(f) {
                if !starts_at(pid, tid, ts, cat) {
                    let cat = names.get(&cat).copied().unwrap_or("");
                    keep(&mut flow_errors, &mut flow_count, || {
                        format!(
                            "event {i}: flow id {id} is not at the start of a slice of category \
                             {cat:?} on its track (pid {pid} tid {tid}), so DevTools and catapult \
                             do not draw it"
                        )
                    });
                }
            }
        }
        flow_errors.sort();
        self.r.add(overlaps, overlap_count);
        self.r.add(flow_errors, flow_count);
        self.r
    }
}

/// The first number in `map` (recursively) that JSON cannot hold exactly.
fn inexact(map: &Map<String, Value>, at: &str) -> Option<String> {
    for (k, v) in map {
        let here = format!("{at}.{k}");
        match v {
            Value::Number(n) => {
                let big = match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) => u as f64 > EXACT,
                    (None, Some(i)) => (i as f64).abs() > EXACT,
                    _ => n
                        .as_f64()
                        .is_some_and(|f| f.fract() == 0.0 && f.abs() > EXACT),
                };
                if big {
                    return Some(here);
                }
            }
            Value::Object(inner) => {
                if let Some(p) = inexact(inner, &here) {
                    return Some(p);
                }
            }
            Value::Array(items) => {
                for (j, item) in items.iter().enumerate() {
                    if let Value::Object(inner) = item
                        && let Some(p) = inexact(inner, &format!("{here}[{j}]"))
                    {
                        return Some(p);
                    }
                    if let Value::Number(n) = item
                        && n.as_u64().is_some_and(|u| u as f64 > EXACT)
                    {
                        return Some(format!("{here}[{j}]"));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_times_do_not_overflow() {
        // Found by the fuzz target: a slice whose start plus duration passes i64.
        let r = check(b"[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":9e300,\"dur\":9e300},\n{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1e18}]").unwrap();
        assert_eq!(r.slices, 2);
    }

    #[test]
    fn a_violation_per_event_is_counted_and_the_first_are_kept() {
        // Overlapping slices, flows without ends and events without a phase, 2,000 of each.
        let mut text = String::from("[");
        for i in 0..2000 {
            text.push_str(&format!(
                "{{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":{i},\"dur\":1.5}},\n\
                 {{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"ts\":{i},\"id\":{i}}},\n{{}},\n"
            ));
        }
        text.push_str("{}]");
        let r = check(text.as_bytes()).unwrap();
        assert_eq!(r.violations.len(), KEPT);
        // 2,001 without a phase, 1,999 overlaps, 2,000 flows with no end.
        assert_eq!(r.violation_count, 6000);
        assert!(!r.ok());
        assert!(r.violations[0].contains("no \"ph\""), "{}", r.violations[0]);
    }

    fn violations(text: &str) -> Vec<String> {
        check(text.as_bytes()).unwrap().violations
    }

    const GOOD: &str = r#"[
{"name":"a","cat":"e","ph":"X","pid":1,"tid":1,"ts":1.000,"dur":5.000},
{"name":"b","cat":"e","ph":"X","pid":1,"tid":1,"ts":2.000,"dur":1.000},
{"name":"d","cat":"e","ph":"X","pid":9,"tid":2,"ts":3.000,"dur":1.000},
{"name":"f","cat":"e","ph":"s","id":7,"pid":1,"tid":1,"ts":1.000},
{"name":"f","cat":"e","ph":"f","bp":"e","id":7,"pid":9,"tid":2,"ts":3.000},
{"name":"c","ph":"C","pid":1,"ts":1.0,"args":{"bytes":4}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"x"}},
{"name":"i","ph":"i","s":"g","pid":1,"tid":1,"ts":0,"args":{"ptr":"0xffffffffffffffff"}}
]"#;

    #[test]
    fn a_good_trace_passes() {
        let report = check(GOOD.as_bytes()).unwrap();
        assert!(report.ok(), "{:?}", report.violations);
        assert_eq!((report.slices, report.flows), (3, 1));
    }

    #[test]
    fn each_rule_catches_its_violation() {
        let cases: &[(&str, &str, &str)] = &[
            (
                r#""pid":9,"tid":2,"ts":3.000,"dur":1.000"#,
                r#""pid":"9","tid":2,"ts":3.000,"dur":1.000"#,
                "must be a number",
            ),
            (
                r#""ts":2.000,"dur":1.000"#,
                r#""ts":-2.000,"dur":1.000"#,
                "negative",
            ),
            (
                r#""ts":2.000,"dur":1.000"#,
                r#""ts":2.000,"dur":-1.000"#,
                "negative \"dur\"",
            ),
            (
                r#""ts":2.000,"dur":1.000"#,
                r#""ts":2.000"#,
                "without a numeric \"dur\"",
            ),
            (
                r#""ts":2.000,"dur":1.000"#,
                r#""ts":5.500,"dur":1.000"#,
                "without nesting",
            ),
            (
                r#""ph":"f","bp":"e","id":7"#,
                r#""ph":"f","bp":"e","id":8"#,
                "1 start(s) and 0 end(s)",
            ),
            (
                r#""ph":"f","bp":"e","id":7,"pid":9,"tid":2,"ts":3.000"#,
                r#""ph":"f","bp":"e","id":7,"pid":9,"tid":2,"ts":3.500"#,
                "not at the start of a slice",
            ),
            (r#""ph":"f","bp":"e""#, r#""ph":"f""#, "bp"),
            (
                r#""ptr":"0xffffffffffffffff""#,
                r#""ptr":18446744073709551615"#,
                "beyond 2^53",
            ),
            (
                r#""args":{"bytes":4}"#,
                r#""args":{"bytes":"4"}"#,
                "counter",
            ),
            (r#""ph":"i","s":"g""#, r#""ph":"i","s":"x""#, "scope"),
            (
                r#""name":"d","cat":"e","ph":"X""#,
                r#""name":"d","cat":"e","ph":"O""#,
                "not imported",
            ),
        ];
        for (from, to, says) in cases {
            assert!(GOOD.contains(from), "{from}");
            let v = violations(&GOOD.replacen(from, to, 1));
            assert!(v.iter().any(|l| l.contains(says)), "{to}: {v:?}");
        }
        // A trace cut short between a flow's two ends (the start is among the last two events) is
        // truncated, not broken; the same in a closed trace is a violation.
        let cut = r#"[
{"name":"a","cat":"e","ph":"X","pid":1,"tid":1,"ts":1.000,"dur":5.000},
{"name":"d","cat":"e","ph":"X","pid":9,"tid":2,"ts":3.000,"dur":1.000},
{"name":"f","cat":"e","ph":"s","id":7,"pid":1,"tid":1,"ts":1.000}"#;
        assert!(violations(&format!("{cut},\n")).is_empty());
        assert!(!violations(&format!("{cut}\n]")).is_empty());
        // A second start with the same id.
        let dup = GOOD.replace(
            "\n]",
            ",\n{\"name\":\"f\",\"cat\":\"e\",\"ph\":\"s\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":2.000}\n]",
        );
        assert!(violations(&dup).iter().any(|l| l.contains("2 start(s)")));
    }
}
