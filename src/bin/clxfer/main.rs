//! The clxfer command line. Every failure is exit code 2 with `clxfer:` lines on stderr: one for
//! a file that cannot be read or a program that cannot run, clap's whole message for a usage error.

mod check;
mod diff;
mod doctor;
mod elf;
mod progress;
mod report;
mod run;
mod view;

/// Reading a trace allocates for every event, on one thread, and frees on another
/// (`trace::read`'s pipeline): mimalloc makes that cheap where glibc's arenas made the pipeline
/// slower than one thread. The layer keeps the program's allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{CommandFactory, Parser, Subcommand};
use clxfer::config;
use clxfer::report::Output;
use clxfer::report::csv::Table;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "clxfer",
    version,
    about = "See how an OpenCL program's bytes move, and why.",
    after_help = "Example:\n  clxfer run --summary -- ./myprog input.dat\n  clxfer run -- ./myprog \
                  && clxfer report clxfer-myprog-*.json"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program with clxfer loaded: a trace per process, or with --summary a report at exit.
    ///
    /// The program's exit code is passed through; the CLXFER_* variables of the environment
    /// reach it, and a flag overrides its variable.
    #[command(
        after_help = "Examples:\n  clxfer run -- ./myprog input.dat\n  clxfer run --report - -o \
                      run.json -- ./myprog   # a trace, and the summary on stderr\n  clxfer run \
                      --summary --rules nvidia -- python3 app.py\n  clxfer run --preload --out \
                      /tmp/t -- ./myprog"
    )]
    Run(run::Args),
    /// The report of saved traces (or directories of them): where the time went, what to change.
    #[command(
        after_help = "Examples:\n  clxfer report clxfer-myprog-4242.json --format md\n  clxfer \
                      report --format csv --table commands clxfer-myprog-4242.json > commands.csv"
    )]
    Report {
        /// Trace files (clxfer-<program>-<pid>.json), or directories of them.
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// text, json, md, or csv (one table: --table).
        #[arg(long, default_value = "text", value_parser = output_parser())]
        format: Output,
        /// With --format csv: commands (a row per command, host and device halves joined), or
        /// the report's transfers, operations, kernels or findings.
        #[arg(long, default_value = "commands", value_parser = table_parser())]
        table: Table,
        /// Project the transfers of devices these rules describe onto the rules' cost model,
        /// beside the measured figures (devices traced under forced rules are projected
        /// anyway, in place of their own times).
        #[arg(long, value_name = "RULES", value_parser = clap::builder::PossibleValuesParser::new(&clxfer::model::rules::CHOICES[1..]))]
        project: Option<String>,
    },
    /// Check traces against every rule Perfetto's JSON importer imposes, and with --require a
    /// run against rules of yours (a guard for CI).
    ///
    /// Exit 1 on a violation or a broken rule (one line each), 2 if a file is not a trace or a
    /// report, or a rule does not parse.
    #[command(
        after_help = "Examples:\n  clxfer check clxfer-myprog-4242.json\n  clxfer check \
                      --require 'no race' --require 'staged_bytes<=1%' run.report.json\n  \
                      clxfer check --baseline main.report.json --require 'transfer_time<=+5%' \
                      pr.report.json\n\nRules: no race | no misuse | finding:KIND OP N | \
                      findings OP N | PATH_bytes OP VALUE | DIR.PATH.FIELD OP VALUE (FIELD: \
                      calls, bytes, time, median_gbps, p90_gbps) | transfer_time OP VALUE | \
                      wall_time OP VALUE; OP: <= < >= > =; VALUE: 64MiB, 5ms, 40, 1% (a share), \
                      or with --baseline +5% or +0 (a change)"
    )]
    Check {
        /// Trace files (clxfer-<program>-<pid>.json), JSON reports, or directories of them.
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// A rule the run must keep (repeatable; several in one, separated by commas).
        #[arg(long = "require", value_name = "RULE")]
        require: Vec<String>,
        /// The run a rule's change (+5%, +0) is measured from: a trace, a JSON report, or a
        /// directory.
        #[arg(long, value_name = "FILE")]
        baseline: Option<PathBuf>,
    },
    /// Compare two runs: what moved between paths, which findings went away or came, what got
    /// faster or slower beyond the runs' noise.
    ///
    /// Each side is a trace (JSON or protobuf), a JSON report (CLXFER_REPORT=run.json, or
    /// `clxfer report --format json`), or a directory of them. Processes are paired by program
    /// name, in order of start; one left on each side are paired as different programs.
    #[command(
        after_help = "Examples:\n  clxfer diff before/ after/\n  clxfer diff --format md \
                      main.report.json pr.report.json > comment.md\n  clxfer diff --pair \
                      app=app2 clxfer-app-1.json clxfer-app2-2.json"
    )]
    Diff {
        /// The run before the change.
        before: PathBuf,
        /// The run after it.
        after: PathBuf,
        /// text, json, md, or csv.
        #[arg(long, default_value = "text", value_parser = output_parser())]
        format: Output,
        /// Pair the processes of program BEFORE with those of program AFTER (repeatable).
        #[arg(long = "pair", value_name = "BEFORE=AFTER", value_parser = diff::parse_pair)]
        pairs: Vec<(String, String)>,
    },
    /// Merge several processes' traces into one timeline, aligned by their wall-clock start.
    #[command(
        after_help = "Example:\n  clxfer merge clxfer-server-*.json clxfer-client-*.json -o \
                            all.json"
    )]
    Merge {
        /// Trace files.
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// The merged trace (created new; an existing file is never overwritten).
        #[arg(short = 'o', long = "output", alias = "out", value_name = "FILE")]
        out: PathBuf,
    },
    /// Export traces' tables for DuckDB, Spark, Dask or pandas: a directory per table
    /// (commands, transfers, operations, kernels, host_calls, findings), a file per trace, each
    /// row with the process's rank, host and pid.
    #[command(after_help = "Examples:\n  clxfer export traces/ -o tables/\n  \
                      duckdb -c \"SELECT rank, sum(bytes) FROM 'tables/transfers/*.parquet' \
                      WHERE path = 'staged' GROUP BY rank ORDER BY 2 DESC\"\n  \
                      clxfer export --format csv clxfer-myprog-4242.json -o tables/")]
    Export {
        /// Traces, or directories of them.
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// The directory to write (made; one that holds files already is refused).
        #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
        out: PathBuf,
        /// parquet or csv.
        #[arg(long, default_value = "parquet", value_parser = export_parser())]
        format: clxfer::report::export::Export,
    },
    /// Convert a trace between JSON and Perfetto's protobuf, as the output's extension says
    /// (`.pftrace` or `.perfetto-trace`: protobuf; else JSON).
    #[command(
        after_help = "Examples:\n  clxfer convert clxfer-myprog-4242.json myprog.pftrace\n  \
                      clxfer convert myprog.pftrace myprog.json"
    )]
    Convert {
        /// A trace in either format.
        input: PathBuf,
        /// The converted trace (created new; an existing file is never overwritten).
        output: PathBuf,
    },
    /// Serve the viewer for a trace on 127.0.0.1 and print its URL.
    ///
    /// The page shows bandwidth against size for every transfer, the findings, and bytes and
    /// time by path.
    #[command(
        after_help = "Example:\n  clxfer view clxfer-myprog-4242.json   # then open the URL it prints"
    )]
    View {
        /// A trace file.
        trace: PathBuf,
        /// The port (0: a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Print the effective options, the OpenCL loader in use, and each platform and device.
    #[command(after_help = "Example:\n  clxfer doctor")]
    Doctor {
        /// Internal: run in a child with OPENCL_LAYERS set, print whether the loader loaded it.
        #[arg(long, hide = true)]
        probe_layer: Option<std::path::PathBuf>,
        /// Print the options table as Markdown (the README's table) and exit.
        #[arg(long)]
        options_markdown: bool,
        /// Print the vendor transfer rules as Markdown (docs/RULES.md) and exit.
        #[arg(long)]
        rules_markdown: bool,
        /// Print the trace's args keys as Markdown (docs/TRACE.md) and exit.
        #[arg(long)]
        trace_markdown: bool,
        /// Also list the testing-only options (CLXFER_TEST_*), set or not.
        #[arg(long)]
        testing: bool,
    },
}

/// clap's whole message (what is wrong, the accepted values, the usage line), each line under the
/// `clxfer:` prefix, without clap's "error: ", then `hint` if any; exit code 2.
fn usage_error(text: &str, hint: Option<&str>) -> ExitCode {
    let text = text.strip_prefix("error: ").unwrap_or(text);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        eprintln!("clxfer: {line}");
    }
    if let Some(hint) = hint {
        eprintln!("clxfer: {hint}");
    }
    ExitCode::from(2)
}

/// One line on stderr, exit code 2.
pub fn fail(message: impl std::fmt::Display) -> ExitCode {
    progress::suspend(|| eprintln!("clxfer: {message}"));
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e)
            if e.kind() == clap::error::ErrorKind::MissingSubcommand
                || e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            // Bare `clxfer`: the help, as a usage error.
            let _ = Cli::command().print_help();
            return ExitCode::from(2);
        }
        Err(e) => {
            // `clxfer run ./prog` (no `--`): clap sees an unknown argument.
            let args: Vec<String> = std::env::args().skip(1).collect();
            let hint = (e.kind() == clap::error::ErrorKind::UnknownArgument
                && args.first().is_some_and(|a| a == "run")
                && !args.iter().any(|a| a == "--"))
                .then_some("tip: put -- before the program and its arguments: clxfer run [OPTIONS] -- PROGRAM ARGS...");
            return usage_error(&e.to_string(), hint);
        }
    };
    if matches!(
        cli.command,
        Command::Report { .. } | Command::Diff { .. } | Command::Doctor { .. }
    ) {
        // Their output piped into `head` stops them quietly, as it does any Unix tool (Rust
        // ignores SIGPIPE, which would make each write an error message instead).
        // SAFETY: restoring a signal's default action, before any thread is started.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Report {
            traces,
            format,
            table,
            project,
        } => progress::watch("reading", progress::total(&traces, 1), || {
            report::report(&traces, format, table, project.as_deref())
        }),
        Command::Check {
            traces,
            require,
            baseline,
        } => {
            // Each trace is read for Perfetto's rules, and again for a report with --require.
            let passes = if require.is_empty() { 1 } else { 2 };
            progress::watch("checking", progress::total(&traces, passes), || {
                check::check(&traces, &require, baseline.as_deref())
            })
        }
        Command::Diff {
            before,
            after,
            format,
            pairs,
        } => {
            let total = progress::total(&[before.clone(), after.clone()], 1);
            progress::watch("reading", total, || {
                diff::diff(&before, &after, format, &pairs)
            })
        }
        // A merge reads each trace twice: for the processes' starts, then to write them.
        Command::Merge { traces, out } => {
            progress::watch("merging", progress::total(&traces, 2), || {
                report::merge(&traces, &out)
            })
        }
        // Each trace is read twice: for its report, then for its commands.
        Command::Export {
            traces,
            out,
            format,
        } => progress::watch("exporting", progress::total(&traces, 2), || {
            report::export(&traces, &out, format)
        }),
        Command::Convert { input, output } => {
            let total = progress::total(std::slice::from_ref(&input), 1);
            progress::watch("converting", total, || report::convert(&input, &output))
        }
        Command::View { trace, port } => view::view(&trace, port),
        Command::Doctor {
            probe_layer: Some(layer),
            ..
        } => doctor::probe_layer(&layer),
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
            print!("{}", clxfer::report::trace_doc());
            ExitCode::SUCCESS
        }
        Command::Doctor { testing, .. } => doctor::doctor(testing),
    }
}

/// The clxfer traces (`clxfer-*.json`) in `dir`.
pub fn traces_in(dir: &std::path::Path) -> std::io::Result<Vec<PathBuf>> {
    clxfer::trace::read::traces_in(dir)
}

/// libclxfer.so beside the binary (cargo's target dir) or in ../lib (an install prefix).
pub fn layer_library() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    // Beside the binary (a build), PREFIX/lib (scripts/install), or /usr/lib/clxfer (the .deb).
    [
        dir.join("libclxfer.so"),
        dir.join("../lib/libclxfer.so"),
        dir.join("../lib/clxfer/libclxfer.so"),
    ]
    .into_iter()
    .find(|p| p.exists())
    .and_then(|p| p.canonicalize().ok())
}

/// `--table`: one of [`Table::WORDS`], as the typed value.
fn table_parser() -> impl clap::builder::TypedValueParser<Value = Table> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Table::WORDS)
        .map(|w| Table::parse(&w).expect("clap accepts only the listed words"))
}

/// `--format`: one of [`Output::WORDS`], as the typed value.
fn output_parser() -> impl clap::builder::TypedValueParser<Value = Output> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Output::WORDS)
        .map(|w| Output::parse(&w).expect("clap accepts only the listed words"))
}

/// `clxfer export --format`: parquet or csv, as the typed value.
fn export_parser() -> impl clap::builder::TypedValueParser<Value = clxfer::report::export::Export> {
    use clap::builder::TypedValueParser as _;
    use clxfer::report::export::Export;
    clap::builder::PossibleValuesParser::new(["parquet", "csv"]).map(|w| match w.as_str() {
        "csv" => Export::Csv,
        _ => Export::Parquet,
    })
}
