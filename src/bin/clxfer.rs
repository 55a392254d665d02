//! The clxfer command line.

use clap::{Parser, Subcommand};
use clxfer::config::{self, Config};
use clxfer::layer::probe;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "clxfer",
    version,
    about = "See how an OpenCL program's bytes move, and why."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the effective options, the OpenCL loader in use, and each platform and device.
    Doctor {
        /// Print the options table as Markdown (the README's table) and exit.
        #[arg(long)]
        options_markdown: bool,
        /// Print the vendor transfer rules as Markdown (docs/RULES.md) and exit.
        #[arg(long)]
        rules_markdown: bool,
        /// Print the trace's args keys as Markdown (docs/TRACE.md) and exit.
        #[arg(long)]
        trace_markdown: bool,
    },
    /// Check traces against every rule Perfetto's JSON importer imposes; exit 1 on a violation,
    /// 2 if a file is not a trace.
    #[command(after_help = "Example:\n  clxfer check clxfer-myprog-4242.json")]
    Check {
        /// Trace files (clxfer-<program>-<pid>.json).
        #[arg(required = true)]
        traces: Vec<PathBuf>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Doctor {
            options_markdown: true,
            ..
        } => {
            print!("{}", config::markdown_table());
            ExitCode::SUCCESS
        }
        Command::Doctor {
            rules_markdown: true,
            ..
        } => {
            print!("{}", clxfer::model::rules::markdown());
            ExitCode::SUCCESS
        }
        Command::Doctor {
            trace_markdown: true,
            ..
        } => {
            print!("{}", clxfer::sink::schema::markdown());
            ExitCode::SUCCESS
        }
        Command::Doctor { .. } => doctor(),
        Command::Check { traces } => check(&traces),
    }
}

/// Shown violations per trace; the rest are counted.
const SHOWN: usize = 50;

fn check(traces: &[PathBuf]) -> ExitCode {
    let mut code = 0u8;
    for path in traces {
        match clxfer::trace::check::check_file(path) {
            Err(e) => {
                eprintln!("clxfer: {e}");
                code = 2;
            }
            Ok(r) => {
                let shape = match (r.closed, r.truncated) {
                    (true, _) => "closed",
                    (false, false) => "not closed (the program did not exit normally?)",
                    (false, true) => "cut short: the last event is incomplete and ignored",
                };
                if r.ok() {
                    println!(
                        "{}: ok: {} events, {} slices, {} flows; {shape}",
                        path.display(),
                        r.events,
                        r.slices,
                        r.flows
                    );
                } else {
                    println!(
                        "{}: {} violation(s) in {} events; {shape}",
                        path.display(),
                        r.violations.len(),
                        r.events
                    );
                    for v in r.violations.iter().take(SHOWN) {
                        println!("  {v}");
                    }
                    if r.violations.len() > SHOWN {
                        println!("  … and {} more", r.violations.len() - SHOWN);
                    }
                    code = code.max(1);
                }
            }
        }
    }
    ExitCode::from(code)
}

fn doctor() -> ExitCode {
    let cfg = Config::from_env();
    for warning in &cfg.warnings {
        eprintln!("clxfer: {warning}");
    }
    println!("clxfer {}", env!("CARGO_PKG_VERSION"));
    println!("\nOptions:");
    for s in &cfg.settings {
        let from = if s.from_env { "set" } else { "default" };
        let shown = if s.value.is_empty() {
            "(unset)"
        } else {
            s.value.as_str()
        };
        println!("  {:<22} {:<24} ({from})", s.spec.var, shown);
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

/// libclxfer.so beside the binary (cargo's target dir) or in ../lib (an install prefix).
fn layer_library() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join("libclxfer.so"), dir.join("../lib/libclxfer.so")]
        .into_iter()
        .find(|p| p.exists())
        .and_then(|p| p.canonicalize().ok())
}
