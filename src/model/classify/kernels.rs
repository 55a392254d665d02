//! A kernel launch: the buffers it uses that must move to its device first.

use super::super::classification::*;
use super::super::memory::{Place, Since};
use super::super::rules::{CrossDevice, Placement, common as any};
use super::ctx::Ctx;
use super::op::only_reads;

impl Ctx<'_> {
    pub(super) fn kernel(mut self, mems: &[usize], reads: u64) {
        // Bytes pulled from other devices, and from the host.
        let (mut moved, mut pulled) = (0u64, 0u64);
        let rule = self.rules.between_devices;
        for (i, &mem) in mems.iter().enumerate() {
            let Some(view) = self.mem.resolve(mem) else {
                continue;
            };
            let root = view.root;
            let only_read = only_reads(reads, i);
            if root.valid_on(self.device) {
                if root.residence != Place::Device(self.device) {
                    self.cite(
                        &self.rules.read_copy,
                        "a kernel here only read it before: its copy is still valid",
                    );
                }
                continue;
            }
            if only_read && matches!(root.residence, Place::Device(_) | Place::Host) {
                let keeps = self.rules.read_copy;
                match keeps.value {
                    true => self.cite(
                        &keeps,
                        "this kernel only reads it: the copy it leaves stays",
                    ),
                    false => self.cite(&keeps, "the copy it leaves is not kept"),
                }
            }
            match root.residence {
                Place::Device(other) if other != self.device => {
                    if root.since == Since::IdleMigration(other) {
                        self.why(
                            any::IDLE_MIGRATION.id,
                            "its last migration, on the device that already held it, moved \
                             nothing: this kernel pulls it",
                        );
                        self.out.cited.hand_off = Some(HandOff::IdleMigration);
                    }
                    self.why(
                        any::FIRST_USE.id,
                        Why::LastElsewhere {
                            obj: root.obj_ref(),
                        },
                    );
                    moved = root.size.saturating_add(moved);
                }
                Place::Host
                    if !self.rules.unified.value && self.placement(view) == Placement::Device =>
                {
                    if let Since::ToHost(other) = root.since
                        && other != self.device
                    {
                        self.why(
                            any::HOST_HOP.id,
                            "a HOST migration took it off another device: it comes back \
                             through the host",
                        );
                        self.out.cited.hand_off = Some(HandOff::HostHop);
                    }
                    self.why(
                        any::ONLY_ON_HOST.id,
                        Why::OnlyOnHost {
                            obj: root.obj_ref(),
                        },
                    );
                    pulled = root.size.saturating_add(pulled);
                }
                _ => {}
            }
        }
        let path = match (moved, rule.value) {
            (0, _) | (_, CrossDevice::Shared) => Path::None,
            (_, CrossDevice::ViaHost) => Path::ViaHost,
            (_, CrossDevice::Peer) => Path::Peer,
        };
        if path != Path::None {
            self.cite(&rule, "the kernel's enqueue moves it");
            return self.set(Direction::D2D, path, moved.saturating_add(pulled));
        }
        if pulled > 0 {
            let rule = self.rules.migrate;
            self.cite(&rule, "the contents are copied from the host backing store");
            return self.set(Direction::H2D, rule.value.store, pulled);
        }
        self.set(Direction::D2D, Path::None, 0);
    }
}
