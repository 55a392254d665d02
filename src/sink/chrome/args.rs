//! What the trace's slices say: the classification as `args`, and the names that carry the class.
//! The classification's members are a host slice's class (`classes.rs`): what varies per call,
//! the bytes and the host pointer, is written apart ([`per_call`]).

use super::super::record::Command;
use crate::event::Emit;
use crate::model::classification::{Classification, Direction, Reason};
use crate::vocab::Api;
use crate::vocab::schema as s;
use rustc_hash::FxBuildHasher;
use smallvec::SmallVec;
use std::collections::HashMap;

/// Rendered reasons, by the reasons: a program repeats the same few classifications.
type ReasonsCache = HashMap<SmallVec<[Reason; 4]>, (Box<[u8]>, Box<[u8]>), FxBuildHasher>;
const REASONS_CACHED: usize = 4096;

/// Classifications already rendered. A program repeats its transfers (a loop writes the same
/// buffer from the same pointer), so most host slices copy the args of the last classification
/// of their entry point and direction (one entry point, such as a USM memcpy, may alternate
/// directions) instead of rendering them again; the reasons of the others come cached.
#[derive(Default)]
pub(super) struct Rendered {
    /// By entry point and direction: the last classification and the JSON of its fields.
    last: Vec<Option<(Classification, Vec<u8>)>>,
    reasons: ReasonsCache,
}

/// The classification's fields (the host slice's args) of a call to `api`.
pub(super) fn classification<E: Emit>(
    j: &mut E,
    api: Api,
    c: &Classification,
    done: &mut Rendered,
) {
    const DIRECTIONS: usize = Direction::ALL.len();
    if done.last.is_empty() {
        done.last.resize_with(Api::ALL.len() * DIRECTIONS, || None);
    }
    let slot = &mut done.last[api as usize * DIRECTIONS + c.direction as usize];
    if let Some((last, json)) = slot
        && last == c
    {
        j.raw_bytes(json);
        return;
    }
    if done.reasons.len() > REASONS_CACHED {
        done.reasons.clear();
    }
    // The slot's classification and buffer are reused: no allocation once it has been filled.
    let (last, buf) = match slot.take() {
        Some((mut last, mut buf)) => {
            last.clone_from(c);
            buf.clear();
            (last, buf)
        }
        None => (c.clone(), Vec::new()),
    };
    let mut r = E::default();
    fields(&mut r, c, &mut done.reasons);
    let mut buf = buf;
    buf.extend_from_slice(r.bytes());
    j.raw_bytes(&buf);
    *slot = Some((last, buf));
}

/// What varies from call to call: the bytes moved and the host pointer.
pub(super) fn per_call<E: Emit>(j: &mut E, c: &Classification) {
    j.field(s::BYTES).u64(c.bytes);
    if let Some(h) = &c.host {
        j.field(s::HOST_PTR).hex(h.ptr as u64);
    }
}

fn fields<E: Emit>(j: &mut E, c: &Classification, cache: &mut ReasonsCache) {
    j.field(s::DIRECTION).word(c.direction.as_str());
    j.field(s::PATH).word(c.path.as_str());
    j.field(s::BLOCKING).bool(c.blocking);
    j.field(s::RULES).word(c.rules);
    // One lookup when cached, as nearly every classification is.
    if let Some((reasons, ids)) = cache.get(&c.reasons) {
        j.field(s::REASONS).raw_bytes(reasons);
        j.field(s::RULE_IDS).raw_bytes(ids);
    } else {
        let mut r = E::default();
        r.open_array();
        for reason in &c.reasons {
            r.display(&format_args!("[{}] {reason}", reason.rule));
        }
        r.close_array();
        let mut ids = E::default();
        ids.open_array();
        for reason in &c.reasons {
            ids.word(reason.rule);
        }
        ids.close_array();
        j.field(s::REASONS).raw_bytes(r.bytes());
        j.field(s::RULE_IDS).raw_bytes(ids.bytes());
        cache.insert(c.reasons.clone(), (r.bytes().into(), ids.bytes().into()));
    }
    if let Some(h) = &c.host {
        j.field(s::HOST_MEMORY).word(h.kind);
        j.field(s::HOST_PINNED).bool(h.pinned);
        // Pageable memory has no provenance beyond what the reasons say.
        if h.range.is_some() {
            j.field(s::PROVENANCE).display(&h.provenance());
        }
    }
    if let Some(span) = c.host_span {
        j.field(s::HOST_SPAN).u64(span);
    }
    if let Some(code) = c.error {
        j.field(s::ERROR).i64(code as i64);
    }
}

/// GB/s (10^9 bytes per second); 0 for no time.
pub(super) fn gbps(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 / ns as f64
    }
}

/// `Write H2D staged`, `Kernel vadd`, `Marker`.
pub(super) struct CommandName<'a>(pub(super) &'a Command);

impl std::fmt::Display for CommandName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let c = self.0;
        match &c.kernel {
            Some(k) => write!(f, "Kernel {k}")?,
            None => f.write_str(c.api.verb())?,
        }
        if let Some((dir, path)) = c.class {
            write!(f, " {} {}", dir.as_str(), path.as_str())?;
        }
        Ok(())
    }
}
