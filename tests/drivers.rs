//! Issue #55: the guest tests on two more real OpenCL implementations that Debian ships, each
//! picked by `OCL_ICD_VENDORS` (never by changing /etc/OpenCL/vendors): Rusticl on llvmpipe
//! (Mesa's, in Rust) and oclgrind (a simulator). Each program runs without clxfer, then as a
//! loader layer, by LD_PRELOAD and both: what it prints and how it ends are the same, and the
//! trace loads and names the driver's device.
//!
//! `clxfer run`'s default is tried on each too. Where each driver runs the programs: on oclgrind 21.10 here, `guest`, `callbacks` and
//! `signalled` do not finish without clxfer in a minute (blocking 1 MiB writes), so it runs the
//! program that opens OpenCL itself; on Rusticl 22.3 `callbacks` waits for ever for a callback
//! on the driver's thread without clxfer. `guest queries` holds clxfer to each driver's own
//! answers: Rusticl answers profiling queries about the events of a queue made without profiling
//! (the spec says CL_PROFILING_INFO_NOT_AVAILABLE, as PoCL does), so clxfer, which forced
//! profiling on, learns which way the driver goes before it answers.

mod common;

use common::*;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

struct Driver {
    name: &'static str,
    /// The ICD library, as a vendors file names it.
    icd: &'static str,
    /// What `TEST_PLATFORM` matches in its platform name, and a word of its device's name.
    platform: &'static str,
    device: &'static str,
    env: &'static [(&'static str, &'static str)],
    programs: &'static [&'static [&'static str]],
    /// The ways clxfer is loaded into them.
    loads: &'static [Load],
}

const DRIVERS: [Driver; 2] = [
    Driver {
        name: "rusticl",
        icd: "libRusticlOpenCL.so.1",
        platform: "rusticl",
        device: "llvmpipe",
        env: &[("RUSTICL_ENABLE", "llvmpipe")],
        programs: &[
            &["guest", "atexit"],
            &["guest", "queries"],
            &["signalled", "term"],
            &["signalled", "_exit"],
            &["dlopened", "local"],
        ],
        loads: &[Load::Layer, Load::Preload, Load::Both],
    },
    Driver {
        name: "oclgrind",
        icd: "/usr/lib/oclgrind/liboclgrind-rt-icd.so",
        platform: "Oclgrind",
        device: "Oclgrind",
        env: &[],
        // Opened RTLD_GLOBAL (OpenCV's way), oclgrind loops for ever without clxfer: its entry
        // points then reach the loader's exports by name (the same loop as under LD_PRELOAD).
        programs: &[&["dlopened", "local"]],
        // oclgrind's entry points call its own exported functions by name: under LD_PRELOAD
        // those reach clxfer's exports, then the loader, then oclgrind again, for ever (a
        // limitation of LD_PRELOAD with such a driver, README). `clxfer run` picks the layer
        // where the loader loads layers, as ocl-icd does.
        loads: &[Load::Layer],
    },
];

#[test]
fn the_guest_programs_are_unchanged_on_rusticl_and_oclgrind() {
    for d in &DRIVERS {
        let dir = only_driver(d.name, d.icd);
        let mut env: Vec<(&str, &str)> = d.env.to_vec();
        env.push(("OCL_ICD_VENDORS", dir.to_str().unwrap()));
        env.push(("TEST_PLATFORM", d.platform));
        for args in d.programs {
            let what = format!("{} {}", d.name, args.join(" "));
            let prog = program(args[0]);
            let plain = {
                let mut cmd = command(&prog, Load::None);
                cmd.args(&args[1..]).envs(env.iter().copied());
                cmd.output().unwrap()
            };
            assert!(
                !String::from_utf8_lossy(&plain.stdout).contains("FAIL"),
                "{what} fails without clxfer: {}",
                String::from_utf8_lossy(&plain.stdout)
            );
            for &load in d.loads {
                let mut cmd = command(&prog, load);
                cmd.args(&args[1..]).envs(env.iter().copied());
                let traces = cmd
                    .get_envs()
                    .find(|(k, _)| *k == "CLXFER_DIR")
                    .and_then(|(_, v)| v.map(PathBuf::from))
                    .unwrap();
                let out = cmd.output().unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert_eq!(out.stdout, plain.stdout, "{what} {load:?}: {stderr}");
                assert_eq!(out.status.code(), plain.status.code(), "{what} {load:?}");
                assert_eq!(
                    out.status.signal(),
                    plain.status.signal(),
                    "{what} {load:?}"
                );
                assert!(
                    !stderr.contains("panicked") && !stderr.contains("internal error"),
                    "{what} {load:?}: {stderr}"
                );
                let traces = checked_traces(&traces);
                assert_eq!(traces.len(), 1, "{what} {load:?}: {stderr}");
                let report = run_cmd(
                    {
                        let mut c = Command::new(env!("CARGO_BIN_EXE_clxfer"));
                        c.arg("report").arg(&traces[0]);
                        c
                    },
                    Duration::from_secs(60),
                );
                assert_eq!(report.code, Some(0), "{what}: {}", report.stderr);
                assert!(
                    report.stdout.contains(d.device),
                    "{what} {load:?}: the report names no {} device:\n{}",
                    d.device,
                    report.stdout
                );
            }
            // `clxfer run` as a user runs it: it picks the way this loader allows.
            let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
            cmd.env_remove("CLXFER_LOG")
                .args(["run", "--summary", "--"])
                .arg(&prog)
                .args(&args[1..])
                .envs(env.iter().copied());
            let out = cmd.output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.stdout, plain.stdout, "clxfer run, {what}: {stderr}");
            // Its summary, but for `_exit`, which runs no exit handler.
            if args[1] != "_exit" {
                assert!(stderr.contains(d.device), "clxfer run, {what}: {stderr}");
            }
        }
    }
}
