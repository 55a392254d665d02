//! The writer on records made up here: lanes, joins, the checker's verdict.
use super::*;
use crate::model::classification::{Direction, Path};
use crate::trace::{check::check, read::parse};
use crate::vocab::Api;

fn command(id: u64, queue: u32, host: u64, start: u64, end: u64) -> Record {
    let base = clock::start().mono_ns;
    Record::Command(Command {
        id,
        api: Api::clEnqueueWriteBuffer,
        queue: QueueRef { device: 1, queue },
        host_tid: 7,
        host_begin: base + host - 500,
        host_end: base + host - 100,
        phases: Some((base + host - 400, base + host - 300)),
        start: base + start,
        end: base + end,
        time: DeviceTime::Measured,
        status: 0,
        class: Some((Direction::H2D, Path::Staged)),
        bytes: 4096,
        blocking: false,
        kernel: None,
        waits: Box::default(),
        held: false,
    })
}

fn host(id: u64, start: u64) -> Record {
    let base = clock::start().mono_ns;
    Record::Call(Call {
        api: Api::clEnqueueWriteBuffer,
        tid: 7,
        begin: base + start - 500,
        end: base + start - 100,
        command: Some(Box::new(Enqueued {
            flags: Default::default(),
            sampled: false,
            id,
            queue: QueueRef {
                device: 1,
                queue: 1,
            },
            class: None,
            mems: Default::default(),
            uses: Default::default(),
            kernel: None,
            timed: true,
            deps: Default::default(),
            region: None,
        })),
        node: 0,
        waited: None,
    })
}

/// Overlapping commands of an out-of-order queue, arriving out of order: each goes to the first
/// lane where it overlaps nothing, and the trace passes every check.
#[test]
fn overlapping_commands_get_lanes_and_late_arrivals_fit_back() {
    let mut out = Vec::new();
    let start = Start {
        program: "t",
        job: &crate::job::Job::default(),
        command_line: &[],
        mode: "trace",
        settings: &[],
    };
    let mut c: Chrome<_> = Chrome::new(&mut out, "test".into(), start);
    let spans = [
        (10_000, 20_000),
        (15_000, 25_000),
        (30_000, 40_000),
        (1_000, 9_000),
        (16_000, 18_000),
    ];
    // A command whose enqueue record never comes (dropped): its slice, with no arrow.
    let mut records = vec![
        command(99, 1, 50_000, 50_000, 51_000),
        Record::Queue(QueueTrack {
            queue: QueueRef {
                device: 1,
                queue: 1,
            },
            out_of_order: true,
            timing: Timing::Forced,
        }),
    ];
    for (i, &(s, e)) in spans.iter().enumerate() {
        // Host calls 1 µs apart, each before its command.
        let h = 1_000 * (i as u64 + 1);
        // Odd ones complete before their enqueue's record arrives (another thread's buffer).
        let (host, command) = (
            host(i as u64 + 1, h),
            command(i as u64 + 1, 1, h, s.max(h), e),
        );
        if i % 2 == 1 {
            records.extend([command, host]);
        } else {
            records.extend([host, command]);
        }
    }
    c.write(&mut records);
    c.finish(&End::default(), [0; KINDS.len()]);
    drop(c);
    let trace = parse(&out).unwrap();
    assert!(trace.closed);
    let report = check(&out).unwrap();
    assert!(report.ok(), "{:?}", report.violations);
    let lane_of = |id: u64| {
        trace
            .events
            .iter()
            .find(|e| {
                e["ph"] == "X"
                    && e["args"]["command"] == id
                    && e["cat"] == "enqueue"
                    && e["pid"] != 0
                    && e["tid"] != 7
            })
            .map(|e| e["tid"].as_u64().unwrap() - s::LANES as u64)
            .unwrap()
    };
    // 1 on lane 0; 2 overlaps it: lane 1; 3 fits lane 0; 4 (earlier, late) fits lane 0;
    // 5 sits inside 1 and 2: lane 2.
    assert_eq!([1, 2, 3, 4, 5].map(lane_of), [0, 1, 0, 0, 2]);
    assert_eq!(lane_of(99), 0);
    assert_eq!(
        report.flows, 5,
        "one arrow per command whose enqueue was recorded"
    );
    let names: Vec<&str> = trace
        .events
        .iter()
        .filter(|e| e["name"] == "thread_name" && e["pid"] != 0)
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"queue #1 (out-of-order) · profiling forced · lane 3"),
        "{names:?}"
    );
}
