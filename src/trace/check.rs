//! `clxfer check`: every rule of perfetto-json.md that a trace can break, checked. A trace that
//! passes is drawn by Perfetto as written: no dropped or mis-nested slices, every arrow bound.

use super::read::{ReadError, Trace, read_file};
use serde_json::{Map, Value};
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
    /// One line per violation: `event N: what`.
    pub violations: Vec<String>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }
}

pub fn check_file(path: &Path) -> Result<Report, ReadError> {
    Ok(check(&read_file(path)?))
}

/// JSON numbers are exact up to 2^53; larger integers lose bits (Perfetto: above int64, doubles).
const EXACT: f64 = 9_007_199_254_740_992.0;

/// Microseconds → nanoseconds as Perfetto rounds them.
fn ns(v: f64) -> i64 {
    (v * 1000.0).round() as i64
}

#[derive(Clone, Copy)]
struct Slice {
    index: usize,
    start: i64,
    end: i64,
}

pub fn check(trace: &Trace) -> Report {
    let mut r = Report {
        events: trace.events.len(),
        closed: trace.closed,
        truncated: trace.truncated,
        ..Report::default()
    };
    let mut bad = |i: usize, what: String| r.violations.push(format!("event {i}: {what}"));
    // (pid, tid) → slices; (pid, tid, ts ns, cat) → whether an X slice starts there.
    let mut tracks: HashMap<(u32, u32), Vec<Slice>> = HashMap::new();
    let mut starts: HashMap<(u32, u32, i64, String), usize> = HashMap::new();
    // flow id → (event index, ph, pid, tid, ts, cat) of its starts and ends.
    type FlowEnd = (usize, u32, u32, i64, String);
    let mut flows: HashMap<String, (Vec<FlowEnd>, Vec<FlowEnd>)> = HashMap::new();
    for (i, e) in trace.events.iter().enumerate() {
        let Some(obj) = e.as_object() else {
            bad(i, "not an object".into());
            continue;
        };
        let Some(ph) = obj.get("ph").and_then(Value::as_str) else {
            bad(i, "no \"ph\" string".into());
            continue;
        };
        if !matches!(
            ph,
            "X" | "B" | "E" | "i" | "I" | "C" | "M" | "s" | "t" | "f"
        ) {
            bad(i, format!("phase {ph:?} is not imported by Perfetto"));
            continue;
        }
        if obj.get("name").is_some_and(|n| !n.is_string()) {
            bad(i, "\"name\" is not a string".into());
        }
        let id = |key: &str| -> Result<u32, String> {
            match obj.get(key) {
                Some(Value::Number(n)) => n
                    .as_u64()
                    .filter(|&v| v <= u32::MAX as u64)
                    .map(|v| v as u32)
                    .ok_or_else(|| format!("\"{key}\" {n} is not an unsigned 32-bit integer")),
                Some(other) => Err(format!("\"{key}\" must be a number, not {other}")),
                None if key == "tid" && matches!(ph, "C" | "M") => Ok(0),
                None => Err(format!("no \"{key}\"")),
            }
        };
        let (pid, tid) = match (id("pid"), id("tid")) {
            (Ok(p), Ok(t)) => (p, t),
            (Err(e), _) | (_, Err(e)) => {
                bad(i, e);
                continue;
            }
        };
        let ts = match obj.get("ts") {
            Some(Value::Number(n)) => match n.as_f64() {
                Some(v) if v >= 0.0 && v.is_finite() => ns(v),
                _ => {
                    bad(
                        i,
                        format!("\"ts\" {n} is negative (Perfetto drops the event)"),
                    );
                    continue;
                }
            },
            None if ph == "M" => 0,
            _ => {
                bad(i, "no numeric \"ts\"".into());
                continue;
            }
        };
        if let Some(args) = obj.get("args") {
            match args {
                Value::Object(map) => {
                    if let Some(path) = inexact(map, "args") {
                        bad(
                            i,
                            format!(
                                "{path} is a number beyond 2^53; write 64-bit values as hex strings"
                            ),
                        );
                    }
                }
                _ => bad(i, "\"args\" is not an object".into()),
            }
        }
        let cat = obj
            .get("cat")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match ph {
            "X" => {
                let dur = match obj.get("dur").and_then(Value::as_f64) {
                    Some(d) if d >= 0.0 && d.is_finite() => ns(d),
                    Some(_) => {
                        bad(i, "negative \"dur\" (Perfetto drops the slice)".into());
                        continue;
                    }
                    None => {
                        bad(
                            i,
                            "\"X\" without a numeric \"dur\" (a parser failure in Perfetto)".into(),
                        );
                        continue;
                    }
                };
                r.slices += 1;
                tracks.entry((pid, tid)).or_default().push(Slice {
                    index: i,
                    start: ts,
                    end: ts + dur,
                });
                starts.entry((pid, tid, ts, cat)).or_insert(i);
            }
            "s" | "t" | "f" => {
                let key = match obj.get("id") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v.abs() <= EXACT) => {
                        n.to_string()
                    }
                    Some(Value::Number(n)) => {
                        bad(i, format!("flow id {n} is beyond 2^53"));
                        continue;
                    }
                    _ => {
                        bad(i, "flow without an \"id\"".into());
                        continue;
                    }
                };
                if ph == "f" && obj.get("bp").and_then(Value::as_str) != Some("e") {
                    bad(
                        i,
                        "flow end without \"bp\":\"e\" binds to the next slice, not its own".into(),
                    );
                }
                let entry = flows.entry(key).or_default();
                let end = (i, pid, tid, ts, cat);
                match ph {
                    "s" => entry.0.push(end),
                    "f" => entry.1.push(end),
                    _ => {}
                }
            }
            "C" => match obj.get("args").and_then(Value::as_object) {
                Some(a) if !a.is_empty() && a.values().all(Value::is_number) => {}
                _ => bad(i, "counter without numeric \"args\"".into()),
            },
            "i" | "I" => {
                if let Some(s) = obj.get("s")
                    && !matches!(s.as_str(), Some("g" | "p" | "t"))
                {
                    bad(i, format!("instant scope {s} is not g, p or t"));
                }
            }
            _ => {}
        }
    }
    // Slices on one track must nest or follow each other; partial overlaps are dropped or moved.
    let mut overlaps = Vec::new();
    for ((pid, tid), slices) in tracks.iter_mut() {
        slices.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        let mut open: Vec<Slice> = Vec::new();
        for s in slices.iter() {
            while open.last().is_some_and(|top| top.end <= s.start) {
                open.pop();
            }
            if let Some(top) = open.last()
                && s.end > top.end
            {
                overlaps.push(format!(
                    "event {}: slice overlaps event {} on pid {pid} tid {tid} without nesting",
                    s.index, top.index
                ));
            }
            open.push(*s);
        }
    }
    overlaps.sort();
    r.violations.extend(overlaps);
    let mut flow_errors = Vec::new();
    for (id, (s, f)) in &flows {
        r.flows += 1;
        // A file cut short (a killed program) may end between a flow's two ends, which the writer
        // puts last, side by side: a start among the last two events is truncation, not damage.
        let cut = !trace.closed && f.is_empty() && s.len() == 1 && s[0].0 + 2 >= trace.events.len();
        if cut {
            continue;
        }
        if s.len() != 1 || f.len() != 1 {
            flow_errors.push(format!(
                "flow id {id}: {} start(s) and {} end(s); each flow needs exactly one of each, and \
                 ids must be unique",
                s.len(),
                f.len()
            ));
        }
        for (i, pid, tid, ts, cat) in s.iter().chain(f) {
            if !starts.contains_key(&(*pid, *tid, *ts, cat.clone())) {
                flow_errors.push(format!(
                    "event {i}: flow id {id} is not at the start of a slice of category {cat:?} on \
                     its track (pid {pid} tid {tid}), so DevTools and catapult do not draw it"
                ));
            }
        }
    }
    flow_errors.sort();
    r.violations.extend(flow_errors);
    r
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
    use super::super::read::parse;
    use super::*;

    fn violations(text: &str) -> Vec<String> {
        check(&parse(text.as_bytes()).unwrap()).violations
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
        let report = check(&parse(GOOD.as_bytes()).unwrap());
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
