//! Every program is seen, whatever its loader (issue #55): programs that open OpenCL themselves
//! and look each entry point up in the handle (hashcat, OpenCV's T-API), a loader that ignores
//! `OPENCL_LAYERS` (as CUDA's does), and a run that sees no OpenCL call says why in one line.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn clxfer() -> std::process::Command {
    let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    cmd.env_remove("CLXFER_LOG");
    cmd
}

/// `clxfer run ARGS -- PROGRAM PROGRAM_ARGS` with the exit report's call counts on, and `env`.
fn clxfer_run(args: &[&str], program: &Path, program_args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = clxfer();
    cmd.arg("run")
        .args(args)
        .args(["--log", "info", "--"])
        .arg(program)
        .args(program_args)
        .envs(env.iter().copied());
    run_cmd(cmd, Duration::from_secs(180))
}

/// A loader that ignores `OPENCL_LAYERS`, as CUDA's does: a copy of the system's ocl-icd whose
/// name for the variable is changed (the same length), in a folder of its own to put on
/// `LD_LIBRARY_PATH` (as CUDA puts its loader first on the library path).
fn loader_without_layers() -> PathBuf {
    let dir = profile_dir().join("test-loader-without-layers");
    let lib = dir.join("libOpenCL.so.1");
    if !lib.exists() {
        let real = std::fs::canonicalize("/usr/lib/x86_64-linux-gnu/libOpenCL.so.1")
            .expect("ocl-icd's libOpenCL.so.1 (scripts/setup installs it)");
        let bytes = std::fs::read(real).unwrap();
        let (from, to) = (b"OPENCL_LAYERS\0", b"OPENCL_LAYERZ\0");
        let at: Vec<usize> = bytes
            .windows(from.len())
            .enumerate()
            .filter(|(_, w)| *w == from)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(at.len(), 1, "ocl-icd names OPENCL_LAYERS once");
        let mut patched = bytes;
        patched[at[0]..at[0] + to.len()].copy_from_slice(to);
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(format!(".lib.{}", std::process::id()));
        std::fs::write(&tmp, patched).unwrap();
        std::fs::rename(&tmp, &lib).unwrap();
    }
    dir
}

fn assert_saw_the_transfers(r: &Run, what: &str) {
    let counts = r.counts();
    for api in ["clEnqueueWriteBuffer", "clEnqueueReadBuffer"] {
        assert_eq!(
            counts.get(api),
            Some(&1),
            "{what}: {api} seen once\n{}",
            r.stderr
        );
    }
    assert!(!r.stderr.contains("no OpenCL call was seen"), "{what}");
}

#[test]
fn programs_that_open_opencl_themselves_are_seen_by_preload_and_by_default() {
    let prog = program("dlopened");
    for how in ["local", "global"] {
        let mut cmd = command(&prog, Load::None);
        cmd.arg(how);
        let plain_run = run_cmd(cmd, Duration::from_secs(60));
        assert_eq!(plain_run.code, Some(0), "{}", plain_run.stdout);
        assert!(
            plain_run.stdout.contains("checksum"),
            "{}",
            plain_run.stdout
        );
        assert!(
            plain_run
                .stdout
                .contains("RTLD_NEXT from the program: the dlsym it links"),
            "{}",
            plain_run.stdout
        );
        for flags in [&["--preload"][..], &[], &["--layer"]] {
            let what = format!("{how} {flags:?}");
            let r = clxfer_run(&[&["--summary"][..], flags].concat(), &prog, &[how], &[]);
            assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
            // Unchanged, RTLD_NEXT lookups included: the dlsym interposer keeps its caller.
            assert_eq!(r.stdout, plain_run.stdout, "{what}");
            assert_saw_the_transfers(&r, &what);
            assert!(
                r.stderr.contains("clxfer: report: above, on stderr"),
                "{what}"
            );
        }
    }
}

#[test]
fn a_loader_that_ignores_layers_is_seen_through_by_default_and_doctor_says_so() {
    let dir = loader_without_layers();
    let path = dir.to_str().unwrap();
    let env = [("LD_LIBRARY_PATH", path)];
    for (name, args) in [("dlopened", &["local"][..]), ("transfers", &[])] {
        let prog = program(name);
        let mut cmd = command(&prog, Load::None);
        cmd.args(args).env("LD_LIBRARY_PATH", path);
        let plain = run_cmd(cmd, Duration::from_secs(60));
        assert_eq!(plain.code, Some(0), "{name}: {}", plain.stdout);
        // The stand-in is the loader these programs got, and it ignores the layer.
        let r = clxfer_run(&["--summary", "--layer"], &prog, args, &env);
        assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
        assert_eq!(r.stdout, plain.stdout, "{name}");
        assert!(r.counts().is_empty(), "{name}: the layer saw calls");
        let line = r.one_line("no OpenCL call was seen");
        assert!(line.contains("does not load layers"), "{line}");
        assert!(line.contains("without --layer"), "{line}");
        assert!(!r.stderr.contains("report: above"), "{}", r.stderr);
        // By default clxfer loads both ways, and the preload sees every call.
        let r = clxfer_run(&["--summary"], &prog, args, &env);
        assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
        assert_eq!(r.stdout, plain.stdout, "{name}");
        if name == "dlopened" {
            assert_saw_the_transfers(&r, name);
        } else {
            assert!(r.counts().len() > 5, "{name}: {}", r.stderr);
        }
        let (preload, layer, _) = r.via().expect("the exit report");
        assert!(preload > 0 && layer == 0, "{name}: {}", r.stderr);
    }
    // `clxfer doctor` tests whether the loader loads layers.
    for (lib_path, said) in [(Some(path), "IGNORED (tested"), (None, "loaded (tested")] {
        let mut cmd = clxfer();
        cmd.arg("doctor");
        if let Some(p) = lib_path {
            cmd.env("LD_LIBRARY_PATH", p);
        }
        let r = run_cmd(cmd, Duration::from_secs(60));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let line = r
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with("layers:"))
            .unwrap_or_else(|| panic!("no layers line:\n{}", r.stdout));
        assert!(line.contains(said), "{lib_path:?}: {line}");
    }
}

#[test]
fn a_run_that_sees_no_opencl_call_says_why_in_one_line() {
    // A program that makes none: clxfer was loaded, and says so; no report is promised.
    let r = clxfer_run(&["--summary"], Path::new("true"), &[], &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let line = r.one_line("no OpenCL call was seen");
    assert!(line.contains("true made none"), "{line}");
    assert_eq!(r.clxfer_lines().len(), 1, "{}", r.stderr);
    // A trace run says the same, once, and lists no trace.
    let r = clxfer_run(&[], Path::new("true"), &[], &[]);
    assert_eq!(r.clxfer_lines().len(), 1, "{}", r.stderr);
    r.one_line("no OpenCL call was seen");
    // A statically linked program: nothing can load into it.
    let dir = fresh_dir("static");
    let src = dir.join("st.c");
    std::fs::write(&src, "int main(void) { return 4; }\n").unwrap();
    let exe = dir.join("st");
    let built = std::process::Command::new("cc")
        .args(["-static", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(built.success(), "cc -static");
    let r = clxfer_run(&["--summary"], &exe, &[], &[]);
    assert_eq!(r.code, Some(4), "{}", r.stderr);
    let line = r.one_line("no OpenCL call was seen");
    assert!(line.contains("is statically linked"), "{line}");
}
