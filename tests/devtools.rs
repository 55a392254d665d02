//! DevTools' trace engine (npm `@paulirish/trace_engine`, installed by `scripts/setup`), an
//! independent reader of clxfer's traces: it joins a flow only when each end has exactly the
//! timestamp, pid, tid and category of a slice, and takes two ends at one timestamp for one.
//! Issue #24: every enqueue arrow and every dependency arrow must be joined.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// For each trace: (flow name → (flows in the trace, flows the engine joined)).
fn engine(traces: &[&Path]) -> Vec<serde_json::Map<String, Value>> {
    let mut cmd = std::process::Command::new("node");
    cmd.arg(root().join("tests/devtools/flows.mjs"))
        .args(traces);
    let r = run_cmd(cmd, Duration::from_secs(300));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .unwrap()
                .as_object()
                .unwrap()
                .clone()
        })
        .collect()
}

#[test]
fn devtools_joins_every_arrow_of_a_multi_queue_trace_and_the_demo() {
    let graph = run(program("graph"), Load::Layer, &[]);
    let demo = run(program("demo"), Load::Layer, &[("CLXFER_RULES", "nvidia")]);
    assert_eq!(
        (graph.code, demo.code),
        (Some(0), Some(0)),
        "{}{}",
        graph.stderr,
        demo.stderr
    );
    let traces = [graph.traces[0].as_path(), demo.traces[0].as_path()];
    let seen = engine(&traces);
    for (trace, flows) in traces.iter().zip(&seen) {
        for (name, counts) in flows.iter().filter(|(k, _)| *k != "trace") {
            let (all, joined) = (counts[0].as_u64().unwrap(), counts[1].as_u64().unwrap());
            assert!(all > 0);
            assert_eq!(joined, all, "{}: {name} flows", trace.display());
        }
    }
    assert!(
        seen[0].contains_key("wait"),
        "the graph trace has dependency arrows"
    );
    assert!(seen[0].contains_key("enqueue") && seen[1].contains_key("enqueue"));
}

/// The H200 example (docs/examples/, made on an H200 with NVIDIA's OpenCL): DevTools joins every
/// arrow, the migrations' among them (NVIDIA's untrusted migration times no longer put a device
/// slice on its enqueue's timestamp).
#[test]
fn devtools_joins_every_arrow_of_the_h200_example() {
    let example = root().join("docs/examples/h200-trace.json");
    let seen = engine(&[&example]);
    let counts = &seen[0]["enqueue"];
    let (all, joined) = (counts[0].as_u64().unwrap(), counts[1].as_u64().unwrap());
    assert!(all > 100, "{counts}");
    assert_eq!(joined, all, "{counts}");
}
