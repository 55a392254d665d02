//! The trace writer's speed (issue #4's target: at least 2 million events per second; issue
//! #29's for protobuf: 5 million): the records of a 4 KiB write/read/map/unmap storm, as the layer
//! hands them over, rendered by `sink::chrome` into a sink, as JSON and as Perfetto's protobuf.
//! Each enqueue is four events: host slice, device slice, two flow ends.

use clxfer::layer::Api;
use clxfer::model::classify::{Op, Request, classify};
use clxfer::model::device::DeviceProfile;
use clxfer::model::kinds::MemKind;
use clxfer::model::memory::{NewObject, Registry};
use clxfer::model::rules::NVIDIA;
use clxfer::perfetto::emit::Proto;
use clxfer::sink::chrome::{Chrome, Start};
use clxfer::sink::record::*;
use clxfer::sink::writer::Output;
use clxfer::timing::clock;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const ENQUEUES: usize = 1000;

fn records() -> Vec<Record> {
    let mut r = Registry::new();
    let new = NewObject {
        kind: MemKind::Buffer,
        context: 0xc0,
        flags: opencl_sys::CL_MEM_READ_WRITE,
        size: 4096,
        host_ptr: 0,
        element_size: 1,
        parent: None,
        sole_device: Some(0xd1),
    };
    r.add_object(0x100, new);
    let profile = DeviceProfile::unknown(1);
    let base = clock::start().mono_ns;
    let mut out = Vec::new();
    let apis = [
        Api::clEnqueueWriteBuffer,
        Api::clEnqueueReadBuffer,
        Api::clEnqueueMapBuffer,
        Api::clEnqueueUnmapMemObject,
    ];
    for i in 0..ENQUEUES {
        let api = apis[i % 4];
        let op = match api {
            Api::clEnqueueWriteBuffer | Api::clEnqueueReadBuffer => Op::Host {
                mem: 0x100,
                to_device: api == Api::clEnqueueWriteBuffer,
                ptr: 0x7f00_0000_1010,
                bytes: 4096,
                span: 4096,
                rect: false,
            },
            Api::clEnqueueMapBuffer => Op::Map {
                mem: 0x100,
                flags: opencl_sys::CL_MAP_READ,
                bytes: 4096,
                ptr: 0x7f00_0000_2000,
            },
            _ => Op::Unmap {
                mem: 0x100,
                ptr: 0x7f00_0000_2000,
            },
        };
        let req = Request {
            op,
            device: 0xd1,
            blocking: false,
        };
        let class = classify(&req, &r, &profile, &NVIDIA);
        let t = base + 1_000_000 + i as u64 * 5_000;
        let queue = QueueRef {
            device: 1,
            queue: 1,
        };
        out.push(Record::Command(Command {
            id: i as u64 + 1,
            api,
            queue,
            host_tid: 7,
            host_begin: t,
            host_end: t + 900,
            phases: Some((t + 300, t + 400)),
            start: t + 2_000,
            end: t + 3_000,
            time: DeviceTime::Measured,
            status: 0,
            class: Some((class.direction, class.path)),
            bytes: class.bytes,
            blocking: false,
            kernel: None,
            waits: Box::default(),
            held: false,
        }));
        out.push(Record::Call(Call {
            api,
            tid: 7,
            begin: t,
            end: t + 900,
            command: Some(Box::new(Enqueued {
                flags: Default::default(),
                sampled: false,
                id: i as u64 + 1,
                queue,
                class: Some(class),
                mems: Default::default(),
                uses: Default::default(),
                kernel: None,
                timed: true,
                deps: Default::default(),
                region: None,
            })),
            node: 0,
            waited: None,
        }));
    }
    out
}

/// What a writer of the benchmark starts with.
fn start() -> Start<'static> {
    Start {
        program: "bench",
        job: clxfer::job::this(),
        command_line: &[],
        mode: "trace",
        settings: &[],
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("writer");
    g.throughput(Throughput::Elements(4 * ENQUEUES as u64));
    g.bench_function("chrome: 4 KiB storm records, events", |b| {
        // A fresh writer per batch: the records' timestamps repeat from batch to batch.
        let setup = || {
            (
                Chrome::<_>::new(std::io::sink(), "bench".into(), start()),
                records(),
            )
        };
        b.iter_batched(
            setup,
            |(mut c, mut r)| c.write(&mut r),
            criterion::BatchSize::LargeInput,
        );
    });
    g.throughput(Throughput::Elements(4 * ENQUEUES as u64));
    g.bench_function("perfetto: 4 KiB storm records, events", |b| {
        let setup = || {
            (
                Chrome::<_, Proto>::new(std::io::sink(), "bench".into(), start()),
                records(),
            )
        };
        b.iter_batched(
            setup,
            |(mut c, mut r)| c.write(&mut r),
            criterion::BatchSize::LargeInput,
        );
    });
    g.throughput(Throughput::Elements(4 * ENQUEUES as u64));
    g.bench_function("chrome: plain calls (clRetainMemObject), events", |b| {
        let setup = || {
            let base = clock::start().mono_ns;
            let calls = (0..4 * ENQUEUES as u64)
                .map(|i| {
                    Record::Call(Call {
                        api: Api::clRetainMemObject,
                        tid: 7,
                        begin: base + i * 100,
                        end: base + i * 100 + 30,
                        command: None,
                        node: 0,
                        waited: None,
                    })
                })
                .collect::<Vec<_>>();
            (
                Chrome::<_>::new(std::io::sink(), "bench".into(), start()),
                calls,
            )
        };
        b.iter_batched(
            setup,
            |(mut c, mut r)| c.write(&mut r),
            criterion::BatchSize::LargeInput,
        );
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
