//! Protocol buffers' wire format, by hand: varints, keys, length-delimited fields, written and
//! read. A crate (prost, protobuf) builds each message as a struct and then encodes it; clxfer
//! writes a handful of field kinds at millions of events a second, and reads them back the same
//! way, which is a few lines each.

use super::fields::{FIXED32, FIXED64, LEN, VARINT};

pub fn varint(b: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        b.push(v as u8 | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
}

pub fn key(b: &mut Vec<u8>, field: u32, kind: u8) {
    varint(b, (u64::from(field) << 3) | u64::from(kind));
}

pub fn uint(b: &mut Vec<u8>, field: u32, v: u64) {
    key(b, field, VARINT);
    varint(b, v);
}

/// An `int64`: negative values take ten bytes, as the schema's `int64` fields want.
pub fn int(b: &mut Vec<u8>, field: u32, v: i64) {
    uint(b, field, v as u64);
}

pub fn double(b: &mut Vec<u8>, field: u32, v: f64) {
    key(b, field, FIXED64);
    b.extend_from_slice(&v.to_le_bytes());
}

pub fn bytes(b: &mut Vec<u8>, field: u32, data: &[u8]) {
    key(b, field, LEN);
    varint(b, data.len() as u64);
    b.extend_from_slice(data);
}

/// Opens a nested message as `field`: returns where its content starts, for [`close`].
pub fn open(b: &mut Vec<u8>, field: u32) -> usize {
    key(b, field, LEN);
    // One byte of length, the usual case; [`close`] makes room for more.
    b.push(0);
    b.len()
}

/// Closes the nested message opened at `start`: its length goes in front.
pub fn close(b: &mut Vec<u8>, start: usize) {
    let len = b.len() - start;
    if len < 0x80 {
        b[start - 1] = len as u8;
    } else {
        let mut v = Vec::with_capacity(4);
        varint(&mut v, len as u64);
        b.splice(start - 1..start, v);
    }
}

/// One field as read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

impl<'a> Value<'a> {
    pub fn uint(&self) -> u64 {
        match *self {
            Value::Varint(v) | Value::Fixed64(v) => v,
            Value::Fixed32(v) => v.into(),
            Value::Bytes(_) => 0,
        }
    }

    pub fn bytes(&self) -> &'a [u8] {
        match *self {
            Value::Bytes(b) => b,
            _ => &[],
        }
    }
}

/// Why bytes are not a message.
#[derive(Debug, PartialEq)]
pub struct Malformed(pub &'static str);

/// The fields of a message, in order: (field number, value).
pub struct Fields<'a> {
    b: &'a [u8],
    at: usize,
}

pub fn fields(b: &[u8]) -> Fields<'_> {
    Fields { b, at: 0 }
}

impl<'a> Fields<'a> {
    fn read_varint(&mut self) -> Result<u64, Malformed> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let &byte = self
                .b
                .get(self.at)
                .ok_or(Malformed("a varint runs past the end"))?;
            self.at += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(v);
            }
        }
        Err(Malformed("a varint longer than ten bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or(Malformed("a field runs past the end of its message"))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// Where the next field starts (after a whole one: how much of the input is whole).
    pub fn offset(&self) -> usize {
        self.at
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>), Malformed>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.b.len() {
            return None;
        }
        let field = (|| {
            let key = self.read_varint()?;
            let (field, kind) = ((key >> 3) as u32, (key & 7) as u8);
            if field == 0 {
                return Err(Malformed("field number 0"));
            }
            let value = match kind {
                VARINT => Value::Varint(self.read_varint()?),
                FIXED64 => {
                    let b = self.take(8)?;
                    Value::Fixed64(u64::from_le_bytes(b.try_into().unwrap_or_default()))
                }
                FIXED32 => {
                    let b = self.take(4)?;
                    Value::Fixed32(u32::from_le_bytes(b.try_into().unwrap_or_default()))
                }
                LEN => {
                    let n = self.read_varint()?;
                    let n = usize::try_from(n).map_err(|_| Malformed("a length past memory"))?;
                    Value::Bytes(self.take(n)?)
                }
                _ => return Err(Malformed("a wire type clxfer does not write (groups)")),
            };
            Ok((field, value))
        })();
        if field.is_err() {
            // Nothing after a malformed field can be trusted.
            self.at = self.b.len();
        }
        Some(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_back_as_written() {
        let mut b = Vec::new();
        uint(&mut b, 1, 0);
        uint(&mut b, 2, 300);
        uint(&mut b, 3, u64::MAX);
        int(&mut b, 4, -1);
        double(&mut b, 5, 2.5);
        bytes(&mut b, 6, b"hi");
        let at = open(&mut b, 7);
        bytes(&mut b, 1, &[7u8; 200]);
        close(&mut b, at);
        let at = open(&mut b, 8);
        close(&mut b, at);
        let got: Vec<(u32, Value)> = fields(&b).map(Result::unwrap).collect();
        let mut inner = Vec::new();
        bytes(&mut inner, 1, &[7u8; 200]);
        assert_eq!(
            got,
            vec![
                (1, Value::Varint(0)),
                (2, Value::Varint(300)),
                (3, Value::Varint(u64::MAX)),
                (4, Value::Varint(u64::MAX)),
                (5, Value::Fixed64(2.5f64.to_bits())),
                (6, Value::Bytes(b"hi")),
                (7, Value::Bytes(&inner)),
                (8, Value::Bytes(&[])),
            ]
        );
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        for bad in [
            &[0x08u8, 0x80][..],
            &[0x0a, 0x05, 1],
            &[0x00],
            &[0x0b],
            &[0x08; 1],
        ] {
            assert!(fields(bad).any(|f| f.is_err()), "{bad:?}");
        }
    }
}
