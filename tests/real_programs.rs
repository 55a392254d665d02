//! Third-party programs run under clxfer: clinfo, clpeak and pyopencl (Debian's packages).

mod common;

use common::*;
use std::time::Duration;

#[test]
fn clinfo_output_is_byte_identical() {
    let plain = run_cmd(command("clinfo", Load::None), Duration::from_secs(120));
    assert_eq!(plain.code, Some(0));
    assert!(plain.stdout.contains("Portable Computing Language"));
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let r = run_cmd(command("clinfo", load), Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{load:?}");
        assert!(r.stdout == plain.stdout, "{load:?}: clinfo output differs");
        assert!(r.counts()["clGetDeviceInfo"] > 50, "{load:?}: {}", r.stderr);
    }
}

#[test]
fn clpeak_transfer_bandwidth_completes() {
    for load in [Load::Layer, Load::Preload] {
        let mut cmd = command("clpeak", load);
        cmd.arg("--transfer-bandwidth");
        let r = run_cmd(cmd, Duration::from_secs(300));
        assert_eq!(r.code, Some(0), "{load:?}\n{}", r.stderr);
        for line in [
            "enqueueWriteBuffer ",
            "enqueueReadBuffer ",
            "enqueueMapBuffer(for read)",
            "enqueueUnmap(after write)",
        ] {
            assert!(
                r.stdout.contains(line),
                "{load:?}: no {line:?} in\n{}",
                r.stdout
            );
        }
        let counts = r.counts();
        assert!(
            counts["clEnqueueWriteBuffer"] > 0 && counts["clEnqueueMapBuffer"] > 0,
            "{counts:?}"
        );
    }
}

#[test]
fn pyopencl_script_gives_the_same_result() {
    let script = root().join("tests/programs/pyopencl_roundtrip.py");
    let py = |load| {
        let mut cmd = command("/usr/bin/python3", load);
        cmd.arg(&script);
        cmd
    };
    let plain = run_cmd(py(Load::None), Duration::from_secs(120));
    assert_eq!(plain.code, Some(0), "{}", plain.stderr);
    assert!(
        plain.stdout.contains("read back equal: True"),
        "{}",
        plain.stdout
    );
    for load in [Load::Layer, Load::Preload, Load::Both] {
        let r = run_cmd(py(load), Duration::from_secs(120));
        assert_eq!(r.code, Some(0), "{load:?}\n{}", r.stderr);
        assert_eq!(r.stdout, plain.stdout, "{load:?}");
        // Preload: pyopencl's extension opened libOpenCL privately (RTLD_LOCAL), so clxfer had to
        // dlopen it itself; the calls were still seen.
        let counts = r.counts();
        assert!(
            counts["clEnqueueMapBuffer"] >= 1 && counts["clEnqueueWriteBuffer"] >= 1,
            "{load:?} {counts:?}"
        );
    }
}
