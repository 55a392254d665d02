//! Issue #55: the run survives the ways HPC jobs end. SIGTERM, SIGINT, SIGHUP and SIGQUIT (from
//! `timeout`, as a scheduler's walltime or Ctrl-C) finish the summary, the report and the trace's
//! end, which say which signal cut the run, and the program still ends by the signal; a program
//! that handles SIGINT keeps its behaviour; a SIGKILLed, aborted or `_exit`ed run leaves a trace
//! that loads and names its device. The program (tests/programs/signalled.c) blocks the signals
//! until its first OpenCL work is done, so a signal sent early waits for it on any machine.
//!
//! SIGQUIT is tried on Rusticl: on PoCL a process that gets it hangs, without clxfer too (LLVM's
//! handler, which PoCL installs over every earlier one, returns from an asynchronous SIGQUIT; a
//! plain `raise(SIGQUIT)` before it is installed hung in the kernel's core dump here).

mod common;

use common::*;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

/// The children start as a shell's foreground job does: no core files from the signals that
/// dump one (SIGQUIT, SIGSEGV, SIGABRT), and SIGTERM, SIGINT, SIGHUP and SIGQUIT at their default
/// action (a test run started in the background by a script inherits SIGINT and SIGQUIT ignored,
/// under nohup SIGHUP too, and an ignored signal is the program's to keep: clxfer leaves it).
/// The children inherit this process's limit and dispositions.
fn as_a_shell_starts_it() {
    let zero = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: setrlimit reads the struct it is given; SIG_DFL for signals this test process
    // does not handle itself.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &zero);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
}

fn clxfer(args: &[&str]) -> Command {
    let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    cmd.env_remove("CLXFER_LOG").args(args);
    cmd
}

/// The summary's first line.
fn header(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("clxfer summary ·"))
        .unwrap_or_else(|| panic!("no summary:\n{stderr}"))
}

#[test]
fn a_signal_from_timeout_finishes_the_summary_which_says_so_first() {
    as_a_shell_starts_it();
    let prog = program("signalled");
    for sig in ["TERM", "INT", "HUP"] {
        // --foreground: the signal goes to the program once (without it, timeout sends a second
        // copy to its group at once, which can end a PoCL program before clxfer has finished:
        // src/layer/signals.rs).
        let mut cmd = clxfer(&[
            "run",
            "--summary",
            "--",
            "timeout",
            "--foreground",
            "-s",
            sig,
            "1",
        ]);
        cmd.arg(&prog).arg("wait");
        let r = run_cmd(cmd, Duration::from_secs(180));
        // timeout's own status: the program timed out.
        assert_eq!(r.code, Some(124), "{sig}: {}", r.stderr);
        assert_eq!(r.stdout, "wrote\n", "{sig}");
        let first = header(&r.stderr);
        assert!(
            first.contains(&format!("cut by SIG{sig}")),
            "{sig}: {first}"
        );
        assert!(r.stderr.contains("H2D"), "{sig}: {}", r.stderr);
        assert!(
            r.stderr.contains("clxfer: report: above, on stderr"),
            "{sig}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("after clxfer finished"), "{}", r.stderr);
    }
}

#[test]
fn a_program_ends_by_its_signal_or_exit_as_without_clxfer_and_its_trace_loads() {
    as_a_shell_starts_it();
    let prog = program("signalled");
    for how in ["term", "int", "hup", "kill", "segv", "abort", "_exit"] {
        let mut plain = Command::new(&prog);
        plain.arg(how);
        let plain = plain.output().unwrap();
        let (code, signal) = (plain.status.code(), plain.status.signal());
        assert!(code.is_some() || signal.is_some(), "{how}");
        for load in [Load::Both, Load::Layer] {
            let mut cmd = command(&prog, load);
            cmd.arg(how).env_remove("CLXFER_LOG");
            let dir = cmd
                .get_envs()
                .find(|(k, _)| *k == "CLXFER_DIR")
                .and_then(|(_, v)| v.map(std::path::PathBuf::from))
                .unwrap();
            let out = cmd.output().unwrap();
            assert_eq!(out.status.code(), code, "{how} {load:?}");
            assert_eq!(out.status.signal(), signal, "{how} {load:?}");
            assert_eq!(out.stdout, plain.stdout, "{how} {load:?}");
            let traces = checked_traces(&dir);
            assert_eq!(traces.len(), 1, "{how} {load:?}");
            let report = run_cmd(
                clxfer(&["report", traces[0].to_str().unwrap()]),
                Duration::from_secs(60),
            );
            assert_eq!(report.code, Some(0), "{how}: {}", report.stderr);
            let first = header(&report.stdout);
            let caught = ["term", "int", "hup"].contains(&how);
            let cut = format!("cut by SIG{}", how.to_uppercase());
            assert_eq!(first.contains(&cut), caught, "{how} {load:?}: {first}");
            // Everything a report needs is in the trace from the start: the device's name.
            assert!(
                report.stdout.contains("device #1 · pthread"),
                "{how} {load:?}:\n{}",
                report.stdout
            );
            if caught {
                assert!(report.stdout.contains("H2D"), "{how}: {}", report.stdout);
            }
        }
    }
}

#[test]
fn a_program_that_handles_sigint_keeps_its_behaviour() {
    as_a_shell_starts_it();
    let prog = program("signalled");
    let plain = Command::new(&prog).arg("handler").output().unwrap();
    assert_eq!(plain.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&plain.stdout),
        "wrote\nhandled SIGINT\n"
    );
    let mut cmd = clxfer(&["run", "--summary", "--"]);
    cmd.arg(&prog).arg("handler");
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout.as_bytes(), plain.stdout, "{}", r.stderr);
    assert!(!header(&r.stderr).contains("cut by"), "{}", r.stderr);
}

#[test]
fn clxfer_run_passes_sigterm_on_and_ends_by_it() {
    as_a_shell_starts_it();
    let prog = program("signalled");
    // --foreground: only `clxfer run` gets the signal, and passes it on.
    {
        let mut cmd = Command::new("timeout");
        cmd.args([
            "--foreground",
            "-s",
            "TERM",
            "1",
            env!("CARGO_BIN_EXE_clxfer"),
        ])
        .args(["run", "--summary", "--"])
        .arg(&prog)
        .arg("wait");
        for (key, _) in std::env::vars() {
            if key.starts_with("CLXFER_") || key == "OPENCL_LAYERS" || key == "LD_PRELOAD" {
                cmd.env_remove(key);
            }
        }
        let r = run_cmd(cmd, Duration::from_secs(180));
        assert_eq!(r.code, Some(124), "{}", r.stderr);
        assert!(header(&r.stderr).contains("cut by SIGTERM"), "{}", r.stderr);
        r.one_line("the program was ended by SIGTERM");
    }
}

#[test]
fn sigquit_finishes_the_summary_and_ends_the_program_on_rusticl() {
    as_a_shell_starts_it();
    let prog = program("signalled");
    let env = on_rusticl();
    let plain = Command::new(&prog)
        .arg("quit")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert_eq!(plain.status.signal(), Some(libc::SIGQUIT), "{plain:?}");
    // Sent to itself once its first writes are done, and from `timeout` while it writes on.
    for how in [
        &["quit"][..],
        &["timeout", "--foreground", "-s", "QUIT", "1"],
    ] {
        let mut cmd = clxfer(&["run", "--summary", "--"]);
        if how.len() > 1 {
            cmd.args(how);
        }
        cmd.arg(&prog)
            .arg(if how.len() == 1 { "quit" } else { "wait" })
            .envs(env.iter().map(|(k, v)| (k, v)));
        let r = run_cmd(cmd, Duration::from_secs(180));
        assert_eq!(r.stdout, "wrote\n", "{how:?}");
        // timeout's own status, or `clxfer run`'s for a signal that dumps core (128 + 3: it
        // does not dump a core of its own).
        let code = if how.len() == 1 { 131 } else { 124 };
        let code = Some(code);
        assert_eq!(r.code, code, "{how:?}: {}", r.stderr);
        let first = header(&r.stderr);
        assert!(first.contains("cut by SIGQUIT"), "{how:?}: {first}");
        assert!(r.stderr.contains("llvmpipe"), "{how:?}: {}", r.stderr);
        assert!(r.stderr.contains("H2D"), "{how:?}: {}", r.stderr);
    }
}
