//! Reads, writes, copies and fills: a transfer between a buffer and host memory, or between
//! buffers (on one device or across two).

use super::super::classification::*;
use super::super::kinds::RangeKind;
use super::super::memory::{Place, Since, View};
use super::super::rules::{CrossDevice, Pageable, Placement, common as any};
use super::ctx::Ctx;

impl Ctx<'_> {
    /// Read or write between host memory and a memory object.
    pub(super) fn host(
        mut self,
        mem: usize,
        to_device: bool,
        ptr: usize,
        bytes: u64,
        span: u64,
        rect: bool,
    ) {
        let Some(view) = self.mem.resolve(mem) else {
            return self.unknown(any::UNKNOWN_OBJECT.id, Why::UnknownObject { handle: mem });
        };
        let direction = if to_device {
            Direction::H2D
        } else {
            Direction::D2H
        };
        let placement = self.placement(view);
        if to_device {
            self.written_twice(view, bytes);
        }
        if rect {
            self.out.host_span = Some(span);
            self.why(any::RECT.id, Why::Rect { bytes, span });
        }
        let host = self.host_memory(ptr, span);
        let path = match (placement, self.rules.pageable.value) {
            (Placement::Host, Pageable::Direct { cpu_copy_align: a }) => {
                let r = view.root;
                let own =
                    self.rules
                        .own_placement(r.flags, r.host_ptr, r.size, self.dev.base_addr_align);
                let zero_copy_buffer = own.is_some_and(|p| p.0 == Placement::Host);
                let rule = self.rules.pageable;
                if self.out.blocking && (zero_copy_buffer || !(ptr as u64).is_multiple_of(a)) {
                    let rem = ptr as u64 % a;
                    self.cite(&rule, Why::CpuCopy { align: a, rem });
                    Path::HostCopy
                } else if host.pinned {
                    Path::Pinned
                } else {
                    self.cite(&rule, "the GPU copies from the user's pages (userptr)");
                    Path::Pinned
                }
            }
            (Placement::Host, _) => {
                self.host_resident("a host memcpy, nothing crosses the bus now");
                Path::HostCopy
            }
            (Placement::Device, _) if host.kind == RangeKind::UsmDevice.word() => {
                self.set(Direction::D2D, Path::Device, bytes);
                self.out.host = Some(host);
                return;
            }
            (Placement::Device, _) => self.pageable_or_pinned(&host, bytes),
        };
        self.set(direction, path, bytes);
        self.notes(&host, bytes);
        self.out.host = Some(host);
    }

    /// A write of `bytes` to `view` on this device: whether it makes a whole write on another
    /// device, not used since, wasted (the same buffer initialised on two devices).
    pub(super) fn written_twice(&mut self, view: View, bytes: u64) {
        if let Since::Written(other) = view.root.since
            && other != self.device
            && bytes >= view.root.size
        {
            self.why(
                any::WRITTEN_TWICE.id,
                "written whole on another device and not used since: one of the two writes is wasted",
            );
            self.out.cited.hand_off = Some(HandOff::WrittenTwice);
        }
    }

    pub(super) fn copy(mut self, src: usize, dst: usize, bytes: u64) {
        let (Some(s), Some(d)) = (self.mem.resolve(src), self.mem.resolve(dst)) else {
            let missing = if self.mem.resolve(src).is_none() {
                src
            } else {
                dst
            };
            return self.unknown(
                any::UNKNOWN_OBJECT.id,
                Why::UnknownObject { handle: missing },
            );
        };
        if let Place::Device(other) = s.root.residence
            && other != self.device
            && !s.root.valid_on(self.device)
        {
            return self.cross_device(s, bytes);
        }
        let (sp, dp) = (self.placement(s), self.placement(d));
        let unified = self.rules.unified;
        let (direction, path) = match (sp, dp) {
            (Placement::Device, Placement::Device) => {
                self.why(
                    any::DEVICE_COPY.id,
                    "both buffers are in device memory: a device copy",
                );
                (Direction::D2D, Path::Device)
            }
            (Placement::Host, Placement::Host) if unified.value => {
                self.cite(&unified, "device memory is host memory: one copy inside it");
                (Direction::D2D, Path::Device)
            }
            (Placement::Host, Placement::Host) => {
                self.why(any::HOST_COPY.id, "both buffers live in host memory");
                (Direction::H2H, Path::HostCopy)
            }
            // The placement reasons above say which side is host memory: the copy is a DMA.
            (Placement::Host, Placement::Device) => (Direction::H2D, Path::Pinned),
            (Placement::Device, Placement::Host) => (Direction::D2H, Path::Pinned),
        };
        self.set(direction, path, bytes);
    }

    /// The contents of `view` are on another device than the queue's.
    pub(super) fn cross_device(mut self, view: View, bytes: u64) {
        let rule = self.rules.between_devices;
        let path = match rule.value {
            CrossDevice::ViaHost => Path::ViaHost,
            CrossDevice::Peer => Path::Peer,
            CrossDevice::Shared => Path::None,
        };
        self.cite(
            &rule,
            Why::ContentsElsewhere {
                obj: view.root.obj_ref(),
            },
        );
        let moved = if path == Path::None { 0 } else { bytes };
        self.set(Direction::D2D, path, moved);
    }

    pub(super) fn fill(mut self, mem: Option<usize>, bytes: u64) {
        if let Some(view) = mem.and_then(|m| self.mem.resolve(m)) {
            self.written_twice(view, bytes);
        }
        self.why(any::FILL.id, "the device writes the pattern");
        self.set(Direction::D2D, Path::Device, bytes);
    }
}
