//! What repeats from call to call, said once: a host slice's class is everything about its call
//! that its next calls of the same kind share (entry point, queue, kernel, the classification and
//! its reasons, flags, objects). The first slice of a class carries its members and `"class":N`;
//! later ones carry `"class":N` alone, with what varies per call (command, bytes, pointer, waits,
//! timings). A program repeats a few kinds of transfer, so most host slices lose ~400 bytes;
//! Perfetto shows the class's members on its first slice, and `crate::trace::compact` restores
//! them on every slice for clxfer's readers.

use crate::event::Emit;
use crate::vocab::schema as s;
use rustc_hash::FxBuildHasher;
use std::collections::HashMap;

/// Classes remembered at most ([`s::CLASSES`]): past this, the table starts afresh and classes
/// are said again under new numbers, so a slice only ever names one of the newest this many (a
/// program whose objects never repeat must not grow the table, nor a reader's, forever).
const CLASSES: usize = s::CLASSES as usize;

#[derive(Default)]
pub(super) struct Classes<E> {
    /// A class's members as rendered → its number.
    ids: HashMap<Box<[u8]>, u64, FxBuildHasher>,
    next: u64,
    /// The class being rendered.
    scratch: E,
    /// The number the last write named.
    last_id: u64,
    /// How often the table started afresh: a number remembered from before is not named again.
    generation: u64,
}

/// The last class of one entry point: what made it (compared instead of rendering and looking up
/// the members, ~500 instructions, when a call repeats the one before), and its number.
pub(super) struct Last<K> {
    pub key: K,
    pub id: u64,
    generation: u64,
}

impl<E: Emit> Classes<E> {
    /// A new chunk of a ring: classes are said again (under new numbers).
    pub(super) fn restart(&mut self) {
        self.ids.clear();
        self.generation += 1;
    }

    /// The number `last` remembers, if the table still holds it.
    pub(super) fn reuse<K>(&self, j: &mut E, last: &Last<K>) {
        debug_assert_eq!(last.generation, self.generation);
        j.field(s::CLASS).u64(last.id);
    }

    pub(super) fn current<K>(&self, last: &Option<Last<K>>) -> bool {
        last.as_ref()
            .is_some_and(|l| l.generation == self.generation)
    }

    /// What the last [`Classes::write`] numbered, to remember under `key`.
    pub(super) fn remember<K>(&self, key: K) -> Last<K> {
        Last {
            key,
            id: self.last_id,
            generation: self.generation,
        }
    }

    /// The members `render` writes, as a class: `"class":N`, and the members themselves the
    /// first time.
    pub(super) fn write(&mut self, j: &mut E, render: impl FnOnce(&mut E)) {
        self.scratch.clear();
        render(&mut self.scratch);
        if let Some(&id) = self.ids.get(self.scratch.bytes()) {
            j.field(s::CLASS).u64(id);
            self.last_id = id;
            return;
        }
        if self.ids.len() >= CLASSES {
            self.ids.clear();
            self.generation += 1;
        }
        self.next += 1;
        self.last_id = self.next;
        j.field(s::CLASS).u64(self.next);
        if !self.scratch.bytes().is_empty() {
            j.raw_bytes(self.scratch.bytes());
        }
        self.ids.insert(self.scratch.bytes().into(), self.next);
    }
}
