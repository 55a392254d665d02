//! What one classification is built from ([`Ctx`]: the registry, the device, its rules and the
//! classification being made), and what every command's classification asks of it: the reasons
//! it cites, where a memory object's storage lives, what kind of host memory a pointer is.

use super::super::classification::*;
use super::super::device::DeviceProfile;
use super::super::kinds::RangeKind;
use super::super::memory::{Registry, View};
use super::super::rules::{Pageable, Placement, Rule, RuleSet, common as any};

/// What one classification is being built from.
pub(super) struct Ctx<'a> {
    pub(super) mem: &'a Registry,
    pub(super) dev: &'a DeviceProfile,
    pub(super) rules: &'a RuleSet,
    pub(super) device: usize,
    pub(super) out: &'a mut Classification,
}

impl Ctx<'_> {
    pub(super) fn why(&mut self, rule: &'static str, why: impl Into<Why>) {
        let why = why.into();
        self.out.reasons.push(Reason {
            rule,
            about: None,
            why,
        });
    }

    pub(super) fn cite<T>(&mut self, rule: &Rule<T>, text: impl Into<Why>) {
        self.why(rule.id, text);
    }

    pub(super) fn set(&mut self, direction: Direction, path: Path, bytes: u64) {
        self.out.direction = direction;
        self.out.path = path;
        self.out.bytes = bytes;
    }

    pub(super) fn unknown(mut self, rule: &'static str, text: Why) {
        self.out.path = Path::Unknown;
        self.why(rule, text);
    }

    /// Where a resolved object's storage lives, citing the sub-buffer and flag rules it took.
    pub(super) fn placement(&mut self, view: View) -> Placement {
        if view.obj.parent.is_some() {
            let (sub, parent) = (view.obj.obj_ref(), view.root.obj_ref());
            let text = Why::SubBuffer {
                sub,
                offset: view.offset,
                parent,
            };
            self.why(any::SUB_BUFFER.id, text);
        }
        let r = view.root;
        if self.rules.unified.value {
            return Placement::Host;
        }
        match self
            .rules
            .own_placement(r.flags, r.host_ptr, r.size, self.dev.base_addr_align)
        {
            Some((placement, rule)) => {
                let host = placement == Placement::Host;
                let text = Why::Placement {
                    obj: r.obj_ref(),
                    host,
                };
                self.why(rule, text);
                placement
            }
            None => Placement::Device,
        }
    }

    /// Says why a host-resident object moves nothing across the bus: `what` happens instead.
    pub(super) fn host_resident(&mut self, what: &'static str) {
        let unified = self.rules.unified;
        let rule = if unified.value {
            unified.id
        } else {
            any::HOST_RESIDENT.id
        };
        self.why(
            rule,
            Why::HostResident {
                what,
                unified: unified.value,
            },
        );
    }

    /// What kind of host memory `span` bytes at `ptr` are.
    pub(super) fn host_memory(&mut self, ptr: usize, span: u64) -> HostMemory {
        let Some(hit) = self.mem.host_range(ptr, span) else {
            self.why(
                any::PAGEABLE.id,
                "the pointer is in no pinned or registered range: pageable",
            );
            return HostMemory {
                ptr,
                kind: "pageable",
                pinned: false,
                range: None,
            };
        };
        let (pinned, rule) = match hit.range.kind {
            RangeKind::Mapping { .. } => (true, any::MAPPED.id),
            RangeKind::UseHostPtr => (self.rules.registered.value, self.rules.registered.id),
            RangeKind::Svm { .. } => (true, any::SVM.id),
            RangeKind::UsmHost => (true, any::USM_HOST.id),
            RangeKind::UsmShared => (true, any::USM_SHARED.id),
            RangeKind::UsmDevice => (true, any::USM_DEVICE.id),
            RangeKind::Imported => (true, any::IMPORTED.id),
        };
        let whole = hit.whole;
        let pinned = pinned && whole;
        let (range, offset) = (hit.range.range_ref(), hit.offset);
        if whole {
            self.why(
                rule,
                Why::InRange {
                    range,
                    offset,
                    pinned,
                },
            );
        } else {
            let past = hit
                .offset
                .saturating_add(span)
                .saturating_sub(hit.range.len);
            self.why(
                any::PARTIAL.id,
                Why::Partial {
                    range,
                    offset,
                    past,
                },
            );
        }
        HostMemory {
            ptr,
            kind: hit.range.kind.word(),
            pinned,
            range: Some((range, offset)),
        }
    }

    /// The path of `bytes` between device memory and host memory that is not host-resident.
    pub(super) fn pageable_or_pinned(&mut self, host: &HostMemory, bytes: u64) -> Path {
        if host.pinned {
            return Path::Pinned;
        }
        let rule = self.rules.pageable;
        match rule.value {
            Pageable::Staged => {
                self.cite(
                    &rule,
                    "the driver stages pageable memory through its pinned bounce buffer",
                );
                Path::Staged
            }
            Pageable::PinnedAbove(limit) if bytes <= limit => {
                self.cite(&rule, Why::StagedUpTo { bytes, limit });
                Path::Staged
            }
            Pageable::PinnedAbove(limit) => {
                self.cite(&rule, Why::PinnedAbove { bytes, limit });
                Path::Pinned
            }
            Pageable::Direct { .. } => {
                self.cite(
                    &rule,
                    "the pages become a userptr object and the GPU copies them directly",
                );
                Path::Pinned
            }
            Pageable::HostCopy => {
                self.cite(&rule, "the device works in host memory: one host memcpy");
                Path::HostCopy
            }
        }
    }

    pub(super) fn notes(&mut self, host: &HostMemory, bytes: u64) {
        let (path, blocking) = (self.out.path, self.out.blocking);
        let nb = self.rules.nonblocking_blocks;
        if !blocking && path == Path::Staged && nb.value {
            self.cite(
                &nb,
                "non-blocking, but staging from pageable memory holds the host anyway",
            );
            self.out.cited.holds_host = true;
        }
        let align = self.rules.alignment;
        if let Some(a) = align.value
            && !(host.ptr as u64).is_multiple_of(a)
            && matches!(path, Path::Pinned | Path::Staged)
        {
            let rem = host.ptr as u64 % a;
            self.cite(&align, Why::Misaligned { align: a, rem });
            self.out.cited.misaligned = true;
        }
        self.out.alignment = Some(Alignment::of(host.ptr, bytes));
    }
}
