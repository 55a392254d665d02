//! An event read back, written again in any format (`clxfer convert`, `merge`): its head as it
//! is, its args value by value. Pointers and handles (hex strings, as clxfer writes them) go
//! back as pointers, and the run's report as one JSON value.

use super::emit::{Emit, Head, Heads, Name, Text};
use super::{Event, Kind};
use crate::vocab::schema as s;
use serde_json::Value;

/// Writes `e` through `j`.
pub fn write<E: Emit>(j: &mut E, e: &Event, heads: &mut Heads) {
    let head = Head {
        name: Name::Text(&e.name),
        cat: Text::Str(&e.cat),
        kind: e.kind.borrowed(),
        pid: e.pid,
        tid: e.tid,
        ts: e.ts,
    };
    j.begin_event(&head, heads);
    let carries = matches!(
        e.kind,
        Kind::Slice { .. } | Kind::Instant(_) | Kind::Other { .. }
    );
    if carries && !e.args.is_empty() {
        j.args();
        for (k, v) in &e.args {
            j.key(k);
            if k == s::REPORT.name && v.is_object() {
                j.raw_json(&v.to_string());
            } else {
                value(j, v);
            }
        }
        j.close();
    }
    j.end_event();
}

fn value<E: Emit>(j: &mut E, v: &Value) {
    match v {
        Value::Bool(b) => {
            j.bool(*b);
        }
        Value::Number(n) => {
            match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => j.u64(u),
                (None, Some(i)) => j.i64(i),
                _ => j.f64(n.as_f64().unwrap_or(0.0)),
            };
        }
        Value::String(t) => {
            match hex(t) {
                Some(p) => j.hex(p),
                None => j.str(t),
            };
        }
        Value::Object(m) => {
            j.open();
            for (k, x) in m {
                j.key(k);
                value(j, x);
            }
            j.close();
        }
        Value::Array(xs) => {
            j.open_array();
            for x in xs {
                value(j, x);
            }
            j.close_array();
        }
        Value::Null => {
            j.null();
        }
    }
}

/// A hex string as clxfer writes pointers and handles (`0x` and lower-case digits without
/// leading zeros, so it reads back the same): its value.
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

#[cfg(test)]
mod tests {
    use super::hex;

    #[test]
    fn only_hex_as_clxfer_writes_it_is_a_pointer() {
        assert_eq!(hex("0x1f"), Some(0x1f));
        for not in ["0x", "0x01", "0x1F", "1f", "0x12345678901234567", "0xg"] {
            assert_eq!(hex(not), None, "{not}");
        }
    }
}
