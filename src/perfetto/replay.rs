//! One JSON event of clxfer's trace as packets (`clxfer convert`, and the tests' traces): the
//! event's kind decides the packets ([`super::encode`]'s opening comment says how each maps), its
//! `args` become debug annotations.

use super::encode::{Encoder, Scope};
use super::fields::{RACE_FLOW_BIT, WAIT_FLOW_BIT, event as ev};
use super::intern::Label;
use crate::vocab::schema as s;
use serde_json::Value;

/// Nanoseconds of a JSON `ts` or `dur` (microseconds), as Perfetto rounds them.
fn ns(us: &Value) -> u64 {
    (us.as_f64().unwrap_or(0.0) * 1000.0).round().max(0.0) as u64
}

/// A JSON hex string (a pointer or handle, as clxfer writes them): its value.
fn hex(s: &str) -> Option<u64> {
    let digits = s.strip_prefix("0x")?;
    let plain = !digits.is_empty() && digits.len() <= 16 && !digits.starts_with('0');
    let lower = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    (plain && lower)
        .then(|| u64::from_str_radix(digits, 16).ok())
        .flatten()
}

/// One value of `args`, named by the pending key.
fn arg(enc: &mut Encoder, key: Option<&str>, v: &Value) {
    if let Some(k) = key {
        enc.key(k);
    }
    match v {
        Value::Bool(b) => {
            enc.bool(*b);
        }
        Value::Number(n) => {
            match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => enc.u64(u),
                (None, Some(i)) => enc.i64(i),
                _ => enc.f64(n.as_f64().unwrap_or(0.0)),
            };
        }
        Value::String(s) => {
            match hex(s) {
                Some(p) => enc.pointer(p),
                None => enc.str(s),
            };
        }
        // The run's report: one annotation of JSON text.
        Value::Object(_) if key == Some(s::REPORT.name) => {
            enc.json(&v.to_string());
        }
        Value::Object(m) => {
            enc.open_dict();
            for (k, x) in m {
                arg(enc, Some(k), x);
            }
            enc.close();
        }
        Value::Array(xs) => {
            enc.open_array();
            for x in xs {
                arg(enc, None, x);
            }
            enc.close();
        }
        Value::Null => {
            enc.str("");
        }
    }
}

/// One JSON event of clxfer's trace, as packets.
pub fn event(enc: &mut Encoder, e: &Value) {
    let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
    let n = |k: &str| e.get(k).and_then(Value::as_u64).unwrap_or(0) as u32;
    let (name, cat, at) = (s("name"), s("cat"), (n("pid"), n("tid")));
    let label = (Label::Text(name), Label::Text(cat));
    let ts = e.get("ts").map_or(0, ns);
    let args = e.get("args").and_then(Value::as_object);
    let annotated = |enc: &mut Encoder, kind, track| {
        enc.open_event(kind, track, ts, label);
        for (k, v) in args.into_iter().flatten() {
            arg(enc, Some(k), v);
        }
        enc.close_event(|_| {});
    };
    match s("ph") {
        "X" => {
            let track = enc.track(Scope::Thread, at);
            annotated(enc, ev::SLICE_BEGIN, track);
            enc.slice_end(track, ts.saturating_add(e.get("dur").map_or(0, ns)));
        }
        "i" | "I" => {
            let scope = match s("s") {
                "g" => Scope::Global,
                "p" => Scope::Process,
                _ => Scope::Thread,
            };
            let track = enc.track(scope, at);
            annotated(enc, ev::INSTANT, track);
        }
        ph @ ("s" | "f") => {
            let id = e.get("id").and_then(Value::as_u64).unwrap_or(0);
            let id = match name {
                s::WAIT_FLOW_NAME => id | WAIT_FLOW_BIT,
                s::RACE_FLOW_NAME => id | RACE_FLOW_BIT,
                _ => id,
            };
            enc.flow(label, ph == "s", id, at, ts);
        }
        "C" => {
            if let Some((k, v)) = args.and_then(|a| a.iter().next()) {
                let value = v.as_i64().unwrap_or(v.as_f64().unwrap_or(0.0) as i64);
                enc.counter(label, k, at.0, ts, value);
            }
        }
        "M" => {
            let a = |k: &str| args.and_then(|a| a.get(k));
            let text = a("name").and_then(Value::as_str);
            let rank = a("sort_index").and_then(Value::as_i64);
            match name {
                "process_name" | "process_sort_index" => enc.name_process(at.0, text, rank),
                "thread_name" | "thread_sort_index" => enc.name_thread(at.0, at.1, text, rank),
                _ => {}
            }
        }
        _ => {}
    }
}
