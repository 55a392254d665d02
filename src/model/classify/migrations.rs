//! `clEnqueueMigrateMemObjects`: where each object's content goes, and whether it moves.

use super::super::classification::*;
use super::super::memory::{Place, View};
use super::super::rules::{CrossDevice, Placement, common as any};
use super::ctx::Ctx;
use opencl_sys::{CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, CL_MIGRATE_MEM_OBJECT_HOST};

impl Ctx<'_> {
    pub(super) fn migrate(mut self, mems: &[usize], flags: u64) {
        let mut parts: Vec<(Direction, Path, u64)> = Vec::new();
        for &mem in mems {
            let Some(view) = self.mem.resolve(mem) else {
                self.why(any::UNKNOWN_OBJECT.id, Why::UnknownObject { handle: mem });
                parts.push((Direction::H2D, Path::Unknown, 0));
                continue;
            };
            let before = self.out.reasons.len();
            let part = self.migrate_one(view, flags);
            if mems.len() > 1 {
                let about = Some(view.obj.obj_ref());
                for r in &mut self.out.reasons[before..] {
                    r.about = about;
                }
            }
            parts.push(part);
        }
        let bytes = parts.iter().fold(0u64, |n, p| n.saturating_add(p.2));
        let dominant = parts
            .iter()
            .copied()
            .max_by_key(|p| (p.2, p.1 != Path::Unknown));
        let (direction, path) = match dominant {
            Some((d, p, _)) if parts.iter().all(|q| q.1 == p) || bytes > 0 => (d, p),
            Some((d, ..)) => (d, parts[0].1),
            None => (Direction::H2D, Path::None),
        };
        self.set(direction, path, bytes);
        if self.out.reasons.is_empty() {
            self.why(any::ALREADY_THERE.id, Why::NoObjects { flags });
        }
    }

    pub(super) fn migrate_one(&mut self, view: View, flags: u64) -> (Direction, Path, u64) {
        let rule = self.rules.migrate;
        let to_host = flags & CL_MIGRATE_MEM_OBJECT_HOST != 0;
        let undefined = flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED != 0;
        let direction = if to_host {
            Direction::D2H
        } else {
            Direction::H2D
        };
        let size = view.obj.size;
        let placement = self.placement(view);
        let none = (direction, Path::None, 0);
        if undefined {
            if rule.value.content_undefined_honoured {
                self.why(
                    any::CONTENT_UNDEFINED.id,
                    "CONTENT_UNDEFINED: the contents are not copied",
                );
                return none;
            }
            self.cite(
                &rule,
                "CONTENT_UNDEFINED is ignored: the data is still synced",
            );
        }
        let residence = view.root.residence;
        if placement == Placement::Host
            && !matches!(residence, Place::Device(d) if d != self.device)
        {
            self.host_resident("nothing to move");
            return none;
        }
        if residence == Place::Nowhere {
            self.why(
                any::NO_CONTENTS.id,
                "the buffer has held no data yet: nothing to move",
            );
            return none;
        }
        if to_host {
            if residence == Place::Host {
                self.why(
                    any::ALREADY_THERE.id,
                    "the contents are already on the host",
                );
                return none;
            }
            if rule.value.is_marker(flags) {
                self.cite(&rule, "migration to the host is only a marker here");
                return none;
            }
            self.cite(&rule, "the contents are copied to the host backing store");
            return (Direction::D2H, rule.value.store, size);
        }
        if view.root.valid_on(self.device) {
            self.why(
                any::ALREADY_THERE.id,
                "the contents are already on this device",
            );
            return none;
        }
        if rule.value.is_marker(flags) {
            self.cite(&rule, Why::Marker { flags });
            return none;
        }
        match residence {
            Place::Device(_) => {
                let rule = self.rules.between_devices;
                self.cite(&rule, "the contents are on another device");
                match rule.value {
                    CrossDevice::ViaHost => (Direction::D2D, Path::ViaHost, size),
                    CrossDevice::Peer => (Direction::D2D, Path::Peer, size),
                    CrossDevice::Shared => (Direction::D2D, Path::None, 0),
                }
            }
            _ => {
                self.cite(&rule, "the contents are copied from the host backing store");
                (Direction::H2D, rule.value.store, size)
            }
        }
    }
}
