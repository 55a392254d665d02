//! Every rule of every vendor set, and every pitfall of docs/sources/transfer-rules.md, as table rows.

use super::*;
use crate::model::kinds::{MemKind, RangeKind};
use crate::model::memory::{NewObject, Place, Since};
use crate::model::rules::{self, AMD, CPU, GENERIC, INTEL_CPU, INTEL_DGPU, INTEL_IGPU, NVIDIA};
use Direction::*;
use opencl_sys::*;
use std::collections::HashSet;

const MIB: u64 = 1 << 20;
const SZ: u64 = 64 * MIB;
const D1: usize = 0xd1;
const D2: usize = 0xd2;

// Memory objects.
const PLAIN: usize = 0x10;
const AHP: usize = 0x11;
const UHP: usize = 0x12;
const SUB: usize = 0x14;
const FRESH: usize = 0x15;
const ON_D2: usize = 0x16;
const ON_HOST: usize = 0x17;
const HOPPED: usize = 0x18; // taken off D2 by a HOST migration
const IDLE: usize = 0x19; // on D2, after a migration to D2 that moved nothing
const WRITTEN: usize = 0x1a; // written whole on D2, not used since
const COPIED: usize = 0x1b; // last written on D2, then only read by a kernel on D1 (NVIDIA)
const NOT_AN_OBJECT: usize = 0x99;

// Host memory.
const UHP_PTR: usize = 0x1000_0000;
const MAPPED: usize = 0x3000_0000; // WRITE mapping of AHP, SZ bytes
const MAPPED_RO: usize = 0x3800_0000; // READ mapping of PLAIN, 1 MiB
const SVM: usize = 0x4000_0000;
const SVM_FINE: usize = 0x4100_0000;
const USM_HOST: usize = 0x5000_0000;
const USM_DEV: usize = 0x5100_0000;
const USM_SHARED: usize = 0x5200_0000;
const IMPORTED: usize = 0x5300_0000;
const PAGEABLE: usize = 0x7000_0000;

fn world() -> Registry {
    let mut r = Registry::new();
    let obj = |flags, host_ptr| NewObject {
        kind: MemKind::Buffer,
        context: 0xc0,
        flags,
        size: SZ,
        host_ptr,
        element_size: 1,
        parent: None,
        sole_device: None,
    };
    r.add_object(PLAIN, obj(CL_MEM_READ_WRITE, 0));
    r.add_object(AHP, obj(CL_MEM_ALLOC_HOST_PTR, 0));
    r.add_object(UHP, obj(CL_MEM_USE_HOST_PTR, UHP_PTR));
    r.add_object(
        SUB,
        NewObject {
            parent: Some((AHP, 4096)),
            size: MIB,
            ..obj(CL_MEM_ALLOC_HOST_PTR, 0)
        },
    );
    r.add_object(FRESH, obj(0, 0));
    r.add_object(ON_D2, obj(0, 0));
    r.add_object(ON_HOST, obj(0, 0));
    for h in [PLAIN, AHP, UHP] {
        r.set_residence(h, Place::Device(D1), Some(D1));
    }
    r.set_residence(ON_D2, Place::Device(D2), Some(D2));
    r.set_residence(ON_HOST, Place::Host, None);
    for (h, place, since) in [
        (HOPPED, Place::Host, Since::ToHost(D2)),
        (IDLE, Place::Device(D2), Since::IdleMigration(D2)),
        (WRITTEN, Place::Device(D2), Since::Written(D2)),
    ] {
        r.add_object(h, obj(0, 0));
        r.set_residence(h, place, None);
        r.set_since(h, since);
    }
    r.add_object(COPIED, obj(0, 0));
    r.set_residence(COPIED, Place::Device(D2), None);
    r.add_copy(COPIED, D1);
    r.add_mapping(AHP, MAPPED, SZ, CL_MAP_WRITE);
    r.add_mapping(PLAIN, MAPPED_RO, MIB, CL_MAP_READ);
    r.add_allocation(
        SVM,
        MIB,
        RangeKind::Svm {
            flags: CL_MEM_READ_WRITE,
        },
        None,
    );
    r.add_allocation(
        SVM_FINE,
        MIB,
        RangeKind::Svm {
            flags: CL_MEM_SVM_FINE_GRAIN_BUFFER,
        },
        None,
    );
    r.add_allocation(USM_HOST, MIB, RangeKind::UsmHost, None);
    r.add_allocation(USM_DEV, MIB, RangeKind::UsmDevice, None);
    r.add_allocation(USM_SHARED, MIB, RangeKind::UsmShared, None);
    r.add_range(IMPORTED, MIB, RangeKind::Imported, None);
    r.add_mapping(SVM_MAPPINGS, SVM, MIB, CL_MAP_WRITE);
    r
}

fn write(mem: usize, ptr: usize, bytes: u64) -> Op {
    Op::Host {
        mem,
        to_device: true,
        ptr,
        bytes,
        span: bytes,
        rect: false,
    }
}
fn read(mem: usize, ptr: usize, bytes: u64) -> Op {
    Op::Host {
        mem,
        to_device: false,
        ptr,
        bytes,
        span: bytes,
        rect: false,
    }
}
fn map(mem: usize, flags: u64) -> Op {
    Op::Map {
        mem,
        flags,
        bytes: SZ,
        ptr: 0,
    }
}
fn migrate(mems: &[usize], flags: u64) -> Op {
    Op::Migrate {
        mems: mems.to_vec(),
        flags,
    }
}

struct Case {
    set: &'static RuleSet,
    op: Op,
    blocking: bool,
    want: (Direction, Path, u64),
    cites: &'static [&'static str],
    /// Rules whose value means they must NOT add a reason here.
    absent: &'static [&'static str],
}

macro_rules! cases {
    ($($set:ident $op:expr, $blocking:expr => $dir:ident $path:ident $bytes:expr
        ; [$($cite:literal),*] $(not [$($absent:literal),*])?;)*) => {
        vec![$(Case {
            set: &$set, op: $op, blocking: $blocking,
            want: ($dir, Path::$path, $bytes),
            cites: &[$($cite),*], absent: &[$($($absent),*)?],
        },)*]
    };
}

fn table() -> Vec<Case> {
    const B: bool = true;
    const NB: bool = false;
    const MIS: usize = PAGEABLE + 1;
    let rect = Op::Host {
        mem: PLAIN,
        to_device: true,
        ptr: PAGEABLE,
        bytes: 3 * 1024,
        span: 2 * 4096 + 1024,
        rect: true,
    };
    cases! {
        // NVIDIA: docs/sources/ground-truth-h200.md, row by row.
        NVIDIA write(PLAIN, PAGEABLE, SZ), B => H2D Staged SZ; ["nvidia.pageable", "any.pageable"] not ["nvidia.nonblocking"];
        NVIDIA read(PLAIN, PAGEABLE, SZ), B => D2H Staged SZ; ["nvidia.pageable"];
        NVIDIA write(PLAIN, MIS, SZ), B => H2D Staged SZ; ["nvidia.pageable"] not ["nvidia.alignment"];
        NVIDIA write(PLAIN, MAPPED, SZ), B => H2D Pinned SZ; ["any.mapped"] not ["nvidia.pageable"];
        NVIDIA write(PLAIN, MAPPED + 4096, MIB), B => H2D Pinned MIB; ["any.mapped"];
        NVIDIA write(PLAIN, MAPPED + 1, MIB), B => H2D Pinned MIB; ["any.mapped"] not ["nvidia.alignment"];
        NVIDIA write(PLAIN, SVM, MIB), B => H2D Pinned MIB; ["any.svm"];
        NVIDIA write(PLAIN, UHP_PTR + 4096 + 64, MIB), B => H2D Pinned MIB; ["nvidia.registered"];
        NVIDIA read(PLAIN, UHP_PTR, MIB), B => D2H Pinned MIB; ["nvidia.registered"];
        NVIDIA write(AHP, PAGEABLE, SZ), B => H2D Staged SZ; ["nvidia.pageable"];
        NVIDIA write(UHP, PAGEABLE, SZ), B => H2D Staged SZ; ["nvidia.pageable"];
        NVIDIA write(PLAIN, PAGEABLE, SZ), NB => H2D Staged SZ; ["nvidia.nonblocking"];
        NVIDIA write(PLAIN, USM_HOST, MIB), NB => H2D Pinned MIB; ["any.usm-host"] not ["nvidia.nonblocking"];
        NVIDIA write(PLAIN, USM_SHARED, MIB), B => H2D Pinned MIB; ["any.usm-shared"];
        NVIDIA write(PLAIN, IMPORTED, MIB), B => H2D Pinned MIB; ["any.imported"];
        // Pitfalls: just past a pinned range, running past it, sub-buffers, rect spans.
        NVIDIA write(PLAIN, MAPPED + SZ as usize, MIB), B => H2D Staged MIB; ["any.pageable", "nvidia.pageable"];
        NVIDIA write(PLAIN, MAPPED + SZ as usize - 4096, MIB), B => H2D Staged MIB; ["any.partial", "nvidia.pageable"];
        NVIDIA write(SUB, PAGEABLE, MIB), B => H2D Staged MIB; ["any.sub-buffer", "nvidia.pageable"];
        NVIDIA rect.clone(), B => H2D Staged 3 * 1024; ["any.rect", "nvidia.pageable"];
        // Map and unmap.
        NVIDIA map(PLAIN, CL_MAP_READ), B => D2H Pinned SZ; ["nvidia.map"];
        NVIDIA map(PLAIN, CL_MAP_WRITE), B => D2H Pinned SZ; ["nvidia.map"];
        NVIDIA map(PLAIN, 0), B => D2H Pinned SZ; ["nvidia.map"];
        NVIDIA map(AHP, CL_MAP_READ), B => D2H Pinned SZ; ["nvidia.map"];
        NVIDIA map(PLAIN, CL_MAP_WRITE_INVALIDATE_REGION), B => D2H None 0; ["any.invalidate"];
        NVIDIA Op::Unmap { mem: AHP, ptr: MAPPED }, NB => H2D Pinned SZ; ["nvidia.map"];
        NVIDIA Op::Unmap { mem: PLAIN, ptr: MAPPED_RO }, NB => H2D None 0; ["any.read-only-unmap"];
        NVIDIA Op::Unmap { mem: PLAIN, ptr: MAPPED }, NB => H2D Unknown 0; ["any.unknown-mapping"];
        // Copies, fills, devices.
        NVIDIA Op::Copy { src: PLAIN, dst: ON_HOST, bytes: SZ }, NB => D2D Device SZ; ["any.device-copy"];
        NVIDIA Op::Copy { src: AHP, dst: PLAIN, bytes: SZ }, NB => D2D Device SZ; ["any.device-copy", "nvidia.alloc-host-ptr"];
        NVIDIA Op::Copy { src: UHP, dst: PLAIN, bytes: SZ }, NB => D2D Device SZ; ["nvidia.use-host-ptr"];
        NVIDIA write(PLAIN, USM_DEV, MIB), B => D2D Device MIB; ["any.usm-device"];
        NVIDIA Op::Copy { src: ON_D2, dst: PLAIN, bytes: SZ }, NB => D2D ViaHost SZ; ["nvidia.between-devices"];
        NVIDIA Op::Fill { mem: PLAIN, bytes: SZ }, NB => D2D Device SZ; ["any.fill"];
        NVIDIA Op::Copy { src: NOT_AN_OBJECT, dst: PLAIN, bytes: SZ }, NB => H2D Unknown 0; ["any.unknown-object"];
        NVIDIA write(NOT_AN_OBJECT, PAGEABLE, SZ), B => H2D Unknown 0; ["any.unknown-object"];
        // Migration.
        NVIDIA migrate(&[PLAIN], CL_MIGRATE_MEM_OBJECT_HOST), NB => D2H Pinned SZ; ["nvidia.migrate"];
        NVIDIA migrate(&[ON_HOST], 0), NB => H2D Pinned SZ; ["nvidia.migrate"];
        NVIDIA migrate(&[ON_D2], 0), NB => D2D ViaHost SZ; ["nvidia.between-devices"];
        NVIDIA migrate(&[ON_D2], CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED), NB => H2D None 0; ["any.content-undefined"];
        NVIDIA migrate(&[FRESH], 0), NB => H2D None 0; ["any.no-contents"];
        NVIDIA migrate(&[PLAIN], 0), NB => H2D None 0; ["any.already-there"];
        NVIDIA migrate(&[ON_HOST], CL_MIGRATE_MEM_OBJECT_HOST), NB => D2H None 0; ["any.already-there"];
        NVIDIA migrate(&[ON_D2, PLAIN, NOT_AN_OBJECT], 0), NB => D2D ViaHost SZ; ["nvidia.between-devices", "any.already-there", "any.unknown-object"];
        // SVM and USM.
        NVIDIA Op::PtrCopy { dst: SVM, src: PAGEABLE, bytes: MIB }, B => H2D Staged MIB; ["nvidia.pageable"];
        NVIDIA Op::PtrCopy { dst: PAGEABLE, src: USM_DEV, bytes: MIB }, B => D2H Staged MIB; ["nvidia.pageable"];
        NVIDIA Op::PtrCopy { dst: USM_DEV, src: USM_HOST, bytes: MIB }, B => H2D Pinned MIB; ["any.usm-host"];
        NVIDIA Op::PtrCopy { dst: SVM, src: USM_SHARED, bytes: MIB }, B => D2D Device MIB; ["nvidia.svm", "any.device-copy"];
        // SVM allocations sit where the rules put their storage, as the memory totals count
        // them: coarse-grain with device storage on discrete GPUs, fine-grain in host memory.
        NVIDIA Op::PtrCopy { dst: USM_DEV, src: SVM, bytes: MIB }, B => D2D Device MIB; ["nvidia.svm", "any.device-copy"];
        NVIDIA Op::PtrCopy { dst: USM_DEV, src: SVM_FINE, bytes: MIB }, B => H2D Pinned MIB; ["any.svm"];
        AMD Op::PtrCopy { dst: USM_DEV, src: SVM, bytes: MIB }, B => D2D Device MIB; ["amd.svm", "any.device-copy"];
        INTEL_DGPU Op::PtrCopy { dst: USM_DEV, src: SVM, bytes: MIB }, B => D2D Device MIB; ["intel-dgpu.svm", "any.device-copy"];
        GENERIC Op::PtrCopy { dst: USM_DEV, src: SVM, bytes: MIB }, B => D2D Device MIB; ["generic.svm", "any.device-copy"];
        INTEL_IGPU Op::PtrCopy { dst: SVM, src: PAGEABLE, bytes: MIB }, B => H2D HostCopy MIB; ["intel-igpu.svm", "intel-igpu.memory"];
        INTEL_CPU Op::PtrCopy { dst: SVM, src: PAGEABLE, bytes: MIB }, B => H2D HostCopy MIB; ["intel-cpu.svm", "intel-cpu.memory"];
        NVIDIA Op::PtrCopy { dst: PAGEABLE, src: MAPPED, bytes: MIB }, B => H2H HostCopy MIB; ["any.host-copy"];
        NVIDIA Op::PtrFill { ptr: USM_DEV, bytes: MIB }, B => D2D Device MIB; ["any.fill"];
        NVIDIA Op::PtrMap { ptr: SVM, flags: CL_MAP_READ, bytes: MIB }, B => D2H Pinned MIB; ["nvidia.map"];
        NVIDIA Op::PtrMap { ptr: SVM_FINE, flags: CL_MAP_READ, bytes: MIB }, B => D2H ZeroCopy 0; ["any.svm"] not ["nvidia.memory"];
        NVIDIA Op::PtrUnmap { ptr: SVM }, B => H2D Pinned MIB; ["nvidia.map"];
        NVIDIA Op::PtrMigrate { ptrs: vec![(SVM, MIB), (USM_SHARED, MIB)], flags: 0 }, NB => H2D Pinned 2 * MIB; ["any.svm"];
        NVIDIA Op::PtrMigrate { ptrs: vec![(SVM, MIB)], flags: CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED }, NB => H2D None 0; ["any.content-undefined"];
        NVIDIA Op::Kernel { mems: vec![PLAIN, ON_D2], reads: 0 }, NB => D2D ViaHost SZ; ["any.first-use", "nvidia.between-devices"];
        NVIDIA Op::Kernel { mems: vec![PLAIN, NOT_AN_OBJECT], reads: 0 }, NB => D2D None 0; [];
        // Hand-offs between devices (issue #25).
        NVIDIA Op::Kernel { mems: vec![ON_HOST], reads: 0 }, NB => H2D Pinned SZ; ["any.only-on-host", "nvidia.migrate"] not ["any.host-hop"];
        NVIDIA Op::Kernel { mems: vec![HOPPED], reads: 0 }, NB => H2D Pinned SZ; ["any.host-hop", "any.only-on-host"];
        NVIDIA Op::Kernel { mems: vec![HOPPED, ON_D2], reads: 0 }, NB => D2D ViaHost 2 * SZ; ["any.host-hop", "any.first-use"];
        NVIDIA Op::Kernel { mems: vec![IDLE], reads: 0 }, NB => D2D ViaHost SZ; ["any.idle-migration", "any.first-use"];
        NVIDIA Op::Kernel { mems: vec![ON_D2], reads: 0 }, NB => D2D ViaHost SZ; ["any.first-use"] not ["any.idle-migration"];
        NVIDIA write(WRITTEN, PAGEABLE, SZ), B => H2D Staged SZ; ["any.written-twice"];
        NVIDIA write(WRITTEN, PAGEABLE, MIB), B => H2D Staged MIB; [] not ["any.written-twice"];
        NVIDIA Op::Fill { mem: WRITTEN, bytes: SZ }, NB => D2D Device SZ; ["any.written-twice", "any.fill"];
        CPU Op::Kernel { mems: vec![HOPPED], reads: 0 }, NB => D2D None 0; [] not ["any.only-on-host"];
        // A kernel that only reads a buffer on another device: whether the copy stays.
        NVIDIA Op::Kernel { mems: vec![ON_D2], reads: 1 }, NB => D2D ViaHost SZ; ["nvidia.read-copy", "any.first-use"];
        AMD Op::Kernel { mems: vec![ON_D2], reads: 1 }, NB => D2D ViaHost SZ; ["amd.read-copy"];
        INTEL_IGPU Op::Kernel { mems: vec![ON_D2], reads: 1 }, NB => D2D ViaHost SZ; ["intel-igpu.read-copy"];
        INTEL_DGPU Op::Kernel { mems: vec![ON_D2], reads: 1 }, NB => D2D ViaHost SZ; ["intel-dgpu.read-copy"];
        INTEL_CPU Op::Kernel { mems: vec![ON_D2], reads: 1 }, NB => D2D None 0; ["intel-cpu.read-copy"];
        CPU Op::Kernel { mems: vec![ON_D2], reads: 1 }, NB => D2D None 0; ["cpu.read-copy"];
        GENERIC Op::Kernel { mems: vec![ON_D2], reads: 1 }, NB => D2D ViaHost SZ; ["generic.read-copy"];
        NVIDIA Op::Kernel { mems: vec![ON_D2], reads: 0 }, NB => D2D ViaHost SZ; ["any.first-use"] not ["nvidia.read-copy"];
        // The copy a read left on this device: nothing moves, for a read, a write or a migration.
        NVIDIA Op::Kernel { mems: vec![COPIED], reads: 1 }, NB => D2D None 0; ["nvidia.read-copy"] not ["any.first-use"];
        NVIDIA Op::Kernel { mems: vec![COPIED], reads: 0 }, NB => D2D None 0; ["nvidia.read-copy"] not ["any.first-use"];
        NVIDIA migrate(&[COPIED], 0), NB => H2D None 0; ["any.already-there"];
        NVIDIA Op::Copy { src: COPIED, dst: PLAIN, bytes: SZ }, NB => D2D Device SZ; ["any.device-copy"] not ["nvidia.between-devices"];

        // AMD ROCm.
        AMD write(PLAIN, PAGEABLE, SZ), B => H2D Pinned SZ; ["amd.pageable"];
        AMD write(PLAIN, PAGEABLE, MIB), NB => H2D Staged MIB; ["amd.pageable"] not ["amd.nonblocking", "amd.alignment"];
        AMD write(PLAIN, UHP_PTR, MIB), B => H2D Pinned MIB; ["amd.registered"];
        AMD write(AHP, PAGEABLE, SZ), B => H2D HostCopy SZ; ["amd.alloc-host-ptr", "any.host-resident"] not ["amd.memory"];
        AMD write(UHP, PAGEABLE, SZ), B => H2D HostCopy SZ; ["amd.use-host-ptr"];
        AMD Op::Copy { src: AHP, dst: PLAIN, bytes: SZ }, NB => H2D Pinned SZ; ["amd.alloc-host-ptr"];
        AMD Op::Copy { src: PLAIN, dst: AHP, bytes: SZ }, NB => D2H Pinned SZ; ["amd.alloc-host-ptr"];
        AMD Op::Copy { src: AHP, dst: UHP, bytes: SZ }, NB => H2H HostCopy SZ; ["any.host-copy"];
        AMD map(AHP, CL_MAP_READ), B => D2H ZeroCopy 0; ["amd.alloc-host-ptr"];
        AMD map(PLAIN, CL_MAP_WRITE), B => D2H None 0; ["amd.map"];
        AMD Op::Unmap { mem: AHP, ptr: MAPPED }, B => H2D ZeroCopy 0; ["amd.alloc-host-ptr"];
        AMD migrate(&[ON_D2], 0), NB => H2D None 0; ["amd.migrate"];
        AMD migrate(&[ON_D2], CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED), NB => D2D ViaHost SZ; ["amd.migrate", "amd.between-devices"];
        AMD migrate(&[PLAIN], CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED), NB => D2H Staged SZ; ["amd.migrate"] not ["any.content-undefined"];
        AMD Op::Kernel { mems: vec![ON_D2], reads: 0 }, NB => D2D ViaHost SZ; ["amd.between-devices"];

        // Intel discrete and integrated.
        INTEL_DGPU write(PLAIN, PAGEABLE, SZ), B => H2D Pinned SZ; ["intel-dgpu.pageable"] not ["intel-dgpu.alignment"];
        INTEL_DGPU read(PLAIN, MIS, SZ), B => D2H Pinned SZ; ["intel-dgpu.alignment"] not ["intel-dgpu.nonblocking"];
        INTEL_DGPU write(PLAIN, UHP_PTR, MIB), B => H2D Pinned MIB; ["intel-dgpu.registered"];
        INTEL_DGPU Op::Copy { src: AHP, dst: PLAIN, bytes: SZ }, NB => D2D Device SZ; ["any.device-copy", "intel-dgpu.alloc-host-ptr"] not ["intel-dgpu.memory"];
        INTEL_DGPU write(UHP, PAGEABLE, SZ), B => H2D Pinned SZ; ["intel-dgpu.pageable", "intel-dgpu.use-host-ptr"];
        INTEL_DGPU map(PLAIN, CL_MAP_WRITE), B => D2H Pinned SZ; ["intel-dgpu.map"];
        INTEL_DGPU migrate(&[ON_D2], 0), NB => H2D None 0; ["intel-dgpu.migrate"];
        INTEL_DGPU migrate(&[ON_HOST], CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED), NB => H2D None 0; ["any.content-undefined"];
        INTEL_DGPU migrate(&[ON_HOST], CL_MIGRATE_MEM_OBJECT_HOST), NB => D2H None 0; ["any.already-there"];
        INTEL_DGPU migrate(&[PLAIN], CL_MIGRATE_MEM_OBJECT_HOST), NB => D2H None 0; ["intel-dgpu.migrate"];
        INTEL_DGPU Op::Kernel { mems: vec![ON_D2], reads: 0 }, NB => D2D ViaHost SZ; ["any.first-use", "intel-dgpu.between-devices"];
        INTEL_IGPU write(PLAIN, PAGEABLE, SZ), B => H2D Pinned SZ; ["intel-igpu.pageable"] not ["intel-igpu.alignment"];
        INTEL_IGPU write(PLAIN, MIS, SZ), B => H2D HostCopy SZ; ["intel-igpu.pageable"];
        INTEL_IGPU write(PLAIN, MIS, SZ), NB => H2D Pinned SZ; ["intel-igpu.pageable", "intel-igpu.alignment"] not ["intel-igpu.nonblocking"];
        INTEL_IGPU write(AHP, PAGEABLE, SZ), B => H2D HostCopy SZ; ["intel-igpu.pageable"];
        INTEL_IGPU write(UHP, PAGEABLE, SZ), NB => H2D Pinned SZ; ["intel-igpu.pageable"];
        INTEL_IGPU write(PLAIN, UHP_PTR, MIB), NB => H2D Pinned MIB; ["intel-igpu.registered"];
        INTEL_IGPU map(PLAIN, CL_MAP_WRITE), B => D2H ZeroCopy 0; ["intel-igpu.memory"] not ["intel-igpu.map"];
        INTEL_IGPU migrate(&[PLAIN], CL_MIGRATE_MEM_OBJECT_HOST), NB => D2H None 0; ["intel-igpu.memory"];
        INTEL_IGPU Op::Kernel { mems: vec![ON_D2], reads: 0 }, NB => D2D ViaHost SZ; ["intel-igpu.between-devices"];
        INTEL_IGPU migrate(&[ON_D2], 0), NB => H2D None 0; ["intel-igpu.migrate"];
        INTEL_IGPU Op::Copy { src: AHP, dst: PLAIN, bytes: SZ }, NB => D2D Device SZ; ["intel-igpu.memory"] not ["intel-igpu.alloc-host-ptr", "intel-igpu.use-host-ptr"];

        // CPU devices: every transfer is a host memcpy, map moves nothing.
        INTEL_CPU write(PLAIN, PAGEABLE, SZ), B => H2D HostCopy SZ; ["intel-cpu.memory"] not ["intel-cpu.pageable", "intel-cpu.alignment", "intel-cpu.nonblocking"];
        INTEL_CPU write(PLAIN, UHP_PTR, SZ), NB => H2D HostCopy SZ; ["intel-cpu.registered"];
        INTEL_CPU map(UHP, CL_MAP_READ), B => D2H ZeroCopy 0; ["intel-cpu.memory"] not ["intel-cpu.map", "intel-cpu.use-host-ptr", "intel-cpu.alloc-host-ptr"];
        INTEL_CPU migrate(&[ON_D2], 0), NB => D2D None 0; ["intel-cpu.between-devices"] not ["intel-cpu.migrate"];
        CPU write(PLAIN, PAGEABLE, SZ), NB => H2D HostCopy SZ; ["cpu.memory"] not ["cpu.pageable", "cpu.nonblocking", "cpu.alignment"];
        CPU read(AHP, MIS, SZ), B => D2H HostCopy SZ; ["cpu.memory"] not ["cpu.alloc-host-ptr"];
        CPU read(UHP, UHP_PTR, SZ), B => D2H HostCopy SZ; ["cpu.registered", "cpu.memory"] not ["cpu.use-host-ptr"];
        CPU map(PLAIN, CL_MAP_WRITE), B => D2H ZeroCopy 0; ["cpu.memory"] not ["cpu.map"];
        CPU Op::Unmap { mem: AHP, ptr: MAPPED }, B => H2D ZeroCopy 0; ["cpu.memory"];
        CPU Op::Copy { src: PLAIN, dst: AHP, bytes: SZ }, NB => D2D Device SZ; ["cpu.memory"];
        CPU migrate(&[ON_D2], 0), NB => D2D None 0; ["cpu.between-devices"] not ["cpu.migrate"];
        CPU migrate(&[PLAIN], CL_MIGRATE_MEM_OBJECT_HOST), NB => D2H None 0; ["cpu.memory"];
        CPU Op::PtrCopy { dst: SVM, src: PAGEABLE, bytes: MIB }, B => H2D HostCopy MIB; ["cpu.svm", "cpu.memory"];
        CPU Op::PtrMigrate { ptrs: vec![(SVM, MIB)], flags: 0 }, B => H2D None 0; ["cpu.memory"];
        CPU Op::Kernel { mems: vec![ON_D2], reads: 0 }, NB => D2D None 0; [];

        // Generic GPU: conservative.
        GENERIC write(PLAIN, MIS, SZ), NB => H2D Staged SZ; ["generic.pageable", "generic.nonblocking", "generic.alignment"] not ["generic.memory"];
        GENERIC write(PLAIN, UHP_PTR, MIB), B => H2D Pinned MIB; ["generic.registered"];
        GENERIC Op::Copy { src: AHP, dst: UHP, bytes: SZ }, NB => D2D Device SZ; ["any.device-copy", "generic.alloc-host-ptr", "generic.use-host-ptr"];
        GENERIC map(UHP, CL_MAP_WRITE), B => D2H Pinned SZ; ["generic.map"];
        GENERIC migrate(&[ON_D2], 0), NB => D2D ViaHost SZ; ["generic.between-devices"] not ["generic.migrate"];
        GENERIC migrate(&[ON_HOST], 0), NB => H2D Staged SZ; ["generic.migrate"];
        GENERIC write(PLAIN, MAPPED, SZ), NB => H2D Pinned SZ; ["any.mapped"] not ["generic.nonblocking"];
    }
}

#[test]
fn every_row_classifies_as_the_rules_say() {
    let mem = world();
    let dev = DeviceProfile {
        base_addr_align: 128,
        ..DeviceProfile::unknown(1)
    };
    let mut failures = Vec::new();
    for (i, case) in table().iter().enumerate() {
        let req = Request {
            op: case.op.clone(),
            device: D1,
            blocking: case.blocking,
        };
        let got = classify(&req, &mem, &dev, case.set);
        let ids: Vec<_> = got.reasons.iter().map(|r| r.rule).collect();
        let ok = (got.direction, got.path, got.bytes) == case.want
            && case.cites.iter().all(|c| ids.contains(c))
            && case.absent.iter().all(|c| !ids.contains(c))
            && got.rules == case.set.name
            && got.blocking == case.blocking
            // What the classifier marked as it cited is what a trace's ids say.
            && got.cited == Cited::of(ids.iter().copied());
        if !ok {
            failures.push(format!(
                "row {i} ({} {:?}): want {:?} citing {:?}, not {:?}\n  got {}",
                case.set.name,
                case.op,
                case.want,
                case.cites,
                case.absent,
                got.line()
            ));
        }
        for r in &got.reasons {
            assert!(
                rules::find(r.rule).is_some(),
                "row {i}: {} is not a rule id",
                r.rule
            );
            assert!(!r.text().is_empty());
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rule_of_every_set_is_exercised() {
    let table = table();
    let covered: HashSet<&str> = table
        .iter()
        .flat_map(|c| c.cites.iter().chain(c.absent))
        .copied()
        .collect();
    let mut missing: Vec<&str> = rules::SETS
        .iter()
        .flat_map(|s| s.rows().map(|r| r.0))
        .filter(|id| !covered.contains(id))
        .collect();
    missing.extend(
        rules::common::ALL
            .iter()
            .map(|r| r.id)
            // Cited outside the classifier: by `refused` and `locked` (their own tests below).
            .filter(|id| {
                !covered.contains(id) && !["any.driver-error", "any.mlocked"].contains(id)
            }),
    );
    assert!(
        missing.is_empty(),
        "rules no table row exercises: {missing:?}"
    );
}

#[test]
fn classification_details() {
    let mem = world();
    let dev = DeviceProfile::unknown(1);
    let req = |op, blocking| Request {
        op,
        device: D1,
        blocking,
    };
    // Provenance names the buffer, its flags and the offset.
    let c = classify(
        &req(write(PLAIN, MAPPED + 4096, MIB), true),
        &mem,
        &dev,
        &NVIDIA,
    );
    let host = c.host.as_ref().unwrap();
    assert_eq!(host.kind, "mapped");
    assert_eq!(
        host.provenance().to_string(),
        "pinned: inside the live WRITE mapping of buffer #2 (ALLOC_HOST_PTR), at +4096"
    );
    // Alignment facts.
    let c = classify(
        &req(write(PLAIN, PAGEABLE + 4096 + 65, 100), true),
        &mem,
        &dev,
        &NVIDIA,
    );
    assert_eq!(
        c.alignment,
        Some(Alignment {
            ptr_mod_4096: 65,
            ptr_mod_64: 1,
            size_mod_64: 36
        })
    );
    assert_eq!(c.host.as_ref().unwrap().kind, "pageable");
    // Rect: bytes moved and host span differ.
    let rect = Op::Host {
        mem: PLAIN,
        to_device: false,
        ptr: PAGEABLE,
        bytes: 300,
        span: 9000,
        rect: true,
    };
    let c = classify(&req(rect, true), &mem, &dev, &NVIDIA);
    assert_eq!((c.bytes, c.host_span), (300, Some(9000)));
    // A USE_HOST_PTR buffer's own range: the placement rule decides, the range is reported.
    let c = classify(&req(read(UHP, UHP_PTR, SZ), true), &mem, &dev, &NVIDIA);
    assert_eq!(
        (c.path, c.host.as_ref().unwrap().kind),
        (Path::Pinned, "use-host-ptr")
    );
    // The log line holds the class, the host memory and every rule.
    let line = c.line();
    assert!(line.starts_with("D2H pinned 64.0 MiB blocking; host 0x10000000 pinned: inside the host range of buffer #3 (USE_HOST_PTR), at +0"), "{line}");
    assert!(line.contains("[nvidia.registered]"), "{line}");
}

#[test]
fn a_staged_transfer_from_locked_memory_says_mlock_does_not_pin() {
    let mem = world();
    let req = Request {
        op: write(PLAIN, PAGEABLE, MIB),
        device: D1,
        blocking: true,
    };
    let mut c = classify(&req, &mem, &DeviceProfile::unknown(1), &NVIDIA);
    locked(&mut c);
    assert_eq!(
        (c.direction, c.path),
        (H2D, Path::Staged),
        "mlock changes no path"
    );
    let line = c.line();
    assert!(
        line.contains("[any.mlocked] locked with mlock, but the driver is not told"),
        "{line}"
    );
    assert!(c.cited.locked);
    assert_eq!(c.cited, Cited::of(c.reasons.iter().map(|r| r.rule)));
}

#[test]
fn refused_commands_carry_the_error() {
    let c = refused(Some(CL_INVALID_MEM_OBJECT), true, &NVIDIA);
    assert_eq!(
        (c.path, c.bytes, c.error),
        (Path::Unknown, 0, Some(CL_INVALID_MEM_OBJECT))
    );
    assert_eq!(c.reasons[0].rule, "any.driver-error");
    assert!(c.reasons[0].text().contains("CL_INVALID_MEM_OBJECT (-38)"));
}

#[test]
fn wild_pointers_and_sizes_do_not_panic() {
    let mem = world();
    let dev = DeviceProfile::unknown(1);
    for set in rules::SETS {
        for ptr in [0, 1, usize::MAX, MAPPED + SZ as usize - 1] {
            for bytes in [0, 1, u64::MAX] {
                for op in [
                    write(PLAIN, ptr, bytes),
                    read(SUB, ptr, bytes),
                    Op::PtrCopy {
                        dst: ptr,
                        src: usize::MAX - ptr,
                        bytes,
                    },
                    Op::PtrMap {
                        ptr,
                        flags: u64::MAX,
                        bytes,
                    },
                    Op::Unmap {
                        mem: usize::MAX,
                        ptr,
                    },
                    migrate(&[ptr, PLAIN], u64::MAX),
                    Op::PtrMigrate {
                        ptrs: vec![(ptr, bytes), (0, u64::MAX)],
                        flags: 0,
                    },
                ] {
                    let c = classify(
                        &Request {
                            op,
                            device: 0,
                            blocking: false,
                        },
                        &mem,
                        &dev,
                        set,
                    );
                    let _ = c.line();
                }
            }
        }
    }
}
