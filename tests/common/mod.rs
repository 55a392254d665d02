//! Shared by the integration tests: build the C test programs, run a program with clxfer loaded in
//! a given way (under a timeout), and read what clxfer said it saw.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;
use wait_timeout::ChildExt;

/// How clxfer is loaded into the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    None,
    Layer,
    Preload,
    Both,
}

pub const ALL_LOADS: [Load; 4] = [Load::None, Load::Layer, Load::Preload, Load::Both];

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>: this test binary lives in its deps/ folder.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// The built libclxfer.so (cargo builds the cdylib with the rlib the tests link).
pub fn layer_lib() -> PathBuf {
    let lib = profile_dir().join("libclxfer.so");
    assert!(
        lib.exists(),
        "{} missing: run `cargo build` before `cargo test` (scripts/test does)",
        lib.display()
    );
    lib
}

static BUILD: Mutex<()> = Mutex::new(());

/// Compiles tests/programs/<name>.c (once per change) and returns the binary.
pub fn program(name: &str) -> PathBuf {
    let src = root().join("tests/programs").join(format!("{name}.c"));
    let out_dir = profile_dir().join("test-programs");
    let shared = name == "testicd";
    let out = out_dir.join(if shared {
        format!("lib{name}.so")
    } else {
        name.to_string()
    });
    let _lock = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let newest_input = [
        src.clone(),
        root().join("tests/programs/common.h"),
        layer_lib(),
    ]
    .iter()
    .filter_map(|p| p.metadata().and_then(|m| m.modified()).ok())
    .max()
    .unwrap();
    if out
        .metadata()
        .and_then(|m| m.modified())
        .is_ok_and(|t| t >= newest_input)
    {
        return out;
    }
    std::fs::create_dir_all(&out_dir).unwrap();
    // Build to a private name and rename, so test binaries running at once never see half a file.
    let tmp = out_dir.join(format!(".{name}.{}", std::process::id()));
    // An MPI program is built by the MPI's own compiler driver.
    let mut cc = Command::new(if name == "ranks" { "mpicc" } else { "cc" });
    cc.args([
        "-O1",
        "-Wall",
        "-Werror",
        "-Wno-deprecated-declarations",
        "-o",
    ])
    .arg(&tmp)
    .arg(&src);
    match name {
        "testicd" => {
            cc.args(["-shared", "-fPIC"]);
        }
        // Linked to clxfer instead of the ICD loader: RTLD_NEXT finds no OpenCL.
        "no_loader" => {
            cc.arg(layer_lib())
                .arg(format!("-Wl,-rpath,{}", profile_dir().display()));
        }
        // Open OpenCL themselves.
        "fake_loader" | "dlclose" | "dlopened" => {
            cc.arg("-ldl");
        }
        _ => {
            cc.args(["-lOpenCL", "-lpthread"]);
        }
    }
    let status = cc.status().expect("cc");
    assert!(status.success(), "compiling {name} failed");
    std::fs::rename(&tmp, &out).unwrap();
    out
}

/// What a run produced.
#[derive(Debug)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
    /// The traces the run wrote (each has passed `clxfer check`), sorted.
    pub traces: Vec<PathBuf>,
}

impl Run {
    /// The per-entry-point counts from clxfer's exit report (`CLXFER_LOG=info`).
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.stderr
            .lines()
            .filter_map(|l| l.strip_prefix("clxfer: calls:"))
            .flat_map(|l| l.split_whitespace())
            .map(|item| {
                let (name, n) = item.split_once('=').unwrap();
                (name.to_string(), n.parse().unwrap())
            })
            .collect()
    }

    /// (preload, layer, extension) from the report's first line.
    pub fn via(&self) -> Option<(u64, u64, u64)> {
        let line = *self.reports().first()?;
        let inner = line.split("(via ").nth(1)?.trim_end_matches(')');
        let nums: Vec<u64> = inner
            .split(", ")
            .map(|part| part.rsplit(' ').next().unwrap().parse().unwrap())
            .collect();
        Some((nums[0], nums[1], nums[2]))
    }

    /// clxfer's exit reports ("clxfer: saw N OpenCL calls ..."), one per process that made calls.
    pub fn reports(&self) -> Vec<&str> {
        self.clxfer_lines()
            .into_iter()
            .filter(|l| l.starts_with("clxfer: saw "))
            .collect()
    }

    pub fn clxfer_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("clxfer:"))
            .collect()
    }

    /// The one `clxfer:` line containing `about`; fails the test unless there is exactly one.
    pub fn one_line(&self, about: &str) -> &str {
        let lines: Vec<&str> = self
            .clxfer_lines()
            .into_iter()
            .filter(|l| l.contains(about))
            .collect();
        assert_eq!(lines.len(), 1, "one line about {about:?}: {}", self.stderr);
        lines[0]
    }
}

/// A command with clxfer loaded as `load` and no inherited clxfer or loader settings.
pub fn command(program: impl AsRef<Path>, load: Load) -> Command {
    let mut cmd = Command::new(program.as_ref());
    for (key, _) in std::env::vars() {
        if key.starts_with("CLXFER_")
            || key.starts_with("OCL_ICD")
            || key == "OPENCL_LAYERS"
            || key == "LD_PRELOAD"
        {
            cmd.env_remove(key);
        }
    }
    // Load clxfer as asked, with its exit report on.
    let lib = layer_lib();
    if matches!(load, Load::Layer | Load::Both) {
        cmd.env("OPENCL_LAYERS", &lib);
    }
    if matches!(load, Load::Preload | Load::Both) {
        cmd.env("LD_PRELOAD", &lib);
    }
    cmd.env("CLXFER_LOG", "info");
    cmd.env("CLXFER_DIR", fresh_dir("traces"));
    cmd
}

/// A new empty directory under target/<profile>/test-output/.
pub fn fresh_dir(what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = profile_dir().join("test-output").join(format!(
        "{what}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The traces in `dir`, each checked by `clxfer check`'s rules (every trace a test produces is).
pub fn checked_traces(dir: &Path) -> Vec<PathBuf> {
    let mut traces: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    traces.retain(|p| p.extension().is_some_and(|e| e == "json" || e == "pftrace"));
    traces.sort();
    for t in &traces {
        let report = clxfer::trace::check::check_file(t)
            .unwrap_or_else(|e| panic!("{}: unreadable trace: {e}", t.display()));
        assert!(
            report.ok(),
            "{} breaks Perfetto's rules:\n{}",
            t.display(),
            report.violations.join("\n")
        );
    }
    traces
}

/// Runs to completion, or kills it and fails the test after `timeout` (a hang).
pub fn run_cmd(mut cmd: Command, timeout: Duration) -> Run {
    let dir = cmd
        .get_envs()
        .find(|(k, _)| *k == "CLXFER_DIR")
        .and_then(|(_, v)| v.map(PathBuf::from));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    // Drain the pipes on threads so a chatty child cannot block on a full pipe.
    let t_out = drain(child.stdout.take().unwrap());
    let t_err = drain(child.stderr.take().unwrap());
    let status = match child.wait_timeout(timeout).unwrap() {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {timeout:?} (hang?)");
        }
    };
    Run {
        stdout: String::from_utf8_lossy(&t_out.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&t_err.join().unwrap()).into_owned(),
        code: status.code(),
        traces: dir.as_deref().map(checked_traces).unwrap_or_default(),
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        pipe.read_to_end(&mut bytes).unwrap();
        bytes
    })
}

pub fn run(program: impl AsRef<Path>, load: Load, env: &[(&str, &str)]) -> Run {
    let mut cmd = command(program, load);
    cmd.envs(env.iter().copied());
    run_cmd(cmd, Duration::from_secs(180))
}

/// An ICD vendors folder holding PoCL and, if asked, the test ICD.
pub fn vendors_dir(with_test_icd: bool) -> PathBuf {
    static MADE: Mutex<()> = Mutex::new(());
    let _lock = MADE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = profile_dir().join(format!(
        "test-vendors-{}",
        if with_test_icd { "both" } else { "pocl" }
    ));
    // Built (or rebuilt, when its source changed) before the early return below.
    let test_icd = with_test_icd.then(|| program("testicd"));
    if dir.join("pocl.icd").exists() && (!with_test_icd || dir.join("test.icd").exists()) {
        return dir;
    }
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pocl.icd"), "libpocl.so.2\n").unwrap();
    if let Some(icd) = test_icd {
        std::fs::write(dir.join("test.icd"), format!("{}\n", icd.display())).unwrap();
    }
    dir
}

/// A vendors folder of its own that lists one driver alone (`name`, its ICD library as a vendors
/// file names it), for `OCL_ICD_VENDORS`.
pub fn only_driver(name: &str, icd: &str) -> PathBuf {
    let dir = profile_dir().join(format!("test-vendors-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.icd")), format!("{icd}\n")).unwrap();
    dir
}

/// The settings that run a test program on Rusticl's llvmpipe device.
pub fn on_rusticl() -> Vec<(&'static str, String)> {
    let dir = only_driver("rusticl", "libRusticlOpenCL.so.1");
    vec![
        ("OCL_ICD_VENDORS", dir.display().to_string()),
        ("RUSTICL_ENABLE", "llvmpipe".into()),
        ("TEST_PLATFORM", "rusticl".into()),
    ]
}

/// Issue #24: NVIDIA's migrations carry no trustworthy device time. Each migration's device slice
/// in `events` is marked untrusted and sits, 0 long, at or after the end of its own enqueue call
/// (on no other command's time). Returns how many there are (none is a failure).
pub fn untrusted_migrations_stand_alone(events: &[serde_json::Value]) -> usize {
    let device = |e: &serde_json::Value| e["pid"].as_u64() >= Some(1 << 31);
    let host: std::collections::HashMap<u64, &serde_json::Value> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "enqueue" && !device(e))
        .map(|e| (e["args"]["command"].as_u64().unwrap(), e))
        .collect();
    let migrations: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["ph"] == "X" && device(e))
        .filter(|e| e["name"].as_str().unwrap().starts_with("Migrate"))
        .collect();
    assert!(!migrations.is_empty());
    for m in &migrations {
        assert_eq!(m["args"]["device_time"], "untrusted", "{m}");
        assert_eq!(m["dur"].as_f64(), Some(0.0), "{m}");
        let h = host[&m["args"]["command"].as_u64().unwrap()];
        let call_end = h["ts"].as_f64().unwrap() + h["dur"].as_f64().unwrap();
        assert!(
            m["ts"].as_f64().unwrap() >= call_end - 0.001,
            "{m} before its call ended"
        );
    }
    migrations.len()
}
