//! The classifier and the registry with 10,000 live objects and 10,000 pinned or registered host
//! ranges (issue #3's target: under 100 ns per classification). `scripts/bench` runs it; the
//! figures are in docs/PERFORMANCE.md.

use clxfer::model::classify::{Op, Request, classify};
use clxfer::model::device::DeviceProfile;
use clxfer::model::effects;
use clxfer::model::kinds::{MemKind, RangeKind};
use clxfer::model::memory::{NewObject, Place, Registry};
use clxfer::model::rules::{CPU, NVIDIA};
use criterion::{Criterion, black_box, criterion_group, criterion_main};
use opencl_sys::*;

const N: usize = 10_000;
const MIB: u64 = 1 << 20;
const DEVICE: usize = 0xd1;

/// Objects at handles 0x1000 + 16·i; every third a USE_HOST_PTR buffer (a registered range), a
/// mapping of every other, SVM allocations: 10,000 ranges, spread over the address space.
fn world() -> Registry {
    let mut r = Registry::new();
    let mut ranges = 0;
    for i in 0..N {
        let flags = match i % 3 {
            0 => CL_MEM_USE_HOST_PTR,
            1 => CL_MEM_ALLOC_HOST_PTR,
            _ => CL_MEM_READ_WRITE,
        };
        let host_ptr = if flags == CL_MEM_USE_HOST_PTR {
            host(i)
        } else {
            0
        };
        let new = NewObject {
            kind: MemKind::Buffer,
            context: 0xc0,
            flags,
            size: MIB,
            host_ptr,
            element_size: 1,
            parent: None,
            sole_device: Some(DEVICE),
        };
        r.add_object(handle(i), new);
        r.set_residence(handle(i), Place::Device(DEVICE), Some(DEVICE));
        ranges += usize::from(flags == CL_MEM_USE_HOST_PTR);
    }
    let mut i = 0;
    while ranges < N {
        if i % 3 == 1 {
            r.add_mapping(handle(i), host(i), MIB, CL_MAP_WRITE);
        } else if i % 3 == 2 {
            r.add_allocation(host(i), MIB, RangeKind::Svm { flags: 0 }, None);
        }
        ranges += usize::from(i % 3 != 0);
        i += 1;
    }
    assert_eq!((r.objects(), r.ranges()), (N, N));
    r
}

fn handle(i: usize) -> usize {
    0x1000 + 16 * i
}

/// Host memory of object i: 2 MiB apart, so the gaps between ranges are pageable.
fn host(i: usize) -> usize {
    0x7000_0000_0000 + i * 2 * MIB as usize
}

fn bench(c: &mut Criterion) {
    let mem = world();
    let dev = DeviceProfile::unknown(1);
    let write = |i: usize, ptr: usize| Request {
        op: Op::Host {
            mem: handle(i),
            to_device: true,
            ptr,
            bytes: 4096,
            span: 4096,
            rect: false,
        },
        device: DEVICE,
        blocking: true,
    };
    let cases = [
        (
            "write from pageable memory (no range)",
            write(5002, host(5000) + MIB as usize + 64),
        ),
        (
            "write from a mapped pointer",
            write(5002, host(5002 - 1) + 4096),
        ),
        (
            "write from a USE_HOST_PTR range",
            write(5002, host(4998) + 64),
        ),
        (
            "map for READ",
            Request {
                op: Op::Map {
                    mem: handle(4999),
                    flags: CL_MAP_READ,
                    bytes: MIB,
                    ptr: 0,
                },
                device: DEVICE,
                blocking: true,
            },
        ),
        (
            "migrate to host",
            Request {
                op: Op::Migrate {
                    mems: vec![handle(5000)],
                    flags: CL_MIGRATE_MEM_OBJECT_HOST,
                },
                device: DEVICE,
                blocking: false,
            },
        ),
    ];
    let mut group = c.benchmark_group("classify (10k objects, 10k ranges)");
    for (name, req) in &cases {
        group.bench_function(format!("nvidia: {name}"), |b| {
            b.iter(|| classify(black_box(req), &mem, &dev, &NVIDIA))
        });
    }
    group.bench_function("cpu: write from pageable memory", |b| {
        b.iter(|| classify(black_box(&cases[0].1), &mem, &dev, &CPU))
    });
    group.finish();

    c.bench_function("registry lookup: host pointer (10k ranges)", |b| {
        b.iter(|| mem.host_range(black_box(host(4998) + 64), 4096))
    });
    let mut mem = world();
    c.bench_function("write: classify + apply effects (10k objects)", |b| {
        b.iter(|| {
            let c = classify(black_box(&cases[0].1), &mem, &dev, &NVIDIA);
            effects::apply(&cases[0].1, &mut mem, &NVIDIA, &dev);
            c
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
