//! The command graph on PoCL (issue #24): each enqueue's wait list resolved to the commands its
//! events stand for, the order its queue adds, user events numbered like commands, and a
//! dependency arrow between the device slices of each explicit wait.

mod common;

use common::*;
use serde_json::Value;
use std::collections::HashMap;

/// The host slices of the program's calls that carry a command number, in call order.
fn numbered(events: &[Value]) -> Vec<&Value> {
    let mut calls: Vec<&Value> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"].as_u64().unwrap() < 1 << 31)
        .filter(|e| e["args"]["command"].is_u64())
        .collect();
    calls.sort_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap());
    calls
}

/// A call (by its place), its `waits`, `after`, `after_all`, and whether it is untimed.
type Expected = (usize, Vec<u64>, Option<u64>, bool, bool);

#[test]
fn wait_lists_queues_and_user_events_make_the_graph_and_its_arrows() {
    let prog = program("graph");
    // One device, then the out-of-order queue on a second device (the waits cross devices;
    // queues are numbered in one series).
    let two = [("POCL_DEVICES", "pthread pthread")];
    for (args, env, q2) in [
        (&[][..], &[][..], "device #1 queue #2"),
        (&["two"][..], &two[..], "device #2 queue #2"),
    ] {
        graph_of(&prog, args, env, q2);
    }
}

/// The graph program run with `args` and `env`: its edges, arrows and synchronisation points;
/// `q2` is its out-of-order queue's name.
fn graph_of(prog: &std::path::Path, args: &[&str], env: &[(&str, &str)], q2: &str) {
    let run = |load: Load, extra: &[(&str, &str)]| {
        let mut cmd = command(prog, load);
        cmd.args(args)
            .envs(env.iter().copied())
            .envs(extra.iter().copied());
        run_cmd(cmd, std::time::Duration::from_secs(180))
    };
    let plain = run(Load::None, &[]);
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
    for load in [Load::Layer, Load::Preload] {
        let r = run(load, &[]);
        assert_eq!(
            (r.code, &r.stdout),
            (plain.code, &plain.stdout),
            "{}",
            r.stderr
        );
        let events = clxfer::trace::read::read_file(&r.traces[0]).unwrap().events;
        let calls = numbered(&events);
        let id = |i: usize| calls[i]["args"]["command"].as_u64().unwrap();
        let api: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
        let want_api = [
            "clEnqueueWriteBuffer H2D host-copy",
            "clEnqueueWriteBuffer H2D host-copy",
            "clCreateUserEvent",
            "clEnqueueReadBuffer D2H host-copy",
            "clEnqueueMarkerWithWaitList",
            "clEnqueueBarrierWithWaitList",
            "clEnqueueWriteBuffer H2D host-copy",
            "clSetUserEventStatus",
            "clEnqueueBarrier",
            "clEnqueueWriteBuffer H2D host-copy",
            "clEnqueueMarker",
            "clEnqueueWriteBuffer H2D host-copy",
        ];
        assert_eq!(api, want_api, "{load:?}");
        // Numbers: one series, in call order (the user event's setting names its own).
        let ids: Vec<u64> = (0..calls.len()).filter(|&i| i != 7).map(id).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        let none: &[u64] = &[];
        let want: [Expected; 10] = [
            (1, vec![id(0)], None, false, false),
            (3, vec![id(2), id(0)], None, false, false),
            (4, none.to_vec(), None, true, false),
            (5, vec![id(1)], None, false, false),
            (6, none.to_vec(), Some(id(5)), false, false),
            (8, none.to_vec(), Some(id(5)), true, true),
            (9, none.to_vec(), Some(id(8)), false, false),
            (10, none.to_vec(), Some(id(8)), true, false),
            (11, vec![id(0)], None, false, false),
            (0, none.to_vec(), None, false, false),
        ];
        for (i, waits, after, all, untimed) in want {
            let a = &calls[i]["args"];
            let got_waits: Vec<u64> = a["waits"]
                .as_array()
                .map(|w| w.iter().map(|x| x.as_u64().unwrap()).collect())
                .unwrap_or_default();
            assert_eq!(got_waits, waits, "{load:?} {}: waits", api[i]);
            assert_eq!(a["after"].as_u64(), after, "{load:?} {}: after", api[i]);
            assert_eq!(
                a["after_all"] == true,
                all,
                "{load:?} {}: after_all",
                api[i]
            );
            assert_eq!(
                a["device_time"] == "untimed",
                untimed,
                "{load:?} {}",
                api[i]
            );
        }
        // The user event's setting names it.
        assert_eq!(id(7), id(2));
        // Host synchronisation points name what they waited for: clWaitForEvents its events'
        // commands, the status query that saw CL_COMPLETE its command (the polls before it
        // nothing), clFinish its queue and the queue's newest command.
        let host_calls = |name: &str| -> Vec<&Value> {
            let mut c: Vec<&Value> = events
                .iter()
                .filter(|e| e["ph"] == "X" && e["name"] == name)
                .collect();
            c.sort_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap());
            c
        };
        let waited = host_calls("clWaitForEvents");
        assert_eq!(waited.len(), 1, "{load:?}");
        assert_eq!(
            waited[0]["args"]["waited_for"],
            serde_json::json!([id(3), id(6)])
        );
        let polls = host_calls("clGetEventInfo");
        let (last, before) = polls.split_last().expect("a poll");
        assert_eq!(last["args"]["waited_for"], serde_json::json!([id(10)]));
        assert!(before.iter().all(|p| p["args"]["waited_for"].is_null()));
        let finished: Vec<(String, u64)> = host_calls("clFinish")
            .iter()
            .map(|f| {
                let a = &f["args"];
                (
                    a["queue"].as_str().unwrap().to_string(),
                    a["finished_up_to"].as_u64().unwrap(),
                )
            })
            .collect();
        let (q1, q2) = ("device #1 queue #1".to_string(), q2.to_string());
        assert_eq!(
            finished,
            [(q1.clone(), id(0)), (q2, id(10)), (q1, id(11))],
            "{load:?}"
        );
        // The in-order queue's commands carry no `after`: the track is the order.
        assert!(calls[11]["args"]["after"].is_null());
        // Dependency arrows, device slice to device slice: 1 → 2, 1 → the read, 2 → the barrier,
        // 1 → the last write (the user event has no device slice to start from).
        let device: HashMap<(u64, u64, String), u64> = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"].as_u64().unwrap() >= 1 << 31)
            .map(|e| {
                let at = (
                    e["pid"].as_u64().unwrap(),
                    e["tid"].as_u64().unwrap(),
                    e["ts"].to_string(),
                );
                (at, e["args"]["command"].as_u64().unwrap())
            })
            .collect();
        let mut ends: HashMap<u64, [Option<u64>; 2]> = HashMap::new();
        for e in events.iter().filter(|e| e["name"] == "wait") {
            let at = (
                e["pid"].as_u64().unwrap(),
                e["tid"].as_u64().unwrap(),
                e["ts"].to_string(),
            );
            let command = *device
                .get(&at)
                .unwrap_or_else(|| panic!("a wait flow off a slice: {e}"));
            let side = usize::from(e["ph"] == "f");
            ends.entry(e["id"].as_u64().unwrap()).or_default()[side] = Some(command);
        }
        let mut arrows: Vec<(u64, u64)> = ends
            .values()
            .map(|[s, f]| (s.expect("a start"), f.expect("an end")))
            .collect();
        arrows.sort();
        let mut want = vec![
            (id(0), id(1)),
            (id(0), id(3)),
            (id(1), id(5)),
            (id(0), id(11)),
        ];
        want.sort();
        assert_eq!(arrows, want, "{load:?}");
    }
    // Summary mode follows the same events and changes nothing the program sees.
    let r = run(Load::Layer, &[("CLXFER_MODE", "summary")]);
    assert_eq!(
        (r.code, &r.stdout),
        (plain.code, &plain.stdout),
        "{}",
        r.stderr
    );
}
