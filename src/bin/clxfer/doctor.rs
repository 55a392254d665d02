//! `clxfer doctor`: the effective options, the layer, the loader, the platforms and devices.

use crate::layer_library;
use clxfer::config::Config;
use clxfer::layer::probe;
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
    match layer_library() {
        Some(lib) => {
            println!("  {}", lib.display());
            println!(
                "  as a loader layer:  OPENCL_LAYERS={} PROGRAM",
                lib.display()
            );
            println!("  by LD_PRELOAD:      LD_PRELOAD={} PROGRAM", lib.display());
        }
        None => println!("  libclxfer.so not found next to this binary (build with `cargo build`)"),
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
