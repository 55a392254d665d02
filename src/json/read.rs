//! Reading a Chrome trace: the bare array Perfetto reads (with or without its closing `]`, a
//! trailing comma allowed, a truncated last event dropped) or the `{"traceEvents": [...]}` object
//! (which must be complete); each JSON event as an [`Event`] (and back, for what wants JSON's
//! shape). What an event must be to be one is said here once, in the words `clxfer check`
//! prints: what Perfetto's importer would drop or misread (../shared/docs/perfetto-json.md).

use crate::event::{End, Ended, Event, FlowId, Kind, Meta, Read, Scope, track_event_name};
use crate::vocab::schema::EXACT;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

/// Nanoseconds of a `ts` or `dur` (microseconds), rounded as Perfetto rounds them.
fn ns(us: f64) -> u64 {
    (us * 1000.0).round() as u64
}

/// Microseconds of `ns` as a JSON number, as clxfer writes them (three decimals at most).
pub fn us_json(ns: u64) -> Value {
    if ns.is_multiple_of(1000) {
        Value::from(ns / 1000)
    } else {
        Value::from(ns as f64 / 1000.0)
    }
}

/// An event's own keys, taken out of its object in one pass (the rest are not Perfetto's).
#[derive(Default)]
struct Top {
    ph: Option<Value>,
    name: Option<Value>,
    cat: Option<Value>,
    pid: Option<Value>,
    tid: Option<Value>,
    ts: Option<Value>,
    dur: Option<Value>,
    id: Option<Value>,
    s: Option<Value>,
    bp: Option<Value>,
    args: Option<Value>,
}

impl Top {
    /// Where key `k`'s value goes (`None`: a key Perfetto does not read).
    fn slot(&mut self, k: &str) -> Option<&mut Option<Value>> {
        Some(match k {
            "ph" => &mut self.ph,
            "name" => &mut self.name,
            "cat" => &mut self.cat,
            "pid" => &mut self.pid,
            "tid" => &mut self.tid,
            "ts" => &mut self.ts,
            "dur" => &mut self.dur,
            "id" => &mut self.id,
            "s" => &mut self.s,
            "bp" => &mut self.bp,
            "args" => &mut self.args,
            _ => return None,
        })
    }
}

/// One element of a trace's array as read from its text: an object's own keys, straight into
/// [`Top`] (no map of the whole object is built, and keys Perfetto does not read are skipped
/// unparsed: a fifth of `clxfer check`'s time was building that map), or `None`: not an object.
struct Raw(Option<Top>);

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

/// A key, borrowed from the text where it has no escapes (it is then matched by [`Top::slot`]).
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, k: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(k.into()))
            }
            fn visit_str<E: de::Error>(self, k: &str) -> Result<Key<'de>, E> {
                Ok(Key(k.to_owned().into()))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut top = Top::default();
        while let Some(Key(k)) = map.next_key()? {
            match top.slot(&k) {
                Some(slot) => *slot = Some(map.next_value()?),
                None => drop(map.next_value::<IgnoredAny>()?),
            }
        }
        Ok(Raw(Some(top)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Raw(None))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Raw, E> {
        Ok(Raw(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Raw, E> {
        Ok(Raw(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Raw, E> {
        Ok(Raw(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Raw, E> {
        Ok(Raw(None))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Raw, E> {
        Ok(Raw(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw(None))
    }
}

/// The event `v` stands for, or why Perfetto would not take it as one.
pub fn from_json(v: Value) -> Result<Event, String> {
    let Value::Object(obj) = v else {
        return Err("not an object".into());
    };
    let mut top = Top::default();
    for (k, v) in obj {
        if let Some(slot) = top.slot(&k) {
            *slot = Some(v);
        }
    }
    from_top(top)
}

/// The event of an element read as [`Raw`].
fn from_raw(raw: Raw) -> Result<Event, String> {
    match raw {
        Raw(Some(top)) => from_top(top),
        Raw(None) => Err("not an object".into()),
    }
}

/// The event an object's own keys make, or why Perfetto would not take it as one.
fn from_top(top: Top) -> Result<Event, String> {
    let ph = match top.ph {
        Some(Value::String(ph)) => ph,
        _ => return Err("no \"ph\" string".into()),
    };
    if !matches!(
        ph.as_str(),
        "X" | "B" | "E" | "i" | "I" | "C" | "M" | "s" | "t" | "f"
    ) {
        return Err(format!("phase {ph:?} is not imported by Perfetto"));
    }
    let name = match top.name {
        Some(Value::String(n)) => n,
        None => String::new(),
        Some(_) => return Err("\"name\" is not a string".into()),
    };
    let id = |key: &str, v: &Option<Value>| -> Result<u32, String> {
        match v {
            Some(Value::Number(n)) => n
                .as_u64()
                .filter(|&v| v <= u32::MAX as u64)
                .map(|v| v as u32)
                .ok_or_else(|| format!("\"{key}\" {n} is not an unsigned 32-bit integer")),
            Some(other) => Err(format!("\"{key}\" must be a number, not {other}")),
            None if key == "tid" && matches!(ph.as_str(), "C" | "M") => Ok(0),
            None => Err(format!("no \"{key}\"")),
        }
    };
    let (pid, tid) = (id("pid", &top.pid)?, id("tid", &top.tid)?);
    let ts = match &top.ts {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(v) if v >= 0.0 && v.is_finite() => ns(v),
            _ => return Err(format!("\"ts\" {n} is negative (Perfetto drops the event)")),
        },
        None if ph == "M" => 0,
        _ => return Err("no numeric \"ts\"".into()),
    };
    let args = match top.args {
        Some(Value::Object(map)) => map,
        None => Map::new(),
        Some(_) => return Err("\"args\" is not an object".into()),
    };
    let cat = match top.cat {
        Some(Value::String(c)) => c,
        _ => String::new(),
    };
    let mut e = Event {
        name,
        cat,
        kind: Kind::Other { ph: String::new() },
        pid,
        tid,
        ts,
        args,
    };
    e.kind = match ph.as_str() {
        "X" => match top.dur.as_ref().and_then(Value::as_f64) {
            Some(d) if d >= 0.0 && d.is_finite() => Kind::Slice { dur: ns(d) },
            Some(_) => return Err("negative \"dur\" (Perfetto drops the slice)".into()),
            None => {
                return Err(
                    "\"X\" without a numeric \"dur\" (a parser failure in Perfetto)".into(),
                );
            }
        },
        "s" | "t" | "f" => {
            let id = match top.id {
                Some(Value::String(s)) => FlowId::Text(s),
                Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v <= EXACT) => {
                    FlowId::Num(n.as_u64().unwrap_or(0))
                }
                Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v.abs() <= EXACT as f64) => {
                    FlowId::Text(n.to_string())
                }
                Some(Value::Number(n)) => return Err(format!("flow id {n} is beyond 2^53")),
                _ => return Err("flow without an \"id\"".into()),
            };
            let end = match ph.as_str() {
                "s" => End::Start,
                "t" => End::Step,
                _ if top.bp.as_ref().and_then(Value::as_str) != Some("e") => {
                    return Err(
                        "flow end without \"bp\":\"e\" binds to the next slice, not its own".into(),
                    );
                }
                _ => End::Finish,
            };
            Kind::Flow { end, id }
        }
        "C" => {
            let first = e.args.iter().next().map(|(k, v)| (k.clone(), v.as_f64()));
            match first {
                Some((key, Some(v))) if e.args.values().all(Value::is_number) => {
                    e.args.clear();
                    Kind::Counter {
                        key,
                        value: v as i64,
                    }
                }
                _ => return Err("counter without numeric \"args\"".into()),
            }
        }
        "i" | "I" => Kind::Instant(match &top.s {
            None => Scope::Thread,
            Some(s) => match s.as_str() {
                Some("t") => Scope::Thread,
                Some("p") => Scope::Process,
                Some("g") => Scope::Global,
                _ => return Err(format!("instant scope {s} is not g, p or t")),
            },
        }),
        "M" => match track(&e.name, &e.args) {
            Some((thread, meta)) => {
                e.args.clear();
                Kind::Track { thread, meta }
            }
            None => Kind::Other { ph },
        },
        _ => Kind::Other { ph },
    };
    Ok(e)
}

/// What a metadata event named `name` says of its track, if it is one of the four Perfetto
/// reads.
fn track(name: &str, args: &Map<String, Value>) -> Option<(bool, Meta<String>)> {
    let thread = match name {
        "process_name" | "process_sort_index" => false,
        "thread_name" | "thread_sort_index" => true,
        _ => return None,
    };
    let meta = if name.ends_with("_name") {
        Meta::Name(args.get("name")?.as_str()?.to_string())
    } else {
        Meta::Rank(args.get("sort_index")?.as_i64()?)
    };
    Some((thread, meta))
}

/// `e` as a JSON event (what the tests and tools that want JSON's shape read).
pub fn to_json(e: &Event) -> Value {
    let mut v = json!({"name": e.name, "cat": e.cat, "ph": e.kind.ph(), "pid": e.pid,
        "tid": e.tid, "ts": us_json(e.ts)});
    let mut args = e.args.clone();
    match &e.kind {
        Kind::Slice { dur } => v["dur"] = us_json(*dur),
        Kind::Instant(scope) => v["s"] = scope.letter().into(),
        Kind::Flow { end, id } => {
            if *end == End::Finish {
                v["bp"] = "e".into();
            }
            v["id"] = match id {
                FlowId::Num(n) => (*n).into(),
                FlowId::Text(t) => t.clone().into(),
            };
        }
        Kind::Counter { key, value } => {
            args.insert(key.clone(), (*value).into());
        }
        Kind::Track { thread, meta } => {
            v["name"] = track_event_name(*thread, meta).into();
            match meta {
                Meta::Name(n) => args.insert("name".into(), n.clone().into()),
                Meta::Rank(r) => args.insert("sort_index".into(), (*r).into()),
            };
        }
        Kind::Other { .. } => {}
    }
    if !args.is_empty() {
        v["args"] = Value::Object(args);
    }
    v
}

/// Hands each event of a Chrome trace `b` to `f`, in order (and how far it has read to
/// `read`); how it ended, or why it is not one.
pub fn events(
    b: &[u8],
    mut f: impl FnMut(Read),
    mut read: impl FnMut(usize),
) -> Result<Ended, String> {
    // Perfetto's detection: the first 128 bytes without whitespace start with `[{"` or `{"`.
    let head: Vec<u8> = b
        .iter()
        .take(128)
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if head.starts_with(b"{\"") {
        let v: Value =
            serde_json::from_slice(b).map_err(|e| format!("not a complete JSON object: {e}"))?;
        let events = match v {
            Value::Object(mut o) => match o.remove("traceEvents") {
                Some(Value::Array(events)) => events,
                _ => return Err("no \"traceEvents\" array".into()),
            },
            _ => return Err("no \"traceEvents\" array".into()),
        };
        for e in events {
            f(from_json(e));
        }
        return Ok(Ended {
            closed: true,
            truncated: false,
        });
    }
    if !head.starts_with(b"[{\"") {
        return Err(
            "not a Chrome trace: it must start with `[{\"` or `{\"` (an empty `[]` is not one)"
                .into(),
        );
    }
    let mut trace = Ended::default();
    let mut i = skip_ws(b, 0) + 1;
    loop {
        i = skip_ws(b, i);
        if i >= b.len() {
            return Ok(trace);
        }
        if b[i] == b']' {
            trace.closed = true;
            let rest = skip_ws(b, i + 1);
            if rest < b.len() {
                return Err(format!(
                    "text after the closing `]` at {}",
                    position(b, rest)
                ));
            }
            return Ok(trace);
        }
        let mut stream = serde_json::Deserializer::from_slice(&b[i..]).into_iter::<Raw>();
        match stream.next() {
            Some(Ok(raw)) => {
                f(from_raw(raw));
                i += stream.byte_offset();
                read(i);
            }
            Some(Err(e)) if e.is_eof() => {
                trace.truncated = true;
                return Ok(trace);
            }
            Some(Err(e)) => {
                return Err(format!("malformed event at {}: {e}", position(b, i)));
            }
            None => return Ok(trace),
        }
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b']') | None => {}
            Some(_) => {
                return Err(format!(
                    "expected `,` or `]` between events at {}",
                    position(b, i)
                ));
            }
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Line and column of byte `at`, for messages.
fn position(b: &[u8], at: usize) -> String {
    let at = at.min(b.len());
    let line = b[..at].iter().filter(|&&c| c == b'\n').count() + 1;
    let col = at
        - b[..at]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    format!("line {line}, column {col}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_back_as_written() {
        for text in [
            r#"{"name":"a","cat":"c","ph":"X","pid":1,"tid":2,"ts":1.5,"dur":2,"args":{"k":1}}"#,
            r#"{"name":"a","cat":"c","ph":"i","pid":1,"tid":2,"ts":3,"s":"g"}"#,
            r#"{"name":"a","cat":"c","ph":"s","pid":1,"tid":2,"ts":3,"id":7}"#,
            r#"{"name":"a","cat":"c","ph":"f","pid":1,"tid":2,"ts":3,"bp":"e","id":7}"#,
            r#"{"name":"n","cat":"c","ph":"C","pid":1,"tid":0,"ts":3,"args":{"bytes":5}}"#,
            r#"{"name":"thread_name","cat":"__metadata","ph":"M","pid":1,"tid":2,"ts":0,"args":{"name":"q"}}"#,
            r#"{"name":"process_sort_index","cat":"__metadata","ph":"M","pid":1,"tid":0,"ts":0,"args":{"sort_index":-1}}"#,
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            let e = from_json(v.clone()).unwrap();
            assert_eq!(to_json(&e), v, "{text}");
        }
    }

    #[test]
    fn a_bad_event_says_why() {
        for (text, says) in [
            (r#"[1]"#, "not an object"),
            (r#"{"ph":"Q"}"#, "not imported"),
            (r#"{"ph":"X","pid":1,"tid":1,"ts":-1,"dur":1}"#, "negative"),
            (r#"{"ph":"X","pid":1,"tid":1,"ts":1}"#, "without a numeric"),
            (r#"{"ph":"f","pid":1,"tid":1,"ts":1,"id":1}"#, "bp"),
            (r#"{"ph":"C","pid":1,"ts":1,"args":{"a":"x"}}"#, "counter"),
            (r#"{"ph":"i","pid":1,"tid":1,"ts":1,"s":"x"}"#, "scope"),
            (r#"{"ph":"i","pid":-1,"tid":1,"ts":1}"#, "unsigned"),
        ] {
            let e = from_json(serde_json::from_str(text).unwrap()).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn a_trace_read_from_its_text_reads_as_its_json_does() {
        // Elements that are not objects, keys Perfetto does not read (nested, skipped unparsed),
        // an escaped key, a key given twice (the last counts, as in a JSON map).
        let text = r#"[{"ph":"X","pid":1,"tid":2,"ts":1,"dur":2,"name":"a","extra":{"x":[1,{"y":2}]},"args":{"k":1}},
            [1,[2]], 3, "s", null, true,
            {"p\u0068":"i","pid":1,"tid":2,"ts":5,"s":"g","ts":6,"name":"b"}]"#;
        let mut read = Vec::new();
        events(text.as_bytes(), |e| read.push(e), |_| {}).unwrap();
        let whole: Vec<Value> = serde_json::from_str(text).unwrap();
        let from_values: Vec<_> = whole.into_iter().map(from_json).collect();
        assert_eq!(read.len(), 7);
        for (a, b) in read.iter().zip(&from_values) {
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(to_json(a), to_json(b)),
                (Err(a), Err(b)) => assert_eq!(a, b),
                _ => panic!("{:?} against {:?}", a.is_ok(), b.is_ok()),
            }
        }
        let last = read[6].as_ref().unwrap();
        assert_eq!((last.ts, last.name.as_str()), (6000, "b"));
        assert!(
            read[1..6]
                .iter()
                .all(|e| e.as_ref().is_err_and(|e| e == "not an object"))
        );
    }
}
