//! Interning: a text written once per sequence, in the packet that first uses it, and named by a
//! small number (its iid) after that. One table per `InternedData` field (event names,
//! categories, annotation names, string values).

use super::fields::interned as i;
use super::wire;
use rustc_hash::FxHashMap;

/// Entries a table holds at most; past it, texts are written in full.
const INTERNED: usize = 1 << 16;

/// Words an event name is made of at most when looked up by address ([`Table::iid_words`]).
const WORDS: usize = 3;

/// What an event's name or category is: clxfer's own words (constants, looked up by address and
/// joined by spaces), or text.
#[derive(Clone, Copy)]
pub enum Label<'a> {
    Words(&'a [&'static str]),
    Text(&'a str),
}

#[derive(Default)]
pub struct Table {
    ids: FxHashMap<Box<str>, u64>,
    /// clxfer's own words by address (up to [`WORDS`] of them, joined): one lookup of a few words
    /// instead of joining and hashing the text, at every event and annotation.
    words: FxHashMap<[(usize, usize); WORDS], u64>,
}

impl Table {
    /// The iid of `label` (see [`Table::iid`]); `scratch` is room to join its words in.
    pub fn iid_label(
        &mut self,
        label: Label,
        field: u32,
        new: &mut Vec<u8>,
        scratch: &mut String,
    ) -> Option<u64> {
        match label {
            Label::Words(w) if w.len() <= WORDS => self.iid_words(w, field, new, scratch),
            Label::Words(w) => {
                join(w, scratch);
                self.iid(scratch, field, new)
            }
            Label::Text(t) => self.iid(t, field, new),
        }
    }

    fn iid_words(
        &mut self,
        words: &[&'static str],
        field: u32,
        new: &mut Vec<u8>,
        scratch: &mut String,
    ) -> Option<u64> {
        let mut at = [(0, 0); WORDS];
        for (slot, w) in at.iter_mut().zip(words) {
            *slot = (w.as_ptr() as usize, w.len());
        }
        if let Some(&id) = self.words.get(&at) {
            return Some(id);
        }
        let id = match words {
            [word] => self.iid(word, field, new)?,
            _ => {
                join(words, scratch);
                self.iid(scratch, field, new)?
            }
        };
        self.words.insert(at, id);
        Some(id)
    }

    /// [`Table::iid`] for one of clxfer's own words.
    pub fn iid_static(&mut self, text: &'static str, field: u32, new: &mut Vec<u8>) -> Option<u64> {
        self.iid_words(&[text], field, new, &mut String::new())
    }

    /// The iid of `text`, adding it to `new` (this packet's interned data) the first time;
    /// `None` when the table is full.
    pub fn iid(&mut self, text: &str, field: u32, new: &mut Vec<u8>) -> Option<u64> {
        if let Some(&id) = self.ids.get(text) {
            return Some(id);
        }
        if self.ids.len() >= INTERNED {
            return None;
        }
        let id = self.ids.len() as u64 + 1;
        self.ids.insert(text.into(), id);
        let at = wire::open(new, field);
        wire::uint(new, i::IID, id);
        wire::bytes(new, i::TEXT, text.as_bytes());
        wire::close(new, at);
        Some(id)
    }
}

/// `words` joined by spaces, in `into`.
pub fn join(words: &[&str], into: &mut String) {
    into.clear();
    for (n, w) in words.iter().enumerate() {
        if n > 0 {
            into.push(' ');
        }
        into.push_str(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_their_text_share_one_iid_and_are_interned_once() {
        let mut t = Table::default();
        let (mut new, mut scratch) = (Vec::new(), String::new());
        let words: &[&'static str] = &["clEnqueueWriteBuffer", "H2D", "staged"];
        let a = t.iid_label(Label::Words(words), i::NAMES, &mut new, &mut scratch);
        let once = new.len();
        let b = t.iid_label(Label::Words(words), i::NAMES, &mut new, &mut scratch);
        let c = t.iid_label(
            Label::Text("clEnqueueWriteBuffer H2D staged"),
            i::NAMES,
            &mut new,
            &mut scratch,
        );
        assert_eq!((a, b, c), (Some(1), Some(1), Some(1)));
        assert_eq!(new.len(), once, "interned once");
        let d = t.iid_label(Label::Words(&["enqueue"]), i::NAMES, &mut new, &mut scratch);
        assert_eq!(d, Some(2));
        assert_eq!(t.iid_static("enqueue", i::NAMES, &mut new), Some(2));
    }
}
