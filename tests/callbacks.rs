//! Issue #55: calls the program makes from a callback that the driver runs inside another call
//! (PoCL runs an event's callback inside `clSetEventCallback` or `clSetUserEventStatus`, a build's
//! inside `clBuildProgram`, a destructor inside `clReleaseMemObject`) are the program's: hooked,
//! traced, and they see exactly what they would without clxfer (a queue made without profiling
//! reads no profiling, its events give no profiling info), in every loading mode.

mod common;

use common::*;

#[test]
fn calls_from_callbacks_inside_a_call_are_the_programs_own() {
    let prog = program("callbacks");
    let plain = run(&prog, Load::None, &[]);
    assert_eq!(plain.code, Some(0), "{}", plain.stdout);
    // Without clxfer: no profiling on the program's queue.
    assert!(
        plain
            .stdout
            .contains("already complete: profiling END r=-7"),
        "{}",
        plain.stdout
    );
    assert!(!plain.stdout.contains("value=2"), "{}", plain.stdout);
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let r = run(&prog, load, &[]);
        assert_eq!(r.code, Some(0), "{load:?}: {}", r.stderr);
        assert_eq!(r.stdout, plain.stdout, "{load:?}: what the callbacks saw");
        let counts = r.counts();
        // 1 at start-up, 5 in each of the four callbacks run inside a call, 1 in the one run on
        // the driver's thread.
        assert_eq!(
            counts.get("clGetPlatformIDs"),
            Some(&22),
            "{load:?}: {counts:?}"
        );
        // 2 by the program, 1 in each of the four callbacks.
        assert_eq!(counts.get("clEnqueueWriteBuffer"), Some(&6), "{load:?}");
        assert_eq!(counts.get("clGetCommandQueueInfo"), Some(&4), "{load:?}");
        assert_eq!(counts.get("clGetEventProfilingInfo"), Some(&2), "{load:?}");
        // In the trace as well: each a slice of its own.
        let ev = events(&r.traces[0]);
        let slices = |name: &str| {
            ev.iter()
                .filter(|e| {
                    e["ph"] == "X" && e["name"].as_str().is_some_and(|n| n.starts_with(name))
                })
                .count()
        };
        assert_eq!(slices("clGetPlatformIDs"), 22, "{load:?}");
        assert_eq!(slices("clEnqueueWriteBuffer"), 6, "{load:?}");
        // Seen once each, whichever way: by both ways, the preload is outermost.
        let (preload, layer, _) = r.via().unwrap();
        match load {
            Load::Layer => assert_eq!(preload, 0),
            _ => assert_eq!(layer, 0, "{load:?}"),
        }
    }
}

fn events(trace: &std::path::Path) -> Vec<serde_json::Value> {
    clxfer::trace::read::read_file(trace)
        .unwrap_or_else(|e| panic!("{}: {e}", trace.display()))
        .events
}
