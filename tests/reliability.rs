//! Reliability and security (issue #8, first part): a file size limit, secure execution, and
//! hostile input to the trace readers.

mod common;

use common::*;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

#[test]
fn a_file_size_limit_ends_the_trace_not_the_program() {
    let plain = run(program("threads"), Load::None, &[]);
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
    for load in [Load::Layer, Load::Preload] {
        let mut cmd = command(program("threads"), load);
        // 20 kB: the trace outgrows it within the first writes. Past RLIMIT_FSIZE the kernel
        // sends SIGXFSZ, which would kill the program.
        unsafe {
            cmd.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: 20_000,
                    rlim_max: 20_000,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
        let r = run_cmd(cmd, Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{load:?}: {}", r.stderr);
        assert_eq!(r.stdout, plain.stdout, "{load:?}");
        let warnings: Vec<&str> = r
            .clxfer_lines()
            .into_iter()
            .filter(|l| l.contains("failed"))
            .collect();
        assert_eq!(warnings.len(), 1, "{load:?}: {}", r.stderr);
        assert!(warnings[0].contains("RLIMIT_FSIZE"), "{}", warnings[0]);
        // What fits is a loadable trace (run_cmd checked it), of whole events.
        assert_eq!(r.traces.len(), 1);
        let size = std::fs::metadata(&r.traces[0]).unwrap().len();
        assert!(size > 1000 && size <= 20_000, "{size}");
    }
}

/// A world-readable copy of the test program and the layer, for another user.
fn shared_copy(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let prog = dir.join("threads");
    let lib = dir.join("libclxfer.so");
    std::fs::copy(program("threads"), &prog).unwrap();
    std::fs::copy(layer_lib(), &lib).unwrap();
    for (p, mode) in [(dir, 0o777), (&prog, 0o755), (&lib, 0o755)] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    (prog, lib)
}

/// Runs `prog` as nobody (setpriv), clxfer as a layer, asked to trace into `out`.
fn as_nobody(prog: &std::path::Path, lib: &std::path::Path, out: &std::path::Path) -> Run {
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(prog)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("OPENCL_LAYERS", lib)
        .env("CLXFER_MODE", "trace")
        .env("CLXFER_LOG", "info")
        .env("CLXFER_DIR", out)
        .env("CLXFER_REPORT", out.join("report.md"))
        .env("POCL_CACHE_DIR", out.join("pocl-cache"))
        .env("HOME", out);
    run_cmd(cmd, Duration::from_secs(120))
}

#[test]
fn in_a_setuid_program_clxfer_reads_no_paths_and_writes_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let plain = run(program("threads"), Load::None, &[]);
    let dir = std::env::temp_dir().join(format!("clxfer-suid-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (prog, lib) = shared_copy(&dir);
    let traces = |out: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(out)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.starts_with("clxfer-") || n.starts_with("report"))
            .collect()
    };
    // The control: the same program, not setuid, as the same user: traced.
    let out = dir.join("out-plain");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    let r = as_nobody(&prog, &lib, &out);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, plain.stdout);
    assert!(
        r.stderr.contains("clxfer: "),
        "clxfer did not load: {}",
        r.stderr
    );
    assert_eq!(traces(&out).len(), 2, "{:?} {}", traces(&out), r.stderr);
    // Setuid root, run by nobody: secure execution.
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let out = dir.join("out-setuid");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    let r = as_nobody(&prog, &lib, &out);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, plain.stdout);
    assert!(traces(&out).is_empty(), "written: {:?}", traces(&out));
    assert!(r.clxfer_lines().is_empty(), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hostile_traces_get_a_clear_error_or_a_result_never_a_panic() {
    let dir = fresh_dir("hostile");
    let deep = format!("[{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("not-json", "hello".into()),
        (
            "truncated",
            "[{\"name\":\"x\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"du".into(),
        ),
        ("deep", deep),
        (
            "huge-number",
            format!(
                "[{{\"name\":\"x\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1e999999,\"dur\":{}}}]",
                "9".repeat(5000)
            ),
        ),
        (
            "wrong-types",
            "[{\"name\":1,\"ph\":[],\"pid\":\"a\",\"tid\":{},\"ts\":\"now\",\"args\":5}]".into(),
        ),
        ("not-objects", "[1,2,3,null,true]".into()),
        ("object-form", "{\"traceEvents\": {\"a\": 1}}".into()),
        (
            "binary",
            String::from_utf8_lossy(&[0xff, 0xfe, 0x00, 0x5b, 0x7b]).into_owned(),
        ),
    ];
    for (name, text) in &cases {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, text).unwrap();
        for args in [
            vec!["check"],
            vec!["report"],
            vec!["report", "--format", "json"],
            vec!["merge", "-o"],
        ] {
            let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
            cmd.env_remove("CLXFER_LOG")
                .env_remove("CLXFER_DIR")
                .args(&args);
            if args[0] == "merge" {
                cmd.arg(dir.join(format!("{name}-merged-{}.json", args.len())));
            }
            cmd.arg(&path);
            let r = run_cmd(cmd, Duration::from_secs(60));
            let code = r.code.unwrap_or(-1);
            assert!(
                (0..=2).contains(&code),
                "{name} {args:?}: exit {code}\n{}",
                r.stderr
            );
            assert!(
                !r.stderr.contains("panicked"),
                "{name} {args:?}: {}",
                r.stderr
            );
            if code == 2 {
                assert_eq!(r.stderr.lines().count(), 1, "{name} {args:?}: {}", r.stderr);
                assert!(
                    r.stderr.starts_with("clxfer: "),
                    "{name} {args:?}: {}",
                    r.stderr
                );
            }
        }
    }
}
