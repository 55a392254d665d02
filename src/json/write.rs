//! A minimal, fast JSON writer for the trace (the writer must keep up with millions of events per
//! second, so no intermediate values): objects, arrays, escaped strings, integers, and timestamps
//! as microseconds to the nanosecond, without needless digits.

/// The largest integer every JSON reader (doubles) holds exactly: 2^53.
pub use crate::vocab::schema::EXACT;

use crate::event::{
    Emit, End, FlowId, Head, Heads, Kind, Meta, Name, Part, Text, track_event_name,
};

/// Appends JSON to a byte buffer. Commas are placed by one flag: a value or a closed container
/// calls for one before the next, an opening or a key does not (one test per value, where a bit
/// per depth cost the trace writer 14% of its instructions).
#[derive(Default)]
pub struct Json {
    pub buf: Vec<u8>,
    /// How many containers are open.
    depth: u32,
    /// The next value or member needs a comma before it.
    comma: bool,
}

impl Json {
    /// Before a value or member: its comma, if one is due; the next one will need one.
    #[inline]
    fn sep(&mut self) {
        if std::mem::replace(&mut self.comma, true) {
            self.buf.push(b',');
        }
    }

    #[inline]
    fn push_container(&mut self, open: u8) -> &mut Self {
        self.sep();
        self.buf.push(open);
        self.depth += 1;
        self.comma = false;
        self
    }

    /// After a container closes: a comma before the next member of the one around it; none
    /// between top-level values (the trace separates its events itself).
    #[inline]
    fn closed(&mut self, close: u8) -> &mut Self {
        self.depth = self.depth.saturating_sub(1);
        self.buf.push(close);
        self.comma = self.depth > 0;
        self
    }

    #[inline]
    pub fn open(&mut self) -> &mut Self {
        self.push_container(b'{')
    }

    #[inline]
    pub fn open_array(&mut self) -> &mut Self {
        self.push_container(b'[')
    }

    #[inline]
    pub fn close(&mut self) -> &mut Self {
        self.closed(b'}')
    }

    #[inline]
    pub fn close_array(&mut self) -> &mut Self {
        self.closed(b']')
    }

    /// `"key":` inside an object; the value follows (it must not add its own comma). Keys are
    /// clxfer's own words, or (converting a trace) whatever the trace had, escaped.
    #[inline]
    pub fn key(&mut self, key: &str) -> &mut Self {
        self.sep();
        let buf = &mut self.buf;
        buf.reserve(key.len() + 3);
        buf.push(b'"');
        escape_into(buf, key);
        buf.extend_from_slice(b"\":");
        // The value that follows is this member: no comma before it.
        self.comma = false;
        self
    }

    /// A string of clxfer's own vocabulary (names, paths, rule ids): written without the escape
    /// check.
    #[inline]
    pub fn word(&mut self, value: &'static str) -> &mut Self {
        debug_assert!(!needs_escape(value.as_bytes()));
        self.sep();
        self.buf.push(b'"');
        self.buf.extend_from_slice(value.as_bytes());
        self.buf.push(b'"');
        self
    }

    /// Words of clxfer's vocabulary joined by spaces, as one string.
    #[inline]
    pub fn words(&mut self, words: &[&'static str]) -> &mut Self {
        self.sep();
        self.buf.push(b'"');
        for (i, w) in words.iter().enumerate() {
            debug_assert!(!needs_escape(w.as_bytes()));
            if i > 0 {
                self.buf.push(b' ');
            }
            self.buf.extend_from_slice(w.as_bytes());
        }
        self.buf.push(b'"');
        self
    }

    /// A key of the trace schema.
    #[inline]
    pub fn field(&mut self, key: crate::vocab::schema::Key) -> &mut Self {
        self.qkey(key.quoted)
    }

    /// `"key":` given whole (see `quoted!`): one copy instead of three.
    #[inline]
    pub fn qkey(&mut self, quoted: &'static str) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(quoted.as_bytes());
        self.comma = false;
        self
    }

    #[inline]
    pub fn str(&mut self, value: &str) -> &mut Self {
        self.sep();
        self.escaped(value);
        self
    }

    /// An integer; beyond 2^53, where JSON readers (doubles) lose digits, a decimal string. Only
    /// sizes a driver accepted from a hostile call get there.
    #[inline]
    pub fn u64(&mut self, value: u64) -> &mut Self {
        self.sep();
        let mut digits = itoa::Buffer::new();
        let text = digits.format(value).as_bytes();
        if value > EXACT {
            self.buf.push(b'"');
            self.buf.extend_from_slice(text);
            self.buf.push(b'"');
        } else {
            self.buf.extend_from_slice(text);
        }
        self
    }

    #[inline]
    pub fn i64(&mut self, value: i64) -> &mut Self {
        self.sep();
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
        self
    }

    #[inline]
    pub fn bool(&mut self, value: bool) -> &mut Self {
        self.sep();
        self.buf
            .extend_from_slice(if value { b"true" } else { b"false" });
        self
    }

    /// Nanoseconds as microseconds (`12.345`, `12.3`, `12`): exact, no float rounding.
    #[inline]
    pub fn us(&mut self, ns: u64) -> &mut Self {
        self.sep();
        self.us_digits(ns);
        self
    }

    /// [`Json::us`] right after raw bytes that end with its key (no comma before it).
    #[inline]
    pub fn us_bare(&mut self, ns: u64) -> &mut Self {
        self.us_digits(ns);
        self
    }

    /// Without needless digits: `12.345`, `12.34`, `12` (Perfetto reads them all alike).
    #[inline]
    fn us_digits(&mut self, ns: u64) {
        let mut b = itoa::Buffer::new();
        self.buf.extend_from_slice(b.format(ns / 1000).as_bytes());
        let frac = ns % 1000;
        if frac == 0 {
            return;
        }
        let digit = |d: u64| b'0' + d as u8;
        let digits = [
            b'.',
            digit(frac / 100),
            digit(frac / 10 % 10),
            digit(frac % 10),
        ];
        let len = if frac.is_multiple_of(100) {
            2
        } else if frac.is_multiple_of(10) {
            3
        } else {
            4
        };
        self.buf.extend_from_slice(&digits[..len]);
    }

    /// A finite number to three decimals (bandwidths); non-finite values become 0.
    #[inline]
    pub fn f3(&mut self, value: f64) -> &mut Self {
        self.sep();
        let v = if value.is_finite() { value } else { 0.0 };
        // Half up by adding a half and truncating: `round` is a libm call on baseline x86-64.
        let scaled = (v.abs() * 1000.0 + 0.5) as u64;
        if v < 0.0 && scaled > 0 {
            self.buf.push(b'-');
        }
        self.us_digits(scaled);
        self
    }

    /// A 64-bit value (pointer, handle) as a hex string: JSON numbers lose precision above 2^53.
    pub fn hex(&mut self, value: u64) -> &mut Self {
        self.sep();
        // Digits from the lowest, into a stack buffer: no allocation per pointer.
        let mut digits = [0u8; 16];
        let mut at = digits.len();
        let mut v = value;
        loop {
            at -= 1;
            digits[at] = b"0123456789abcdef"[(v & 0xf) as usize];
            v >>= 4;
            if v == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(b"\"0x");
        self.buf.extend_from_slice(&digits[at..]);
        self.buf.push(b'"');
        self
    }

    /// One string of clxfer's words and numbers (`"device #" 1 " queue #" 2` →
    /// `"device #1 queue #2"`): nothing to escape.
    #[inline]
    pub fn raw_parts(&mut self, parts: &[Part]) -> &mut Self {
        self.sep();
        self.buf.push(b'"');
        for p in parts {
            match *p {
                Part::Text(t) => self.buf.extend_from_slice(t.as_bytes()),
                Part::Num(n) => self
                    .buf
                    .extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
            }
        }
        self.buf.push(b'"');
        self
    }

    /// Raw JSON bytes: one value, or members inside an object (`"a":1,"b":2`) as if written one
    /// by one.
    #[inline]
    pub fn raw_bytes(&mut self, json: &[u8]) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(json);
        self
    }

    #[inline]
    fn escaped(&mut self, s: &str) {
        self.buf.push(b'"');
        escape_into(&mut self.buf, s);
        self.buf.push(b'"');
    }

    /// A string value written from its `Display`, escaped on the fly (no intermediate `String`).
    pub fn display(&mut self, value: &dyn std::fmt::Display) -> &mut Self {
        use std::fmt::Write as _;
        self.sep();
        self.buf.push(b'"');
        let _ = write!(Escaper(&mut self.buf), "{value}");
        self.buf.push(b'"');
        self
    }

    /// Empty again, its buffer kept.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.depth = 0;
        self.comma = false;
    }

    /// A number that is not an integer (read from a trace): the shortest text that reads back
    /// the same; JSON has no NaN or infinity, which become 0.
    pub fn f64(&mut self, value: f64) -> &mut Self {
        use std::io::Write as _;
        self.sep();
        let v = if value.is_finite() { value } else { 0.0 };
        let _ = write!(self.buf, "{v}");
        self
    }

    /// Whether every container opened was closed.
    pub fn balanced(&self) -> bool {
        self.depth == 0
    }
}

/// `quoted!("ts")` is `"ts":`, for [`Json::qkey`].
macro_rules! quoted {
    ($key:literal) => {
        concat!("\"", $key, "\":")
    };
}
pub(crate) use quoted;

impl Emit for Json {
    #[inline]
    fn begin_event(&mut self, h: &Head, heads: &mut Heads) {
        self.open();
        self.qkey(quoted!("name"));
        match (&h.kind, h.name) {
            (Kind::Track { thread, meta }, _) => self.word(track_event_name(*thread, meta)),
            (_, Name::Words(w)) => self.words(w),
            (_, Name::Shown(d)) => self.display(d),
            (_, Name::Text(t)) => self.str(t),
        };
        let ph = ph_word(&h.kind);
        match h.cat {
            Text::Word(cat) => {
                let at = |s: &str| (s.as_ptr() as usize, s.len());
                let key = (at(cat), at(ph), h.pid, h.tid);
                // One copy for five members; the timestamp follows its key. Looked up before
                // the entry is made: nearly every event finds its head.
                match heads.get(&key) {
                    Some(head) => self.raw_bytes(head),
                    None => {
                        let head = head(cat, ph, h.pid, h.tid);
                        self.raw_bytes(&head);
                        if heads.len() >= HEADS_CACHED {
                            heads.clear();
                        }
                        heads.insert(key, head);
                        &mut *self
                    }
                }
            }
            // Text read from a trace: its address says nothing of what it holds next time.
            Text::Str(cat) => self.raw_bytes(&head(cat, ph, h.pid, h.tid)),
        }
        .us_bare(h.ts);
        match &h.kind {
            Kind::Slice { dur } => {
                self.qkey(quoted!("dur")).us(*dur);
            }
            Kind::Instant(scope) => {
                self.qkey(quoted!("s")).word(scope.letter());
            }
            Kind::Flow { end, id } => {
                if *end == End::Finish {
                    self.qkey(quoted!("bp")).word("e");
                }
                self.qkey(quoted!("id"));
                match id {
                    FlowId::Num(n) => self.u64(*n),
                    FlowId::Text(t) => self.str(t),
                };
            }
            Kind::Counter { key, value } => {
                self.qkey(quoted!("args"))
                    .open()
                    .key(key)
                    .i64(*value)
                    .close();
            }
            Kind::Track { meta, .. } => {
                self.qkey(quoted!("args")).open();
                match meta {
                    Meta::Name(n) => self.qkey(quoted!("name")).str(n),
                    Meta::Rank(r) => self.qkey(quoted!("sort_index")).i64(*r),
                };
                self.close();
            }
            Kind::Other { .. } => {}
        }
    }

    #[inline]
    fn args(&mut self) -> &mut Self {
        self.qkey(quoted!("args")).open()
    }

    #[inline]
    fn end_event(&mut self) {
        self.close();
        self.buf.extend_from_slice(b",\n");
    }

    #[inline]
    fn start(&mut self, _start_mono_ns: u64, capacity: usize) {
        self.buf.reserve(capacity);
        self.buf.extend_from_slice(b"[\n");
    }

    /// Closes the array after the last event (whose separator goes: strict readers refuse a
    /// trailing comma).
    #[inline]
    fn finish(&mut self) {
        if self.buf.ends_with(b",\n") {
            self.buf.truncate(self.buf.len() - 2);
        }
        self.buf.extend_from_slice(b"\n]\n");
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        &self.buf
    }

    #[inline]
    fn clear(&mut self) {
        Json::clear(self)
    }

    /// Each event ends with `,\n`.
    #[inline]
    fn fit(&self, room: usize) -> usize {
        let room = room.min(self.buf.len());
        (self.buf[..room].windows(2))
            .rposition(|w| w == b",\n")
            .map_or(0, |i| i + 2)
    }

    #[inline]
    fn open(&mut self) -> &mut Self {
        Json::open(self)
    }
    #[inline]
    fn close(&mut self) -> &mut Self {
        Json::close(self)
    }
    #[inline]
    fn open_array(&mut self) -> &mut Self {
        Json::open_array(self)
    }
    #[inline]
    fn close_array(&mut self) -> &mut Self {
        Json::close_array(self)
    }
    #[inline]
    fn key(&mut self, key: &str) -> &mut Self {
        Json::key(self, key)
    }
    #[inline]
    fn qkey(&mut self, quoted: &'static str) -> &mut Self {
        Json::qkey(self, quoted)
    }
    #[inline]
    fn field(&mut self, key: crate::vocab::schema::Key) -> &mut Self {
        Json::field(self, key)
    }
    #[inline]
    fn word(&mut self, value: &'static str) -> &mut Self {
        Json::word(self, value)
    }
    #[inline]
    fn words(&mut self, words: &[&'static str]) -> &mut Self {
        Json::words(self, words)
    }
    #[inline]
    fn str(&mut self, value: &str) -> &mut Self {
        Json::str(self, value)
    }
    #[inline]
    fn display(&mut self, value: &dyn std::fmt::Display) -> &mut Self {
        Json::display(self, value)
    }
    #[inline]
    fn u64(&mut self, value: u64) -> &mut Self {
        Json::u64(self, value)
    }
    #[inline]
    fn i64(&mut self, value: i64) -> &mut Self {
        Json::i64(self, value)
    }
    #[inline]
    fn bool(&mut self, value: bool) -> &mut Self {
        Json::bool(self, value)
    }
    #[inline]
    fn f64(&mut self, value: f64) -> &mut Self {
        Json::f64(self, value)
    }
    #[inline]
    fn null(&mut self) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(b"null");
        self
    }
    #[inline]
    fn us(&mut self, ns: u64) -> &mut Self {
        Json::us(self, ns)
    }
    #[inline]
    fn f3(&mut self, value: f64) -> &mut Self {
        Json::f3(self, value)
    }
    #[inline]
    fn hex(&mut self, value: u64) -> &mut Self {
        Json::hex(self, value)
    }
    #[inline]
    fn raw_bytes(&mut self, bytes: &[u8]) -> &mut Self {
        Json::raw_bytes(self, bytes)
    }
    #[inline]
    fn raw_json(&mut self, json: &str) -> &mut Self {
        Json::raw_bytes(self, json.as_bytes())
    }
    #[inline]
    fn raw_parts(&mut self, parts: &[Part]) -> &mut Self {
        Json::raw_parts(self, parts)
    }
}

/// Chrome's phase letter of `kind`, as one of clxfer's constants (the heads' cache keys on its
/// address): the other phases a trace may carry (`B`, `E`, other metadata) map to their own.
fn ph_word(kind: &Kind<&str>) -> &'static str {
    match (kind.letter(), kind) {
        (Some(letter), _) => letter,
        (None, Kind::Other { ph: "B" }) => "B",
        (None, Kind::Other { ph: "E" }) => "E",
        _ => "M",
    }
}

/// Event heads kept rendered, at most (then the cache starts afresh).
const HEADS_CACHED: usize = 4096;

/// What follows an event's name, up to its timestamp: `"cat":…,"ph":…,"pid":…,"tid":…,"ts":`.
#[cold]
fn head(cat: &str, ph: &'static str, pid: u32, tid: u32) -> Box<[u8]> {
    let mut h = Json::default();
    h.qkey(quoted!("cat")).str(cat);
    h.qkey(quoted!("ph")).word(ph);
    // Both below 2^32: plain JSON numbers.
    h.qkey(quoted!("pid")).u64(pid.into());
    h.qkey(quoted!("tid")).u64(tid.into());
    h.qkey(quoted!("ts"));
    h.buf.into()
}

/// Appends `s` with JSON's escapes. Most strings need none: they are copied whole.
fn escape_into(buf: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if !needs_escape(bytes) {
        buf.extend_from_slice(bytes);
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => {
                buf.extend_from_slice(&bytes[start..i]);
                buf.extend_from_slice(format!("\\u{b:04x}").as_bytes());
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        buf.extend_from_slice(&bytes[start..i]);
        buf.extend_from_slice(esc);
        start = i + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
}

/// Whether any byte is a control character, `"` or `\\`: eight bytes at a time (SWAR).
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES * 0x80;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let x = u64::from_le_bytes(c.try_into().unwrap_or_default());
        let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0;
        if control || has_zero(x ^ (ONES * b'"' as u64)) || has_zero(x ^ (ONES * b'\\' as u64)) {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// `fmt::Write` into a JSON string body.
struct Escaper<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Escaper<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        escape_into(self.0, s);
        Ok(())
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
        j.key("zero").hex(0);
        j.key("list").open_array();
        j.u64(1).u64(u64::MAX).bool(false);
        j.u64(EXACT).u64(EXACT + 1);
        j.open().key("x").u64(1).close();
        j.close_array();
        j.key("empty").open().close();
        j.key("shown").display(&format_args!("a{}\"b", 1));
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
        assert_eq!(v["zero"], "0x0");
        assert_eq!(v["list"][1], "18446744073709551615");
        assert_eq!(v["list"][3], EXACT);
        assert_eq!(v["list"][4], (EXACT + 1).to_string());
        assert_eq!(v["list"][5]["x"], 1);
        assert!(v["empty"].as_object().unwrap().is_empty());
        assert_eq!(v["shown"], "a1\"b");
    }

    #[test]
    fn commas_go_between_members_at_every_depth_and_never_between_top_level_values() {
        let mut j = Json::default();
        for i in 0..2 {
            j.open().qkey(quoted!("i")).u64(i);
            j.raw_bytes(b"\"pid\":1,\"tid\":2");
            j.key("a").open_array();
            j.open_array().close_array();
            j.open_array().u64(1).open().close().close_array();
            j.u64(2).close_array();
            j.key("o")
                .open()
                .key("p")
                .open()
                .close()
                .key("q")
                .u64(3)
                .close();
            j.close();
            j.buf.extend_from_slice(b"\n");
        }
        assert!(j.balanced());
        let text = String::from_utf8(j.buf).unwrap();
        let line = r#"{"i":0,"pid":1,"tid":2,"a":[[],[1,{}],2],"o":{"p":{},"q":3}}"#;
        assert_eq!(
            text,
            format!("{line}\n{}\n", line.replace("\"i\":0", "\"i\":1"))
        );
    }

    #[test]
    fn the_fast_check_finds_every_byte_that_needs_escaping() {
        for len in 0..20 {
            for at in 0..len {
                for b in 0u8..=255 {
                    let mut v = vec![b'a'; len];
                    v[at] = b;
                    let slow = v.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\');
                    assert_eq!(needs_escape(&v), slow, "{v:?}");
                }
            }
        }
    }
}
