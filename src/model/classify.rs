//! The classifier: `(request, registry, device profile, rules) → Classification`. A pure function:
//! it reads the registry and never changes it (the intercept applies the effects afterwards).
//!
//! In layers: `op.rs` (what is classified) and `ctx.rs` (what a classification is built from,
//! the questions every command asks) at the bottom; a file per family of commands above them
//! (`transfers.rs`, `maps.rs`, `migrations.rs`, `pointers.rs`, `kernels.rs`); here, the
//! dispatch of a command to its family.

mod ctx;
mod kernels;
mod maps;
mod migrations;
mod op;
mod pointers;
mod transfers;

pub use op::*;

use super::classification::*;
use super::device::DeviceProfile;
use super::memory::Registry;
use super::rules::{RuleSet, common as any};
use smallvec::SmallVec;

use ctx::Ctx;

/// Classifies one command the driver accepted.
pub fn classify(
    req: &Request,
    mem: &Registry,
    dev: &DeviceProfile,
    rules: &RuleSet,
) -> Classification {
    let mut slot = None;
    classify_in(req, mem, dev, rules, &mut slot);
    slot.unwrap_or_else(|| blank(rules, req.blocking))
}

/// [`classify`], built where it is kept: a classification is some 600 bytes, and moving it
/// out of the classifier and into the call's record cost two copies per enqueue.
pub fn classify_in<'s>(
    req: &Request,
    mem: &Registry,
    dev: &DeviceProfile,
    rules: &RuleSet,
    slot: &'s mut Option<Classification>,
) -> &'s Classification {
    let out = slot.insert(blank(rules, req.blocking));
    let ctx = Ctx {
        mem,
        dev,
        rules,
        device: req.device,
        out: &mut *out,
    };
    match &req.op {
        &Op::Host {
            mem,
            to_device,
            ptr,
            bytes,
            span,
            rect,
        } => ctx.host(mem, to_device, ptr, bytes, span, rect),
        &Op::Copy { src, dst, bytes } => ctx.copy(src, dst, bytes),
        &Op::Fill { mem, bytes } => ctx.fill(Some(mem), bytes),
        &Op::PtrFill { bytes, .. } => ctx.fill(None, bytes),
        &Op::Map {
            mem, flags, bytes, ..
        } => ctx.map(mem, flags, bytes),
        &Op::Unmap { mem, ptr } => ctx.unmap(mem, ptr),
        Op::Migrate { mems, flags } => ctx.migrate(mems, *flags),
        &Op::PtrCopy { dst, src, bytes } => ctx.ptr_copy(dst, src, bytes),
        &Op::PtrMap { ptr, flags, bytes } => ctx.ptr_map(ptr, flags, bytes),
        &Op::PtrUnmap { ptr } => ctx.unmap(SVM_MAPPINGS, ptr),
        Op::PtrMigrate { ptrs, flags } => ctx.ptr_migrate(ptrs, *flags),
        Op::Kernel { mems, reads } => ctx.kernel(mems, *reads),
    }
    out
}

/// A staged transfer whose host side the process locked with `mlock` (the layer looks that up,
/// `layer/locked.rs`): the reason says the lock does not make it pinned.
pub fn locked(c: &mut Classification) {
    c.reasons.push(Reason {
        rule: any::MLOCKED.id,
        about: None,
        why: Why::Text(
            "locked with mlock, but the driver is not told of it: staged like any pageable memory",
        ),
    });
    c.cited.locked = true;
}

/// A command the driver refused (`code`, when it said which error): nothing was enqueued.
pub fn refused(code: Option<i32>, blocking: bool, rules: &RuleSet) -> Classification {
    let mut out = blank(rules, blocking);
    out.path = Path::Unknown;
    out.error = code;
    let why = Why::DriverError { code };
    out.reasons.push(Reason {
        rule: any::DRIVER_ERROR.id,
        about: None,
        why,
    });
    out
}

fn blank(rules: &RuleSet, blocking: bool) -> Classification {
    Classification {
        direction: Direction::H2D,
        path: Path::None,
        bytes: 0,
        host_span: None,
        host: None,
        alignment: None,
        blocking,
        rules: rules.name,
        reasons: SmallVec::new(),
        cited: Cited::default(),
        error: None,
    }
}

#[cfg(test)]
mod tests;
