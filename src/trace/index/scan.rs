//! A JSON event of one line read for the index without building it: its phase, name, track,
//! times, arrow id and the few args its colour and its joins need, straight from the bytes. What
//! this fast path does not take as plainly as clxfer writes it (an escape in a name, a number
//! with an exponent, a value of an unexpected type) it leaves to serde and the trace reader
//! (`crate::json::read`), so that both read the same events.

use super::colour::PER_CALL;

/// An arrow's id: a number, or text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Id<'a> {
    Num(u64),
    Text(&'a str),
}

/// What a slice's args say for the index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Said<'a> {
    pub command: Option<u64>,
    pub class: Option<u64>,
    pub path: Option<&'a [u8]>,
    /// A kernel is named (a truthy `kernel`).
    pub kernel: bool,
    /// A key that is not one of a compact slice's per-call keys: the slice carries its class's
    /// members.
    pub members: bool,
}

/// One event's line, as far as the index reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Line<'a> {
    pub ph: u8,
    pub name: &'a [u8],
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    /// ns.
    pub ts: Option<u64>,
    pub dur: Option<u64>,
    pub id: Option<Id<'a>>,
    /// `"bp":"e"`: an arrow's end bound to its enclosing slice.
    pub bp_e: bool,
    pub said: Said<'a>,
}

/// The first place from `i` of byte `a` or `b` in `s`, eight bytes at a time.
pub fn find(s: &[u8], mut i: usize, a: u8, b: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let (ma, mb) = (LO * u64::from(a), LO * u64::from(b));
    while let Some(chunk) = s.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let (xa, xb) = (w ^ ma, w ^ mb);
        // A zero byte of `xa` or `xb`: the lowest one found is exact.
        let z = (xa.wrapping_sub(LO) & !xa & HI) | (xb.wrapping_sub(LO) & !xb & HI);
        if z != 0 {
            return Some(i + (z.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    (i..s.len()).find(|&k| s[k] == a || s[k] == b)
}

struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cur<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\r' | b'\n') {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string without escapes (one with any is serde's to read).
    fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        // Keys and words are short: a byte at a time first, then eight.
        let head = self.b.get(start..(start + 16).min(self.b.len()))?;
        let end = match head.iter().position(|&c| c == b'"' || c == b'\\') {
            Some(k) => start + k,
            None => find(self.b, start + head.len(), b'"', b'\\')?,
        };
        if self.b[end] != b'"' {
            return None;
        }
        self.i = end + 1;
        Some(&self.b[start..end])
    }

    /// An unsigned integer, digits only.
    fn uint(&mut self) -> Option<u64> {
        self.ws();
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(&c @ b'0'..=b'9') = self.b.get(self.i) {
            v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            self.i += 1;
        }
        (self.i > start && !matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E'))).then_some(v)
    }

    /// Nanoseconds of a non-negative number of microseconds, as the reader rounds them.
    fn us(&mut self) -> Option<u64> {
        self.ws();
        let start = self.i;
        let whole = self.uint_part()?;
        if self.b.get(self.i) != Some(&b'.') {
            return (!matches!(self.b.get(self.i), Some(b'e' | b'E'))).then(|| whole * 1000);
        }
        self.i += 1;
        let frac_at = self.i;
        while let Some(b'0'..=b'9') = self.b.get(self.i) {
            self.i += 1;
        }
        let frac = &self.b[frac_at..self.i];
        if frac.is_empty() || matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            return None;
        }
        if frac.len() <= 3 {
            let mut f = 0;
            for (k, &c) in frac.iter().enumerate() {
                f += u64::from(c - b'0') * [100, 10, 1][k];
            }
            return whole.checked_mul(1000)?.checked_add(f);
        }
        let v: f64 = std::str::from_utf8(&self.b[start..self.i])
            .ok()?
            .parse()
            .ok()?;
        Some((v * 1000.0).round() as u64)
    }

    /// The digits before a number's point, at most 15 of them (exact as a double, as the reader
    /// holds it).
    fn uint_part(&mut self) -> Option<u64> {
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(&c @ b'0'..=b'9') = self.b.get(self.i) {
            v = v * 10 + u64::from(c - b'0');
            self.i += 1;
            if self.i - start > 15 {
                return None;
            }
        }
        (self.i > start).then_some(v)
    }

    /// Past any value (strings with escapes, objects and arrays nested).
    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                while let Some(&c) = self.b.get(self.i) {
                    match c {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                None
            }
            _ => {
                let start = self.i;
                while let Some(&c) = self.b.get(self.i) {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                        break;
                    }
                    self.i += 1;
                }
                (self.i > start).then_some(())
            }
        }
    }

    fn skip_string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            let at = find(self.b, self.i, b'"', b'\\')?;
            self.i = at + 1;
            if self.b[at] == b'"' {
                return Some(());
            }
            // An escape: past the escaped byte.
            self.i += 1;
        }
    }

    /// Whether the value next is truthy, as the page's `a.kernel` tests it (then past it).
    fn truthy(&mut self) -> Option<bool> {
        let at = self.i;
        let v = match self.peek()? {
            b'"' => self.b.get(self.i + 1) != Some(&b'"'),
            b't' | b'{' | b'[' => true,
            b'1'..=b'9' => true,
            _ => false,
        };
        self.i = at;
        self.skip_value()?;
        Some(v)
    }

    /// Separator after a member: `true` for another, `false` at the object's end.
    fn more(&mut self) -> Option<bool> {
        match self.peek()? {
            b',' => {
                self.i += 1;
                Some(true)
            }
            b'}' => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    fn args(&mut self) -> Option<Said<'a>> {
        let mut said = Said::default();
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(said);
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            match key {
                b"command" => said.command = Some(self.uint()?),
                b"class" => said.class = Some(self.uint()?),
                b"path" => said.path = Some(self.string()?),
                b"kernel" => said.kernel = self.truthy()?,
                _ => self.skip_value()?,
            }
            said.members |= !PER_CALL.iter().any(|k| k.as_bytes() == key);
            if !self.more()? {
                return Some(said);
            }
        }
    }
}

/// The event `b` (one JSON object, nothing after it but blanks) as the index reads it; `None`
/// where serde is to read it.
pub fn line(b: &[u8]) -> Option<Line<'_>> {
    let mut c = Cur { b, i: 0 };
    let mut l = Line::default();
    c.eat(b'{')?;
    loop {
        let key = c.string()?;
        c.eat(b':')?;
        match key {
            b"name" => l.name = c.string()?,
            b"ph" => match c.string()? {
                [p] => l.ph = *p,
                _ => return None,
            },
            b"pid" => l.pid = Some(u32::try_from(c.uint()?).ok()?),
            b"tid" => l.tid = Some(u32::try_from(c.uint()?).ok()?),
            b"ts" => l.ts = Some(c.us()?),
            b"dur" => l.dur = Some(c.us()?),
            b"id" => {
                l.id = Some(match c.peek()? {
                    b'"' => Id::Text(std::str::from_utf8(c.string()?).ok()?),
                    _ => Id::Num(c.uint().filter(|&v| v <= crate::vocab::schema::EXACT)?),
                })
            }
            b"bp" => l.bp_e = c.string()? == b"e",
            b"args" => l.said = c.args()?,
            _ => c.skip_value()?,
        }
        if !c.more()? {
            break;
        }
    }
    c.ws();
    (c.i == b.len()).then_some(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_as_clxfer_writes_it() {
        let l = line(
            br#"{"name":"clEnqueueWriteBuffer H2D staged","cat":"enqueue","ph":"X","pid":6853,"tid":6854,"ts":20477.823,"dur":6073.5,"args":{"command":1,"bytes":8388608,"class":1,"api":"clEnqueueWriteBuffer","path":"staged","reasons":["[a] \"b\"",{"x":[1]}]}}"#,
        )
        .unwrap();
        assert_eq!(
            (l.ph, l.name, l.pid, l.tid, l.ts, l.dur),
            (
                b'X',
                &b"clEnqueueWriteBuffer H2D staged"[..],
                Some(6853),
                Some(6854),
                Some(20_477_823),
                Some(6_073_500)
            )
        );
        assert_eq!(
            l.said,
            Said {
                command: Some(1),
                class: Some(1),
                path: Some(b"staged"),
                kernel: false,
                members: true
            }
        );
        let compact = line(br#"{"ph":"X","pid":1,"tid":1,"ts":5,"dur":0.5,"args":{"command":2,"bytes":9,"class":1}}"#).unwrap();
        assert!(!compact.said.members);
        assert_eq!((compact.ts, compact.dur), (Some(5000), Some(500)));
        let flow =
            line(br#"{"name":"enqueue","ph":"f","pid":1,"tid":2,"ts":3,"bp":"e","id":7}"#).unwrap();
        assert_eq!((flow.id, flow.bp_e), (Some(Id::Num(7)), true));
        let kernel = line(br#"{"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"args":{"kernel":"k"}}"#);
        assert!(kernel.unwrap().said.kernel);
    }

    #[test]
    fn bytes_are_found_eight_at_a_time_as_one_at_a_time() {
        let text = b"abc\\defghijklmnop\"qrstuvwxyz0123456789\n";
        for from in 0..text.len() {
            for (a, b) in [(b'"', b'\\'), (b'\n', b'\n'), (b'z', b'q'), (b'#', b'#')] {
                let want = (from..text.len()).find(|&k| text[k] == a || text[k] == b);
                assert_eq!(find(text, from, a, b), want, "{from} {a} {b}");
            }
        }
    }

    #[test]
    fn what_it_leaves_to_serde() {
        for text in [
            r#"{"name":"a\"b","ph":"X","pid":1,"tid":1,"ts":1,"dur":1}"#,
            r#"{"ph":"X","pid":-1,"tid":1,"ts":1,"dur":1}"#,
            r#"{"ph":"X","pid":1,"tid":1,"ts":1e3,"dur":1}"#,
            r#"{"ph":"X","pid":4294967296,"tid":1,"ts":1,"dur":1}"#,
            r#"{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1} x"#,
            r#"{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"args":{"command":1.5}}"#,
            r#"{"ph":"s","pid":1,"tid":1,"ts":1,"id":2.5}"#,
            r#"{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1"#,
        ] {
            assert_eq!(line(text.as_bytes()), None, "{text}");
        }
        // More than three decimals: rounded as the reader rounds them.
        let l = line(br#"{"ph":"X","pid":1,"tid":1,"ts":1.00049,"dur":0.0005}"#).unwrap();
        assert_eq!((l.ts, l.dur), (Some(1000), Some(1)));
    }
}
