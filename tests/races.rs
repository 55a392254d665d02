//! Possible data races between queues and devices (issue #25), on two PoCL devices: each variant
//! of tests/programs/races.c, as a loader layer and by preload, in summary and trace mode. A race
//! is said on stderr with both commands; a correct variant gets none; and the program reads back
//! what it reads back without clxfer.

mod common;

use common::*;

const TWO: [(&str, &str); 1] = [("POCL_DEVICES", "pthread pthread")];

fn races(r: &Run) -> Vec<&str> {
    r.clxfer_lines()
        .into_iter()
        .filter(|l| l.contains("possible data race"))
        .collect()
}

#[test]
fn unordered_conflicting_commands_are_said_and_ordered_ones_are_not() {
    let prog = program("races");
    // (mode, the race's two commands as their lines name them; none: no race)
    let cases: &[(&str, Option<[&str; 2]>)] = &[
        ("correct", None),
        (
            "race",
            Some([
                "command #1 (clEnqueueWriteBuffer on device #1 queue #1) writes bytes 0..65536",
                "command #2 (clEnqueueReadBuffer on device #2 queue #2) reads bytes 0..65536",
            ]),
        ),
        ("finish", None),
        ("halves", None),
        ("user", None),
        (
            "ooo",
            Some([
                "command #1 (clEnqueueWriteBuffer on device #1 queue #3) writes bytes 0..65536",
                "command #2 (clEnqueueWriteBuffer on device #1 queue #3) writes bytes 0..65536",
            ]),
        ),
        ("ooo-event", None),
        (
            "kernel",
            Some([
                "command #2 (clEnqueueNDRangeKernel on device #1 queue #1) may write (its kernel argument is not `const`) the whole object",
                "command #3 (clEnqueueReadBuffer on device #2 queue #2) reads bytes 0..65536",
            ]),
        ),
        ("kernel-event", None),
        ("kernel-const", None),
        ("kernel-noinfo", None),
    ];
    for &(mode, want) in cases {
        let plain = {
            let mut cmd = command(&prog, Load::None);
            cmd.arg(mode).envs(TWO);
            run_cmd(cmd, std::time::Duration::from_secs(120))
        };
        assert_eq!(
            plain.code,
            Some(0),
            "{mode}: {}{}",
            plain.stdout,
            plain.stderr
        );
        for clxfer_mode in ["summary", "trace"] {
            for load in [Load::Layer, Load::Preload] {
                let mut cmd = command(&prog, load);
                cmd.arg(mode).envs(TWO).env("CLXFER_MODE", clxfer_mode);
                let r = run_cmd(cmd, std::time::Duration::from_secs(120));
                let what = format!("{mode} {clxfer_mode} {load:?}");
                assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
                assert_eq!(
                    r.stdout, plain.stdout,
                    "{what}: the program read something else"
                );
                let said = races(&r);
                match want {
                    None => assert!(said.is_empty(), "{what}: {said:?}"),
                    Some([first, second]) => {
                        assert_eq!(said.len(), 1, "{what}: {}", r.stderr);
                        assert!(
                            said[0].contains(first) && said[0].contains(second),
                            "{what}: {}",
                            said[0]
                        );
                    }
                }
            }
        }
    }
}

/// A correct program gets no race warning: the project's other test programs, each with what it
/// synchronises (wait lists, clFinish, blocking calls, several threads and queues), on two
/// devices.
#[test]
fn the_other_test_programs_get_no_race_warning() {
    let programs: &[(&str, &[&str])] = &[
        ("demo", &[]),
        ("transfers", &[]),
        ("kernels", &[]),
        ("overlap", &["overlap"]),
        ("overlap", &["serial"]),
        ("graph", &["two"]),
        ("threads", &[]),
        ("in_flight", &[]),
        ("buffers", &[]),
        ("svm_events", &[]),
    ];
    for &(name, args) in programs {
        for (load, mode) in [(Load::Preload, "summary"), (Load::Layer, "trace")] {
            let mut cmd = command(program(name), load);
            cmd.args(args).envs(TWO).env("CLXFER_MODE", mode);
            let r = run_cmd(cmd, std::time::Duration::from_secs(180));
            let what = format!("{name} {args:?} {load:?} {mode}");
            assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
            assert!(races(&r).is_empty(), "{what}: {:?}", races(&r));
        }
    }
}
