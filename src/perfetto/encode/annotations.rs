//! The encoder's debug annotations: an event's args, interned names and short strings by iid, in
//! the event's packet as they are written.

use super::*;

impl Encoder {
    // The annotations of the next event: a key, then its value (or a container, closed after
    // its members).

    pub fn key(&mut self, key: &str) -> &mut Self {
        self.key_text.clear();
        self.key_text.push_str(key);
        self.key = Key::Text;
        self
    }

    /// [`Encoder::key`] for one of clxfer's own words.
    pub fn key_static(&mut self, key: &'static str) -> &mut Self {
        self.key = Key::Static(key);
        self
    }

    /// [`Encoder::key`] for a key of clxfer's schema, by its index there.
    pub fn key_field(&mut self, key: crate::vocab::schema::Key) -> &mut Self {
        self.key = Key::Field(key.index, key.name);
        self
    }

    /// Opens one annotation in what is open, named by the pending key.
    pub(super) fn annotation(&mut self) -> usize {
        let within = self.open.last().copied().unwrap_or(In::Event);
        let field = match within {
            In::Event => ev::DEBUG_ANNOTATIONS,
            In::Dict(_) => a::DICT,
            In::Array(_) => a::ARRAY,
        };
        let key = std::mem::replace(&mut self.key, Key::None);
        let at = wire::open(&mut self.args, field);
        if matches!(within, In::Array(_)) || key == Key::None {
            return at;
        }
        let text = match key {
            Key::Static(k) | Key::Field(_, k) => k,
            _ => self.key_text.as_str(),
        };
        let iid = match (within, key) {
            (In::Event, Key::Field(ix, k)) if !self.inline => {
                let seq = &mut self.sequences[self.cur];
                match seq.fields.get(ix as usize) {
                    Some(&id) if id != 0 => Some(id),
                    _ => {
                        let id = seq
                            .keys
                            .iid_static(k, i::ANNOTATION_NAMES, &mut self.interned);
                        if seq.fields.len() <= ix as usize {
                            seq.fields.resize(ix as usize + 1, 0);
                        }
                        seq.fields[ix as usize] = id.unwrap_or(0);
                        id
                    }
                }
            }
            (In::Event, Key::Static(k)) if !self.inline => self.sequences[self.cur]
                .keys
                .iid_static(k, i::ANNOTATION_NAMES, &mut self.interned),
            (In::Event, _) if !self.inline => {
                self.sequences[self.cur]
                    .keys
                    .iid(text, i::ANNOTATION_NAMES, &mut self.interned)
            }
            _ => None,
        };
        match iid {
            Some(id) => wire::uint(&mut self.args, a::NAME_IID, id),
            None => wire::bytes(&mut self.args, a::NAME, text.as_bytes()),
        }
        at
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        let at = self.annotation();
        wire::uint(&mut self.args, a::UINT, v);
        wire::close(&mut self.args, at);
        self
    }

    pub fn i64(&mut self, v: i64) -> &mut Self {
        let at = self.annotation();
        wire::int(&mut self.args, a::INT, v);
        wire::close(&mut self.args, at);
        self
    }

    pub fn f64(&mut self, v: f64) -> &mut Self {
        let at = self.annotation();
        wire::double(&mut self.args, a::DOUBLE, v);
        wire::close(&mut self.args, at);
        self
    }

    pub fn bool(&mut self, v: bool) -> &mut Self {
        let at = self.annotation();
        wire::uint(&mut self.args, a::BOOL, u64::from(v));
        wire::close(&mut self.args, at);
        self
    }

    /// A pointer or handle (the JSON's hex strings).
    pub fn pointer(&mut self, v: u64) -> &mut Self {
        let at = self.annotation();
        wire::uint(&mut self.args, a::POINTER, v);
        wire::close(&mut self.args, at);
        self
    }

    /// [`Encoder::str`] for one of clxfer's own words.
    pub fn str_static(&mut self, v: &'static str) -> &mut Self {
        let id = (!self.inline)
            .then(|| {
                let strings = &mut self.sequences[self.cur].strings;
                strings.iid_static(v, i::STRINGS, &mut self.interned)
            })
            .flatten();
        self.string(v, id)
    }

    pub fn str(&mut self, v: &str) -> &mut Self {
        let id = (v.len() <= INTERN_LEN && !self.inline)
            .then(|| {
                let strings = &mut self.sequences[self.cur].strings;
                strings.iid(v, i::STRINGS, &mut self.interned)
            })
            .flatten();
        self.string(v, id)
    }

    /// A string annotation: by its interned id, or in full.
    fn string(&mut self, v: &str, id: Option<u64>) -> &mut Self {
        let at = self.annotation();
        match id {
            Some(id) => wire::uint(&mut self.args, a::STRING_IID, id),
            None => wire::bytes(&mut self.args, a::STRING, v.as_bytes()),
        }
        wire::close(&mut self.args, at);
        self
    }

    /// A whole JSON value as text (the run's report: one annotation, not thousands).
    pub fn json(&mut self, text: &str) -> &mut Self {
        let at = self.annotation();
        wire::bytes(&mut self.args, a::JSON, text.as_bytes());
        wire::close(&mut self.args, at);
        self
    }

    pub fn open_dict(&mut self) -> &mut Self {
        let at = self.annotation();
        self.open.push(In::Dict(at));
        self
    }

    pub fn open_array(&mut self) -> &mut Self {
        let at = self.annotation();
        self.open.push(In::Array(at));
        self
    }

    pub fn close(&mut self) -> &mut Self {
        if let Some(In::Dict(at) | In::Array(at)) = self.open.pop() {
            wire::close(&mut self.args, at);
        }
        self
    }
}
