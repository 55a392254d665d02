//! `clxfer doctor`: the effective options, the layer, the loader, the platforms and devices.

use crate::layer_library;
use clxfer::config::Config;
use clxfer::layer::probe;
use std::path::Path;
use std::process::ExitCode;

pub fn doctor(testing: bool) -> ExitCode {
    let cfg = Config::from_env();
    for warning in &cfg.warnings {
        eprintln!("clxfer: {warning}");
    }
    println!("clxfer {}", env!("CARGO_PKG_VERSION"));
    println!("\nOptions:");
    // The testing-only options only when asked, or when one is set.
    let shown: Vec<_> = cfg
        .settings
        .iter()
        .filter(|s| testing || s.is_set() || !s.spec.testing_only())
        .collect();
    let width = shown
        .iter()
        .map(|s| s.spec.var.len())
        .max()
        .unwrap_or(0)
        .max(22);
    for s in shown {
        let from = s.from();
        let value = if s.value.is_empty() {
            "(unset)"
        } else {
            s.value.as_str()
        };
        println!("  {:<width$} {:<24} ({from})", s.spec.var, value);
    }
    if !testing {
        println!("  (testing-only options: clxfer doctor --testing)");
    }

    println!("\nLayer library:");
    let lib = layer_library();
    match &lib {
        Some(lib) => {
            println!("  {}", lib.display());
            println!("  clxfer run loads it both ways; by hand:");
            println!("  by LD_PRELOAD:      LD_PRELOAD={} PROGRAM", lib.display());
            println!(
                "  as a loader layer:  OPENCL_LAYERS={} PROGRAM",
                lib.display()
            );
        }
        None => println!(
            "  libclxfer.so not found next to this binary, nor in ../lib (build with `cargo build`)"
        ),
    }
    for var in [
        "OPENCL_LAYERS",
        "LD_PRELOAD",
        "OCL_ICD_VENDORS",
        "OCL_ICD_FILENAMES",
    ] {
        if let Ok(value) = std::env::var(var) {
            println!("  {var}={value}");
        }
    }

    println!("\nOpenCL:");
    match probe::inspect(&cfg.opencl_lib) {
        Err(e) => {
            println!("  {e}");
            return ExitCode::from(1);
        }
        Ok(inst) => {
            println!("  loader library: {}", inst.library);
            println!(
                "  loader:         {}",
                inst.loader
                    .as_deref()
                    .unwrap_or("unknown (no clGetICDLoaderInfoOCLICD)")
            );
            if let Some(lib) = &lib {
                println!("  layers:         {}", layers(lib));
            }
            if let Some(err) = inst.error {
                println!(
                    "  clGetPlatformIDs failed: {err} (no platforms: is an ICD installed in /etc/OpenCL/vendors?)"
                );
            }
            for (i, p) in inst.platforms.iter().enumerate() {
                println!("  platform {i}: {} ({}), {}", p.name, p.vendor, p.version);
                for (j, d) in p.devices.iter().enumerate() {
                    println!(
                        "    device {j}: {} [{}], {}, {:.1} GiB global memory, rules {}",
                        d.name,
                        d.kind,
                        d.version,
                        d.global_mem as f64 / (1u64 << 30) as f64,
                        cfg.rules.map_or(d.rules, |r| r.name)
                    );
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// What a test of the loader found ([`loader_loads`]).
pub enum Layers {
    Loaded,
    Ignored,
    /// Not tested, and why.
    Unknown(String),
}

/// The line `clxfer doctor` prints.
fn layers(lib: &Path) -> String {
    match loader_loads(lib) {
        Layers::Loaded => {
            "loaded (tested: OPENCL_LAYERS loaded libclxfer.so into a test process)".into()
        }
        Layers::Ignored => "IGNORED (tested: a test process with OPENCL_LAYERS set never \
             loaded libclxfer.so): clxfer sees programs here by LD_PRELOAD, which `clxfer run` \
             picks; do not pass --layer"
            .into(),
        Layers::Unknown(why) => format!("not tested ({why})"),
    }
}

/// Whether this machine's loader loads layers, tested: a child of this binary opens the loader
/// with `OPENCL_LAYERS` naming libclxfer.so (`--probe-layer`) and says whether it got loaded.
pub fn loader_loads(lib: &Path) -> Layers {
    let Ok(exe) = std::env::current_exe() else {
        return Layers::Unknown("this binary's path is unknown".into());
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["doctor", "--probe-layer"])
        .arg(lib)
        .env("OPENCL_LAYERS", lib)
        .env("CLXFER_MODE", "off")
        .env_remove("LD_PRELOAD")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match cmd.output() {
        Ok(out) if out.stdout.starts_with(b"loaded") => Layers::Loaded,
        Ok(out) if out.stdout.starts_with(b"ignored") => Layers::Ignored,
        Ok(out) => Layers::Unknown(String::from_utf8_lossy(&out.stdout).trim().to_string()),
        Err(e) => Layers::Unknown(e.to_string()),
    }
}

/// `clxfer doctor --probe-layer LIB`, in the child [`layers`] starts.
pub fn probe_layer(layer: &Path) -> ExitCode {
    let cfg = Config::from_env();
    match probe::loads_layer(&cfg.opencl_lib, layer) {
        Ok(true) => println!("loaded"),
        Ok(false) => println!("ignored"),
        Err(e) => println!("{e}"),
    }
    ExitCode::SUCCESS
}
