//! The one options table. Every `CLXFER_*` variable is declared here once; parsing, `clxfer doctor`
//! and the README table are all built from [`OPTIONS`]. A bad value gives one warning naming the
//! variable and the accepted values, and the default is used.
//!
//! Two more variables are not options: `clxfer run` sets them for the layer. [`RUN_FLAGS`] names
//! the options its flags set (so each setting says where it came from), [`RUN_NOTES`] a file where
//! each process notes the trace and report it wrote (so `clxfer run` lists exactly those).

use crate::model::rules::{self, RuleSet};
use crate::trace::format::Format;
use std::sync::OnceLock;

mod values;
use values::validate;
pub use values::{accepted, markdown_table};

/// What values an option accepts.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
    /// A file name or path, used as given.
    Path,
    /// Empty, or the name of an OpenCL entry point.
    EntryPoint,
    /// A whole number of milliseconds.
    Millis,
    /// A whole number of MiB, 1 to 4096.
    Mebibytes,
    /// A whole number.
    Count,
    /// A size in bytes with its unit (`4GiB`, `512MiB`, `16GB`).
    Bytes,
}

/// One row of the options table.
#[derive(Debug)]
pub struct OptSpec {
    pub var: &'static str,
    pub kind: Kind,
    pub default: &'static str,
    pub doc: &'static str,
    /// Puts the checked value (or the default) into its typed field: each option's meaning is
    /// here, once, not read back by name.
    pub set: fn(&mut Config, &str),
}

impl OptSpec {
    /// Options that exist for clxfer's own tests (`CLXFER_TEST_*`): `clxfer doctor` lists them
    /// only when asked, or when one is set.
    pub fn testing_only(&self) -> bool {
        self.var.starts_with("CLXFER_TEST_")
    }
}

pub const OPTIONS: &[OptSpec] = &[
    OptSpec {
        var: "CLXFER_MODE",
        kind: Kind::Choice(&["trace", "summary", "off"]),
        default: "trace",
        doc: "`trace` writes a Chrome trace, `summary` prints a report at exit, \
              `off` forwards every call untouched and records nothing.",
        set: |c, v| {
            c.mode = Mode::ALL
                .into_iter()
                .find(|m| m.as_str() == v)
                .unwrap_or(Mode::Trace)
        },
    },
    OptSpec {
        var: "CLXFER_DIR",
        kind: Kind::Path,
        default: ".",
        doc: "Where trace files go (`clxfer-<program>-<pid>.json`, created new, mode 0600). \
              Default: the working directory.",
        set: |c, v| c.dir = std::path::PathBuf::from(v),
    },
    OptSpec {
        var: "CLXFER_OUTPUT",
        kind: Kind::Path,
        default: "",
        doc: "Trace mode: the trace file's name instead of `CLXFER_DIR/clxfer-<program>-<pid>.json` \
              (`clxfer-<program>-rank<R>-<pid>.json` in a parallel job) (relative to the working \
              directory). `{pid}` in it becomes the process id, `{program}` the program's name, \
              `{rank}` its rank in an MPI or Slurm job (empty outside one) and `{host}` the host's \
              name, for programs that start several processes. Created new, mode 0600; if the \
              name is taken, `<name>.1.<ext>`, ….",
        set: |c, v| {
            c.output = Some(v).filter(|o| !o.is_empty()).map(str::to_string);
            // Another format by its name, whatever CLXFER_FORMAT says.
            let named = Format::of_name(std::path::Path::new(v));
            if named != Format::Json {
                c.format = named;
            }
        },
    },
    OptSpec {
        var: "CLXFER_REPORT",
        kind: Kind::Path,
        default: "",
        doc: "Where the report goes at exit instead of stderr (summary mode), or beside the trace \
              (trace mode): `.json` gives JSON, `.md` Markdown, anything else text. Created new, \
              mode 0600; if the name is taken, `<name>.1.<ext>`, … (each process of a program \
              that forks gets its own). `{pid}`, `{program}`, `{rank}` and `{host}` in it are \
              filled in as in CLXFER_OUTPUT. `-` is stderr; a character device or FIFO (`/dev/stderr`, \
              a named pipe) is written as it is.",
        set: |c, v| {
            c.report = Some(v)
                .filter(|r| !r.is_empty())
                .map(std::path::PathBuf::from)
        },
    },
    OptSpec {
        var: "CLXFER_DEVICE_TIMING",
        kind: Kind::Choice(&["on", "all", "off"]),
        default: "on",
        doc: "`on` times commands on the device, sampled: every transfer of 1 MiB or more, and \
              kernels and smaller commands as long as timing them costs under 1/64 of the run's \
              time at the driver's price (the report extrapolates the rest, and says from how \
              many). clxfer turns on `CL_QUEUE_PROFILING_ENABLE` for every queue, or, where the \
              driver charges every command of a profiling queue (NVIDIA), only around the \
              commands it times. `all` times every command (in summary mode, every transfer and \
              kernel), at the driver's price for an event each. `off` leaves queues as the \
              program made them: host timing only.",
        set: |c, v| {
            c.device_timing = match v {
                "all" => DeviceTiming::All,
                "off" => DeviceTiming::Off,
                _ => DeviceTiming::Sampled,
            }
        },
    },
    OptSpec {
        var: "CLXFER_RACES",
        kind: Kind::Choice(&["on", "off"]),
        default: "on",
        doc: "`on` checks, as each command is enqueued, whether it races with a command of \
              another queue (or of its own out-of-order queue): said on stderr, in the report and \
              in the trace. `off` skips the check and what it keeps (its cost is in \
              docs/PERFORMANCE.md).",
        set: |c, v| c.races = v == "on",
    },
    OptSpec {
        var: "CLXFER_BUFFER_MIB",
        kind: Kind::Mebibytes,
        default: "16",
        doc: "Trace mode: how much memory records may take while they wait for the writer thread \
              (a slow disk, a starved CPU). When it is full, a thread waits for room as long as \
              the writer makes progress (the time it waited is in the report's own cost); only a \
              writer that makes none for `CLXFER_WRITER_WAIT_MS` gets records dropped and \
              counted (in the trace's last event and on stderr). Each thread also holds up to \
              256 records of its own.",
        set: |c, v| c.buffer_bytes = v.parse::<u64>().unwrap_or(16) << 20,
    },
    OptSpec {
        var: "CLXFER_WRITER_WAIT_MS",
        kind: Kind::Millis,
        default: "10000",
        doc: "How long a thread whose records find the writer's memory full \
              (`CLXFER_BUFFER_MIB`) waits while the writer makes no progress at all (a dead \
              disk) before those records are dropped and counted. While the writer makes \
              progress, however slowly, nothing is dropped.",
        set: |c, v| c.writer_wait_ms = v.parse().unwrap_or(10_000),
    },
    OptSpec {
        var: "CLXFER_FORMAT",
        kind: Kind::Choice(&Format::NAMES),
        default: "json",
        doc: "Trace mode: `json` writes Chrome's JSON trace format (`.json`: Perfetto, DevTools \
              and `chrome://tracing` open it), `perfetto` Perfetto's own protobuf (`.pftrace`: \
              about a third the size, for long runs; Perfetto opens it, DevTools does not). A \
              `CLXFER_OUTPUT` ending in `.pftrace` picks `perfetto` too. `clxfer convert` turns \
              one into the other; every clxfer command reads both.",
        set: |c, v| {
            if c.format == Format::Json {
                c.format = Format::named(v).unwrap_or_default();
            }
        },
    },
    OptSpec {
        var: "CLXFER_TRACE_LIMIT_MIB",
        kind: Kind::Count,
        default: "0",
        doc: "Trace mode: the most MiB the trace file may take (0: no limit). Past it, \
              clxfer keeps the first part or the last (`CLXFER_TRACE_LIMIT_KEEP`), says so once \
              on stderr, counts the events it leaves out (`limit_left_out` in the trace's last \
              event) and still closes the file with its last event and the report, whose \
              figures stay whole.",
        set: |c, v| {
            c.trace_limit = match v.parse::<u64>().unwrap_or(0) {
                0 => u64::MAX,
                mib => mib.saturating_mul(1 << 20),
            }
        },
    },
    OptSpec {
        var: "CLXFER_TRACE_LIMIT_KEEP",
        kind: Kind::Choice(&["first", "last"]),
        default: "first",
        doc: "What a trace past `CLXFER_TRACE_LIMIT_MIB` keeps: `first` stops writing events \
              (the file ends between the limit less 256 KiB and the limit, plus its last \
              event); `last` keeps the most recent part: the trace is written in chunks of a \
              quarter of the limit, each standing alone (names, classes and tracks said again), \
              and before the file would pass the limit its oldest chunks are dropped, down to \
              half of it (the file is rewritten and renamed over itself, so it is whole at every \
              moment, and stays under the limit plus its last event; its first event, the run's \
              start, stays).",
        set: |c, v| c.trace_keep_last = v == "last",
    },
    OptSpec {
        var: "CLXFER_OPENCL_LIB",
        kind: Kind::Path,
        default: "libOpenCL.so.1",
        doc: "Under LD_PRELOAD, the OpenCL library to forward to when `dlsym(RTLD_NEXT)` finds none \
              (the program opened OpenCL privately, as Python extensions do).",
        set: |c, v| c.opencl_lib = v.to_string(),
    },
    OptSpec {
        var: "CLXFER_LOG",
        kind: Kind::Choice(&["warn", "info", "debug"]),
        default: "warn",
        doc: "What clxfer says on stderr: `warn` only problems, `info` also how it loaded and \
              what it saw at exit, `debug` also how each function was resolved and every transfer's classification.",
        set: |c, v| {
            c.log = match v {
                "info" => LogLevel::Info,
                "debug" => LogLevel::Debug,
                _ => LogLevel::Warn,
            }
        },
    },
    OptSpec {
        var: "CLXFER_RULES",
        kind: Kind::Choice(crate::model::rules::CHOICES),
        default: "auto",
        doc: "Which vendor's transfer rules classify every device: `auto` picks by vendor and \
              device type; a name forces one set for all devices (how tests on a CPU device \
              exercise the GPU rules). The rules are listed in docs/RULES.md.",
        set: |c, v| c.rules = rules::by_name(v),
    },
    OptSpec {
        var: "CLXFER_DEVICE_MEMORY",
        kind: Kind::Bytes,
        default: "",
        doc: "The device memory the findings judge against, for every device: the card you \
              mean when the rules are forced (`4GiB` for the port's 4 GB card, traced on a CPU \
              device). Unset: the device's own under `auto` rules, else the forced rules' card \
              (docs/RULES.md).",
        set: |c, v| c.device_memory = v.parse().unwrap_or(0),
    },
    OptSpec {
        var: "CLXFER_TEST_PANIC_AT",
        kind: Kind::EntryPoint,
        default: "",
        doc: "Testing only: make clxfer's own code panic inside this entry point, to check that the \
              program is unaffected and clxfer disables itself.",
        set: |c, v| c.test_panic_at = (!v.is_empty()).then(|| v.to_string()),
    },
    OptSpec {
        var: "CLXFER_TEST_WRITER_STALL_MS",
        kind: Kind::Millis,
        default: "0",
        doc: "Testing only: the writer thread stalls this long before its first batch, as on a \
              stalled disk, to check that memory stays bounded and dropped records are counted.",
        set: |c, v| c.test_writer_stall_ms = v.parse().unwrap_or(0),
    },
    OptSpec {
        var: "CLXFER_TEST_CALLBACKS",
        kind: Kind::Choice(&["on", "off"]),
        default: "on",
        doc: "Testing only: `off` arms no completion callback, so timed commands are collected \
              only at the program's waits and at exit: to measure what callbacks cost a driver \
              (docs/PERFORMANCE.md).",
        set: |c, v| c.test_no_callbacks = v == "off",
    },
    OptSpec {
        var: "CLXFER_TEST_PROGRESS_AFTER_MS",
        kind: Kind::Millis,
        default: "1000",
        doc: "Testing only: how long the `clxfer` command's work on traces runs before it shows \
              its progress on a terminal, so that a test sees the bar on a small trace.",
        set: |c, v| c.test_progress_after_ms = v.parse().unwrap_or(1000),
    },
    OptSpec {
        var: "CLXFER_TEST_PAGE_LIMIT_KIB",
        kind: Kind::Count,
        default: "0",
        doc: "Testing only: the most trace, KiB of JSON, that `clxfer view` hands the page (0: \
              its own limit, 384 MiB), so that a test sees a trace too large for it.",
        set: |c, v| c.test_page_limit_kib = v.parse().unwrap_or(0),
    },
    OptSpec {
        var: "CLXFER_TEST_SAMPLE_EVERY",
        kind: Kind::Count,
        default: "0",
        doc: "Testing only: with `CLXFER_DEVICE_TIMING=on`, time one small command in N instead \
              of by the time budget, so that a run under valgrind (many times slower, \
              which the budget would take for a quiet program) is sampled as the same run is \
              natively (`scripts/bench`). 0: by the budget.",
        set: |c, v| c.test_sample_every = v.parse().unwrap_or(0),
    },
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Trace,
    Summary,
    Off,
}

impl Mode {
    const ALL: [Mode; 3] = [Mode::Trace, Mode::Summary, Mode::Off];

    /// The value of `CLXFER_MODE` that selects this mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Trace => "trace",
            Mode::Summary => "summary",
            Mode::Off => "off",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Warn,
    Info,
    Debug,
}

/// Set by `clxfer run`: `VAR=--flag` pairs, space-separated, for the options its flags set.
pub const RUN_FLAGS: &str = "CLXFER_RUN_FLAGS";
/// Set by `clxfer run`: the file where each process appends `trace PATH` or `report PATH`.
pub const RUN_NOTES: &str = "CLXFER_RUN_NOTES";

/// Where an option's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    Environment,
    /// A flag of `clxfer run` (`--summary`, `--rules`, …).
    Flag(String),
}

/// One option's effective value and where it came from.
#[derive(Debug, Clone)]
pub struct Setting {
    pub spec: &'static OptSpec,
    pub value: String,
    pub source: Source,
}

impl Setting {
    /// Whether the value was given (by the environment or a flag), not the default.
    pub fn is_set(&self) -> bool {
        self.source != Source::Default
    }

    /// `default`, `environment` or the flag (`--summary`).
    pub fn from(&self) -> &str {
        match &self.source {
            Source::Default => "default",
            Source::Environment => "environment",
            Source::Flag(f) => f,
        }
    }
}

/// Which commands are timed on the device (`CLXFER_DEVICE_TIMING`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceTiming {
    /// Sampled within the process's budget (`timing::sample`).
    Sampled,
    All,
    Off,
}

impl DeviceTiming {
    pub fn on(self) -> bool {
        self != DeviceTiming::Off
    }
}

/// The parsed configuration, read once per process.
#[derive(Debug, Clone)]
pub struct Config {
    pub settings: Vec<Setting>,
    pub mode: Mode,
    pub opencl_lib: String,
    /// Where trace files go.
    pub dir: std::path::PathBuf,
    /// The trace file's name, with `{pid}` and `{program}` placeholders (`None`: in `dir`).
    pub output: Option<String>,
    /// Where the report goes (`None`: stderr in summary mode, nowhere in trace mode).
    pub report: Option<std::path::PathBuf>,
    pub device_timing: DeviceTiming,
    /// The race check (`CLXFER_RACES`).
    pub races: bool,
    pub log: LogLevel,
    /// `None`: pick per device (`auto`).
    pub rules: Option<&'static RuleSet>,
    /// `CLXFER_DEVICE_MEMORY` in bytes (0: not given).
    pub device_memory: u64,
    pub test_panic_at: Option<String>,
    pub test_writer_stall_ms: u64,
    /// `CLXFER_TEST_CALLBACKS=off`.
    pub test_no_callbacks: bool,
    /// `CLXFER_TEST_SAMPLE_EVERY` (0: by the budget).
    pub test_sample_every: u64,
    /// `CLXFER_TEST_PROGRESS_AFTER_MS`: when the CLI's progress bar may show.
    pub test_progress_after_ms: u64,
    /// `CLXFER_TEST_PAGE_LIMIT_KIB` (0: the viewer's own limit).
    pub test_page_limit_kib: u64,
    /// Memory for records waiting for the writer, bytes.
    pub buffer_bytes: u64,
    /// `CLXFER_WRITER_WAIT_MS`: how long a thread waits for a writer that makes no progress.
    pub writer_wait_ms: u64,
    /// CLXFER_TRACE_LIMIT_MIB in bytes; `u64::MAX`: no limit.
    pub trace_limit: u64,
    /// CLXFER_TRACE_LIMIT_KEEP=last: past the limit, the most recent part is kept.
    pub trace_keep_last: bool,
    /// The trace's format (CLXFER_FORMAT, or CLXFER_OUTPUT's extension).
    pub format: Format,
    /// One line per bad value, to be printed once.
    pub warnings: Vec<String>,
    /// `clxfer run`'s notes file ([`RUN_NOTES`]).
    pub run_notes: Option<std::path::PathBuf>,
}

impl Config {
    /// Reads the process environment; in secure execution, nothing ([`Config::from_lookup_in`]).
    pub fn from_env() -> Config {
        // SAFETY: getauxval has no preconditions.
        let secure = unsafe { libc::getauxval(libc::AT_SECURE) } != 0;
        Config::from_lookup_in(|var| std::env::var(var).ok(), secure)
    }

    /// As [`Config::from_lookup`]; `secure` is the process's secure-execution flag (setuid or
    /// setgid, capabilities): then clxfer reads no `CLXFER_*` variable, so no path an unprivileged
    /// caller chose is ever opened, and it records nothing (mode `off`: calls are forwarded only).
    pub fn from_lookup_in(lookup: impl Fn(&str) -> Option<String>, secure: bool) -> Config {
        if secure {
            let mut c = Config::from_lookup(|_| None);
            c.mode = Mode::Off;
            return c;
        }
        Config::from_lookup(lookup)
    }

    /// Parses from any lookup (tests pass a map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Config {
        let mut warnings = Vec::new();
        let flags = lookup(RUN_FLAGS).unwrap_or_default();
        let source = |var: &str| {
            flags
                .split_whitespace()
                .find_map(|pair| pair.strip_prefix(var)?.strip_prefix('='))
                .map_or(Source::Environment, |flag| Source::Flag(flag.to_string()))
        };
        let settings: Vec<Setting> = OPTIONS
            .iter()
            .map(|spec| match lookup(spec.var) {
                Some(raw) => match validate(spec, &raw) {
                    Ok(value) => Setting {
                        spec,
                        value,
                        source: source(spec.var),
                    },
                    Err(accepted) => {
                        warnings.push(format!(
                            "{}={:?} is not valid; accepted: {}; using {:?}",
                            spec.var, raw, accepted, spec.default
                        ));
                        Setting {
                            spec,
                            value: spec.default.to_string(),
                            source: Source::Default,
                        }
                    }
                },
                None => Setting {
                    spec,
                    value: spec.default.to_string(),
                    source: Source::Default,
                },
            })
            .collect();
        // Blank, then every option sets its own fields from its value or its default.
        let mut c = Config {
            settings: Vec::new(),
            mode: Mode::Trace,
            opencl_lib: String::new(),
            dir: std::path::PathBuf::new(),
            output: None,
            report: None,
            device_timing: DeviceTiming::Sampled,
            races: false,
            log: LogLevel::Warn,
            rules: None,
            device_memory: 0,
            test_panic_at: None,
            test_writer_stall_ms: 0,
            test_no_callbacks: false,
            test_sample_every: 0,
            test_progress_after_ms: 0,
            test_page_limit_kib: 0,
            buffer_bytes: 0,
            writer_wait_ms: 0,
            trace_limit: u64::MAX,
            trace_keep_last: false,
            format: Format::Json,
            warnings,
            run_notes: lookup(RUN_NOTES)
                .filter(|n| !n.is_empty())
                .map(std::path::PathBuf::from),
        };
        for setting in &settings {
            (setting.spec.set)(&mut c, &setting.value);
        }
        c.settings = settings;
        c
    }

    /// The options given (by the environment or a flag) and where each came from, for the
    /// start-up line: `CLXFER_MODE=summary (--summary), CLXFER_RULES=nvidia (environment)`.
    pub fn given(&self) -> String {
        let given: Vec<String> = self
            .settings
            .iter()
            .filter(|s| s.is_set())
            .map(|s| format!("{}={} ({})", s.spec.var, s.value, s.from()))
            .collect();
        if given.is_empty() {
            "all default".into()
        } else {
            format!("{}; the rest default", given.join(", "))
        }
    }
}

static GLOBAL: OnceLock<Config> = OnceLock::new();

/// The process's configuration, read from the environment on first use. Its warnings are said
/// once, by the layer's start-up (`layer::lifecycle`), which reads it first.
pub fn global() -> &'static Config {
    GLOBAL.get_or_init(Config::from_env)
}

/// What `clxfer run` refuses before it starts a program: each `CLXFER_*` variable of `vars` whose
/// value is bad (naming the accepted values) or whose name is no option (with the nearest one),
/// one line each. `vars` are what the program would get: the environment with the flags applied.
pub fn refused<'a>(vars: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut lines = Vec::new();
    for (var, raw) in vars {
        if !var.starts_with("CLXFER_") || var == RUN_FLAGS || var == RUN_NOTES {
            continue;
        }
        match OPTIONS.iter().find(|o| o.var == var) {
            Some(spec) => {
                if let Err(accepted) = validate(spec, raw) {
                    lines.push(format!("{var}={raw:?} is not valid; accepted: {accepted}"));
                }
            }
            None => {
                let nearest = OPTIONS
                    .iter()
                    .map(|o| (strsim::levenshtein(o.var, var), o.var))
                    .min()
                    .filter(|(d, _)| *d <= 3)
                    .map(|(_, v)| format!(" (did you mean {v}?)"))
                    .unwrap_or_default();
                lines.push(format!(
                    "{var} is not a clxfer variable{nearest}; `clxfer doctor` lists them"
                ));
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(pairs: &[(&str, &str)]) -> Config {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|var| map.get(var).cloned())
    }

    #[test]
    fn secure_execution_reads_no_variable_and_records_nothing() {
        let asked = std::cell::Cell::new(0);
        let lookup = |_: &str| {
            asked.set(asked.get() + 1);
            Some("/tmp/attacker".to_string())
        };
        let c = Config::from_lookup_in(lookup, true);
        assert_eq!(asked.get(), 0, "a variable was read");
        assert_eq!(c.mode, Mode::Off);
        assert_eq!(c.dir, std::path::PathBuf::from("."));
        assert!(c.report.is_none() && c.warnings.is_empty());
        let c = Config::from_lookup_in(lookup, false);
        assert!(asked.get() > 0);
        assert_eq!(c.dir, std::path::PathBuf::from("/tmp/attacker"));
    }

    #[test]
    fn defaults_when_unset() {
        let c = parse(&[]);
        assert_eq!(c.mode, Mode::Trace);
        assert_eq!(c.log, LogLevel::Warn);
        assert_eq!(c.opencl_lib, "libOpenCL.so.1");
        assert_eq!(c.test_panic_at, None);
        assert!(c.rules.is_none());
        assert!(c.warnings.is_empty());
        assert!(c.settings.iter().all(|s| !s.is_set()));
        assert_eq!(c.given(), "all default");
    }

    #[test]
    fn valid_values_table() {
        type Check = dyn Fn(&Config) -> bool;
        let cases: &[(&str, &str, &Check)] = &[
            ("CLXFER_MODE", "summary", &|c| c.mode == Mode::Summary),
            ("CLXFER_MODE", "OFF", &|c| c.mode == Mode::Off),
            ("CLXFER_MODE", " trace ", &|c| c.mode == Mode::Trace),
            ("CLXFER_LOG", "debug", &|c| c.log == LogLevel::Debug),
            ("CLXFER_LOG", "info", &|c| c.log == LogLevel::Info),
            ("CLXFER_OPENCL_LIB", "/opt/x/libOpenCL.so", &|c| {
                c.opencl_lib == "/opt/x/libOpenCL.so"
            }),
            ("CLXFER_RULES", "nvidia", &|c| {
                c.rules.is_some_and(|r| r.name == "nvidia")
            }),
            ("CLXFER_RULES", "Intel-DGPU", &|c| {
                c.rules.is_some_and(|r| r.name == "intel-dgpu")
            }),
            ("CLXFER_RULES", "auto", &|c| c.rules.is_none()),
            ("CLXFER_TEST_PANIC_AT", "clFinish", &|c| {
                c.test_panic_at.as_deref() == Some("clFinish")
            }),
        ];
        for (var, value, check) in cases {
            let c = parse(&[(var, value)]);
            assert!(check(&c), "{var}={value}");
            assert!(c.warnings.is_empty(), "{var}={value}: {:?}", c.warnings);
        }
    }

    #[test]
    fn invalid_values_warn_once_and_use_default() {
        let cases = [
            ("CLXFER_MODE", "fast", "trace|summary|off"),
            ("CLXFER_LOG", "verbose", "warn|info|debug"),
            (
                "CLXFER_RULES",
                "radeon",
                "auto|nvidia|amd|intel-igpu|intel-dgpu|intel-cpu|cpu|generic",
            ),
            ("CLXFER_OPENCL_LIB", "  ", "non-empty"),
            ("CLXFER_TEST_PANIC_AT", "rm -rf", "OpenCL function name"),
        ];
        for (var, value, accepted) in cases {
            let c = parse(&[(var, value)]);
            assert_eq!(c.warnings.len(), 1, "{var}");
            assert!(c.warnings[0].starts_with(var), "{}", c.warnings[0]);
            assert!(c.warnings[0].contains(accepted), "{}", c.warnings[0]);
            let d = parse(&[]);
            assert_eq!(
                format!("{:?}{:?}{:?}", c.mode, c.log, c.opencl_lib),
                format!("{:?}{:?}{:?}", d.mode, d.log, d.opencl_lib)
            );
        }
    }

    #[test]
    fn each_setting_says_where_it_came_from() {
        let c = parse(&[
            ("CLXFER_MODE", "summary"),
            ("CLXFER_RULES", "nvidia"),
            ("CLXFER_LOG", "loud"),
            (RUN_FLAGS, "CLXFER_MODE=--summary CLXFER_LOG=--log"),
            (RUN_NOTES, "/tmp/notes"),
        ]);
        let from = |var: &str| {
            let s = c.settings.iter().find(|s| s.spec.var == var).unwrap();
            (s.value.clone(), s.from().to_string())
        };
        assert_eq!(from("CLXFER_MODE"), ("summary".into(), "--summary".into()));
        assert_eq!(
            from("CLXFER_RULES"),
            ("nvidia".into(), "environment".into())
        );
        // A bad value is the default, from nowhere else, whatever the flag said.
        assert_eq!(from("CLXFER_LOG"), ("warn".into(), "default".into()));
        assert_eq!(from("CLXFER_DIR"), (".".into(), "default".into()));
        assert_eq!(
            c.given(),
            "CLXFER_MODE=summary (--summary), CLXFER_RULES=nvidia (environment); the rest default"
        );
        assert_eq!(c.run_notes, Some("/tmp/notes".into()));
        assert_eq!(
            parse(&[("CLXFER_OUTPUT", "t-{pid}.json")])
                .output
                .as_deref(),
            Some("t-{pid}.json")
        );
    }

    #[test]
    fn table_lists_every_option() {
        let t = markdown_table();
        for spec in OPTIONS {
            assert!(t.contains(&format!("`{}`", spec.var)));
        }
        assert_eq!(t.lines().count(), OPTIONS.len() + 2);
    }
}
