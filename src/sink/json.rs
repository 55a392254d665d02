//! A minimal, fast JSON writer for the trace (the writer must keep up with millions of events per
//! second, so no intermediate values): objects, arrays, escaped strings, integers, and timestamps
//! as microseconds with three decimals.

/// Appends JSON to a byte buffer. Commas are placed by tracking whether a container is empty.
#[derive(Default)]
pub struct Json {
    pub buf: Vec<u8>,
    /// One entry per open container: whether it has no member yet.
    empty: Vec<bool>,
}

impl Json {
    fn sep(&mut self) {
        if let Some(empty) = self.empty.last_mut() {
            if !*empty {
                self.buf.push(b',');
            }
            *empty = false;
        }
    }

    pub fn open(&mut self) -> &mut Self {
        self.sep();
        self.buf.push(b'{');
        self.empty.push(true);
        self
    }

    pub fn open_array(&mut self) -> &mut Self {
        self.sep();
        self.buf.push(b'[');
        self.empty.push(true);
        self
    }

    pub fn close(&mut self) -> &mut Self {
        self.empty.pop();
        self.buf.push(b'}');
        self
    }

    pub fn close_array(&mut self) -> &mut Self {
        self.empty.pop();
        self.buf.push(b']');
        self
    }

    /// `"key":` inside an object; the value follows (it must not add its own comma).
    pub fn key(&mut self, key: &str) -> &mut Self {
        self.sep();
        self.escaped(key);
        self.buf.push(b':');
        // The value that follows is this member: no comma before it.
        if let Some(empty) = self.empty.last_mut() {
            *empty = true;
        }
        self
    }

    pub fn str(&mut self, value: &str) -> &mut Self {
        self.sep();
        self.escaped(value);
        self
    }

    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.sep();
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
        self
    }

    pub fn i64(&mut self, value: i64) -> &mut Self {
        self.sep();
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
        self
    }

    pub fn bool(&mut self, value: bool) -> &mut Self {
        self.sep();
        self.buf
            .extend_from_slice(if value { b"true" } else { b"false" });
        self
    }

    /// Nanoseconds as microseconds with three decimals (`12.345`): exact, no float rounding.
    pub fn us(&mut self, ns: u64) -> &mut Self {
        self.sep();
        self.us_digits(ns);
        self
    }

    fn us_digits(&mut self, ns: u64) {
        let mut b = itoa::Buffer::new();
        self.buf.extend_from_slice(b.format(ns / 1000).as_bytes());
        let frac = ns % 1000;
        let digit = |d: u64| b'0' + d as u8;
        self.buf.extend_from_slice(&[
            b'.',
            digit(frac / 100),
            digit(frac / 10 % 10),
            digit(frac % 10),
        ]);
    }

    /// A finite number with three decimals (bandwidths); non-finite values become 0.
    pub fn f3(&mut self, value: f64) -> &mut Self {
        self.sep();
        let v = if value.is_finite() { value } else { 0.0 };
        let scaled = (v.abs() * 1000.0).round() as u64;
        if v < 0.0 && scaled > 0 {
            self.buf.push(b'-');
        }
        self.us_digits(scaled);
        self
    }

    /// A 64-bit value (pointer, handle) as a hex string: JSON numbers lose precision above 2^53.
    pub fn hex(&mut self, value: u64) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(b"\"0x");
        let digits = format!("{value:x}");
        self.buf.extend_from_slice(digits.as_bytes());
        self.buf.push(b'"');
        self
    }

    /// Raw JSON text, as one value.
    pub fn raw(&mut self, text: &str) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(text.as_bytes());
        self
    }

    fn escaped(&mut self, s: &str) {
        self.buf.push(b'"');
        let bytes = s.as_bytes();
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            let esc: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0..=0x1f => {
                    self.buf.extend_from_slice(&bytes[start..i]);
                    let hex = format!("\\u{:04x}", b);
                    self.buf.extend_from_slice(hex.as_bytes());
                    start = i + 1;
                    continue;
                }
                _ => continue,
            };
            self.buf.extend_from_slice(&bytes[start..i]);
            self.buf.extend_from_slice(esc);
            start = i + 1;
        }
        self.buf.extend_from_slice(&bytes[start..]);
        self.buf.push(b'"');
    }

    /// Whether every container opened was closed.
    pub fn balanced(&self) -> bool {
        self.empty.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_arrays_and_values_parse_back() {
        let mut j = Json::default();
        j.open();
        j.key("name").str("a \"quoted\"\nname\u{1}");
        j.key("ts").us(12_345_678);
        j.key("small").us(7);
        j.key("neg").i64(-5);
        j.key("gbps").f3(12.3456);
        j.key("negf").f3(-0.5);
        j.key("ptr").hex(0xdead_beef_0000_1234);
        j.key("list").open_array();
        j.u64(1).u64(u64::MAX).bool(false);
        j.open().key("x").u64(1).close();
        j.close_array();
        j.key("empty").open().close();
        j.key("raw").raw("null");
        j.close();
        assert!(j.balanced());
        let text = String::from_utf8(j.buf).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).expect(&text);
        assert_eq!(v["name"], "a \"quoted\"\nname\u{1}");
        assert_eq!(v["ts"].to_string(), "12345.678");
        assert_eq!(v["small"].to_string(), "0.007");
        assert_eq!(v["gbps"].to_string(), "12.346");
        assert_eq!(v["negf"].to_string(), "-0.5");
        assert_eq!(v["ptr"], "0xdeadbeef00001234");
        assert_eq!(v["list"][1], u64::MAX);
        assert_eq!(v["list"][3]["x"], 1);
        assert!(v["empty"].as_object().unwrap().is_empty());
        assert!(v["raw"].is_null());
    }
}
