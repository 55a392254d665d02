//! `clxfer run`: the program with clxfer loaded (as a loader layer, or by LD_PRELOAD), its exit
//! code passed through, and where each process's trace or report went.

use crate::{elf, fail, layer_library};
use clxfer::config;
use clxfer::event::Event;
use std::ffi::{OsString, c_int};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

#[derive(clap::Args)]
pub struct Args {
    /// A report at exit (on stderr, or --report) instead of a trace.
    #[arg(long)]
    summary: bool,
    /// Where the traces go (CLXFER_DIR; default: that variable, else .); made if missing.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The trace file instead (CLXFER_OUTPUT); `{pid}`, `{program}`, `{rank}` (an MPI or Slurm
    /// job's) and `{host}` in it are filled in for each process.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Where the report goes (CLXFER_REPORT): .json, .md or text; with a trace, too; `-` for
    /// stderr (a character device or FIFO, such as /dev/stderr, is written as it is).
    #[arg(long, value_name = "PATH")]
    report: Option<PathBuf>,
    /// Load clxfer by LD_PRELOAD (by default: as a layer where the loader loads layers, else
    /// by LD_PRELOAD; both where that could not be tested).
    #[arg(long, conflicts_with = "layer")]
    preload: bool,
    /// Load clxfer as an OpenCL loader layer (OPENCL_LAYERS; the loader must support layers).
    #[arg(long)]
    layer: bool,
    /// Time on the host only; leave the program's queues as they are.
    #[arg(long)]
    no_device_timing: bool,
    /// The vendor rules to classify with (CLXFER_RULES).
    #[arg(long, value_name = "R", value_parser = clap::builder::PossibleValuesParser::new(clxfer::model::rules::CHOICES))]
    rules: Option<String>,
    /// The device memory the findings judge against, as 4GiB or 512MiB (CLXFER_DEVICE_MEMORY):
    /// the card you mean when the rules are forced.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    device_memory: Option<String>,
    /// What clxfer says on stderr (CLXFER_LOG): warn, info or debug.
    #[arg(long, value_name = "LEVEL", value_parser = clap::builder::PossibleValuesParser::new(["warn", "info", "debug"]))]
    log: Option<String>,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM ARGS")]
    program: Vec<OsString>,
}

/// What the program's processes noted in the notes file they appended to (`KIND WHAT` per line,
/// [`config::RUN_NOTES`]), each in the order written.
#[derive(Default)]
struct Notes {
    /// The processes clxfer was loaded into (their pids).
    loaded: usize,
    /// The programs that made a traced OpenCL call, one per process.
    called: Vec<String>,
    traces: Vec<PathBuf>,
    /// Report files, and `-` for each report printed on stderr.
    reports: Vec<PathBuf>,
}

fn read_notes(notes: &Path) -> Notes {
    let text = std::fs::read_to_string(notes).unwrap_or_default();
    let of = |kind: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.strip_prefix(kind)?.strip_prefix(' '))
            .map(str::to_string)
            .collect()
    };
    Notes {
        loaded: of("loaded").len(),
        called: of("called"),
        traces: of("trace").into_iter().map(PathBuf::from).collect(),
        reports: of("report").into_iter().map(PathBuf::from).collect(),
    }
}

/// A notes file of this run's own, made new in the temporary directory (mode 0600).
fn notes_file() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir();
    for n in 0..100 {
        let path = dir.join(format!("clxfer-run-{}-{n}.notes", std::process::id()));
        match clxfer::sink::trace_file::open_new(&path) {
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("100 names taken"))
}

/// The trace's last event, from the file's end (one event per line; the end event carries the
/// report): `None` when the trace has none (it was cut short).
fn end_event(trace: &Path) -> Option<Event> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(trace).ok()?;
    let mut first = [0u8; 1];
    if f.read_exact(&mut first).is_ok() && clxfer::perfetto::decode::is_protobuf(&first) {
        // Protobuf has no lines: its events, read through.
        let mut end = None;
        let name = clxfer::vocab::schema::TRACE_END;
        let read = clxfer::trace::read::read_file_with(trace, |_, e| {
            if let Ok(e) = e
                && e.name == name
            {
                end = Some(e);
            }
        });
        return read.ok().and(end);
    }
    let len = f.metadata().ok()?.len();
    let tail = len.min(8 << 20);
    f.seek(SeekFrom::Start(len - tail)).ok()?;
    let mut text = String::new();
    f.take(tail).read_to_string(&mut text).ok()?;
    let line = text.lines().rev().find(|l| {
        l.contains(&format!(
            "\"name\":\"{}\"",
            clxfer::vocab::schema::TRACE_END
        ))
    })?;
    clxfer::json::read::from_json(serde_json::from_str(line.trim_end_matches(',')).ok()?).ok()
}

/// `PATH (SIZE, N events)`, from the trace's end event (`None`: it was cut short).
fn about(trace: &Path, end: Option<&Event>) -> String {
    let size = std::fs::metadata(trace).map(|m| m.len()).unwrap_or(0);
    let events = end
        .and_then(|e| e.args.get("events")?.as_u64())
        .map_or_else(|| "cut short".to_string(), |n| format!("{n} events"));
    format!(
        "{} ({}, {events})",
        trace.display(),
        clxfer::units::bytes(size)
    )
}

/// The report's verdict in the trace's end event: what to change first, or that nothing needs to.
fn verdict(end: &Event) -> Option<String> {
    let report = end.arg(clxfer::vocab::schema::REPORT)?;
    Some(report["verdict"]["headline"].as_str()?.to_string())
}

pub fn run(a: Args) -> ExitCode {
    let Some(lib) = layer_library() else {
        return fail(
            "libclxfer.so is neither next to the clxfer binary nor in ../lib or ../lib/clxfer \
             (build it with cargo build, or install clxfer with scripts/install)",
        );
    };
    // The user's CLXFER_* variables reach the program; a flag overrides its variable.
    let inherited = |var: &str| std::env::var_os(var).filter(|v| !v.is_empty());
    // The directory the trace goes to is made if missing (not one a placeholder names).
    let dir = match a.output.as_deref().or(a.out.as_deref()) {
        Some(o) if a.output.is_some() => o.parent().map(Path::to_path_buf),
        Some(o) => Some(o.to_path_buf()),
        None => inherited("CLXFER_DIR").map(PathBuf::from),
    };
    if let Some(dir) =
        dir.filter(|d| !d.as_os_str().is_empty() && !d.to_string_lossy().contains('{'))
        && let Err(e) = std::fs::create_dir_all(&dir)
    {
        return fail(format!(
            "cannot make the output directory {}: {e}",
            dir.display()
        ));
    }
    let (program, args) = a.program.split_first().expect("clap requires the program");
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    let mode = a.summary.then(|| OsString::from("summary"));
    let flags: [(&str, Option<OsString>, &str); 8] = [
        ("CLXFER_MODE", mode, "--summary"),
        (
            "CLXFER_DIR",
            a.out.clone().map(PathBuf::into_os_string),
            "--out",
        ),
        (
            "CLXFER_OUTPUT",
            a.output.clone().map(PathBuf::into_os_string),
            "--output",
        ),
        (
            "CLXFER_REPORT",
            a.report.clone().map(PathBuf::into_os_string),
            "--report",
        ),
        (
            "CLXFER_DEVICE_TIMING",
            a.no_device_timing.then(|| OsString::from("off")),
            "--no-device-timing",
        ),
        (
            "CLXFER_RULES",
            a.rules.clone().map(OsString::from),
            "--rules",
        ),
        (
            "CLXFER_DEVICE_MEMORY",
            a.device_memory.clone().map(OsString::from),
            "--device-memory",
        ),
        ("CLXFER_LOG", a.log.clone().map(OsString::from), "--log"),
    ];
    // The layer says which options are in effect and where each came from: it is told which
    // its variables a flag set.
    let mut set_by = Vec::new();
    for (var, value, flag) in &flags {
        if let Some(v) = value {
            cmd.env(var, v);
            set_by.push(format!("{var}={flag}"));
        }
    }
    // Every setting the program would get is checked before it starts: a bad one stops the run
    // here rather than warning from inside the program and falling back.
    let environment: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| {
            !flags
                .iter()
                .any(|(var, value, _)| var == k && value.is_some())
        })
        .collect();
    let refused = config::refused(environment.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if !refused.is_empty() {
        for line in &refused {
            eprintln!("clxfer: {line}");
        }
        eprintln!("clxfer: the program was not started");
        return ExitCode::from(2);
    }
    cmd.env(config::RUN_FLAGS, set_by.join(" "));
    let notes = match notes_file() {
        Ok(n) => n,
        Err(e) => {
            return fail(format!(
                "cannot make a notes file in the temporary directory: {e}"
            ));
        }
    };
    cmd.env(config::RUN_NOTES, &notes);
    // By default the way this machine's loader allows, tested as `clxfer doctor` does: a loader
    // that loads layers sees every program, linked or opening OpenCL itself, and clxfer then stays
    // out of the program's symbols (an ICD that calls its own entry points by name, as oclgrind
    // does, would reach clxfer's exports again); one that ignores them (CUDA's) is seen through by
    // LD_PRELOAD, which finds programs that open OpenCL themselves through `dlsym`. Untested:
    // both, a call seen both ways counted once.
    let ways: &[&str] = match (a.preload, a.layer) {
        (true, _) => &["LD_PRELOAD"],
        (_, true) => &["OPENCL_LAYERS"],
        _ => match crate::doctor::loader_loads(&lib) {
            crate::doctor::Layers::Loaded => &["OPENCL_LAYERS"],
            crate::doctor::Layers::Ignored => &["LD_PRELOAD"],
            crate::doctor::Layers::Unknown(_) => &["LD_PRELOAD", "OPENCL_LAYERS"],
        },
    };
    for &var in ways {
        let mut value = lib.clone().into_os_string();
        if let Some(old) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            value.push(":");
            value.push(old);
        }
        cmd.env(var, value);
    }
    let status = wait_for(cmd);
    let Notes {
        loaded,
        called,
        traces,
        reports,
    } = read_notes(&notes);
    let _ = std::fs::remove_file(&notes);
    let status = match status {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot run {}: {e}", program.to_string_lossy())),
    };
    let summary = a.summary || inherited("CLXFER_MODE").is_some_and(|m| m == "summary");
    let off = inherited("CLXFER_MODE").is_some_and(|m| m == "off") && !a.summary;
    if called.is_empty() && !off {
        eprintln!("clxfer: {}", unseen(program, loaded, ways, a.layer));
    } else if !summary && !off && traces.is_empty() {
        eprintln!("clxfer: no trace written (the lines above say why)");
    }
    if !summary {
        for t in &traces {
            let end = end_event(t);
            eprintln!("clxfer: trace: {}", about(t, end.as_ref()));
            if let Some(verdict) = end.as_ref().and_then(verdict) {
                eprintln!("clxfer:   verdict: {verdict}");
            }
        }
        if traces.len() > 1 {
            eprintln!(
                "clxfer:   side by side: clxfer report {}",
                together(&traces)
            );
        }
        // The one with the most in it (of a job's, a rank's rather than its launcher's).
        let size = |t: &&PathBuf| std::fs::metadata(t).map_or(0, |m| m.len());
        if let Some(t) = traces.iter().max_by_key(size) {
            eprintln!("clxfer:   open it with: clxfer view {}", t.display());
        }
    }
    for r in &reports {
        match r.to_str() {
            Some("-") => eprintln!("clxfer: report: above, on stderr"),
            _ if clxfer::sink::trace_file::is_stream(r) => {
                eprintln!("clxfer: report: written to {}", r.display())
            }
            _ => eprintln!("clxfer: report: {}", r.display()),
        }
    }
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(code as u8),
        (None, Some(sig)) => {
            eprintln!(
                "clxfer: the program was ended by {}",
                clxfer::sigset::name(sig)
            );
            end_by(sig)
        }
        _ => ExitCode::FAILURE,
    }
}

/// What names several traces for `clxfer report`: their directory, when it holds no other
/// trace, else the files.
fn together(traces: &[PathBuf]) -> String {
    let dir = traces[0].parent().unwrap_or(Path::new("."));
    let alone = traces.iter().all(|t| t.parent() == Some(dir))
        && crate::traces_in(dir).is_ok_and(|inside| inside.len() == traces.len());
    if alone {
        let shown = dir.display().to_string();
        return if shown.is_empty() { ".".into() } else { shown };
    }
    let names: Vec<String> = traces.iter().map(|t| t.display().to_string()).collect();
    names.join(" ")
}

/// The program's process, for the signal handler that passes SIGTERM and SIGHUP on.
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Passes a signal on to the program (SIGTERM, SIGHUP); async-signal-safe.
extern "C" fn pass_on(sig: c_int) {
    let pid = CHILD.load(Ordering::Acquire);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(pid, sig) };
    }
}

/// Does nothing: SIGINT and SIGQUIT from the terminal reach the program too, and `clxfer run`
/// waits for it to finish on them (a handler, not SIG_IGN, which the program would inherit).
extern "C" fn ignore(_: c_int) {}

/// Runs the program and waits for it, as a shell does: a SIGTERM or SIGHUP sent to `clxfer run`
/// (a batch scheduler's walltime) is passed on, and Ctrl-C's SIGINT and SIGQUIT, which the
/// terminal sends the program as well, leave `clxfer run` waiting for the program's end.
fn wait_for(mut cmd: std::process::Command) -> std::io::Result<std::process::ExitStatus> {
    let handlers: [(c_int, extern "C" fn(c_int)); 4] = [
        (libc::SIGTERM, pass_on),
        (libc::SIGHUP, pass_on),
        (libc::SIGINT, ignore),
        (libc::SIGQUIT, ignore),
    ];
    for (sig, handler) in handlers {
        // SAFETY: installing async-signal-safe handlers; exec resets them in the program.
        unsafe { libc::signal(sig, handler as *const () as libc::sighandler_t) };
    }
    let mut child = cmd.spawn()?;
    CHILD.store(child.id() as i32, Ordering::Release);
    child.wait()
}

/// Ends `clxfer run` as the program ended: by the same signal where its default action ends a
/// process without a core dump (so a shell or scheduler sees the same), else with 128 + its number.
fn end_by(sig: c_int) -> ExitCode {
    let plain = [
        libc::SIGTERM,
        libc::SIGINT,
        libc::SIGHUP,
        libc::SIGKILL,
        libc::SIGPIPE,
        libc::SIGALRM,
        libc::SIGUSR1,
        libc::SIGUSR2,
    ];
    if plain.contains(&sig) {
        // SAFETY: the default action back, then the signal to this process, which ends it.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
    ExitCode::from(128u8.saturating_add(sig as u8))
}

/// Why a run saw no OpenCL call, in one line: clxfer was never loaded into the program (and why
/// that is likely), or it was and the program made no call through an OpenCL loader.
fn unseen(program: &std::ffi::OsStr, loaded: usize, ways: &[&str], forced_layer: bool) -> String {
    let name = program.to_string_lossy();
    if loaded > 0 {
        return format!(
            "no OpenCL call was seen: clxfer was loaded into {loaded} process(es) of {name}, and \
             none called OpenCL through an OpenCL loader (a program that opens a vendor's driver \
             directly is not seen); `clxfer doctor` shows what this machine's loader does"
        );
    }
    if forced_layer {
        return format!(
            "no OpenCL call was seen: {name} made none, or its OpenCL loader does not load \
             layers (CUDA's does not; `clxfer doctor` tests this machine's): run it without \
             --layer"
        );
    }
    let why = match elf::inspect(program) {
        Some(elf::Kind::Static) => format!(
            "{name} is statically linked, and neither LD_PRELOAD nor a loader layer can load \
             into such a program"
        ),
        Some(elf::Kind::Setuid) => format!(
            "{name} is setuid or setgid, and the dynamic linker ignores LD_PRELOAD for it (run \
             clxfer inside it instead, e.g. `sudo clxfer run -- PROGRAM`)"
        ),
        // As a layer, clxfer is loaded at the program's first OpenCL call.
        _ if !ways.contains(&"LD_PRELOAD") => format!(
            "{name} made none (this machine's loader loads clxfer as a layer at a program's \
             first call), or a launcher it runs cleared OPENCL_LAYERS (run clxfer inside it \
             instead)"
        ),
        _ => format!(
            "clxfer was never loaded into {name}: it or a launcher it runs cleared LD_PRELOAD and \
             OPENCL_LAYERS (run clxfer inside the launcher instead)"
        ),
    };
    format!("no OpenCL call was seen: {why}")
}

/// `--device-memory`: a size with its unit, checked here (clap says what is wrong).
fn parse_size(s: &str) -> Result<String, String> {
    match clxfer::units::parse_bytes(s) {
        Some(n) if n > 0 => Ok(s.to_string()),
        _ => Err("a size with its unit, such as 4GiB, 512MiB or 16GB".into()),
    }
}
