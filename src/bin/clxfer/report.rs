//! `clxfer report` and `clxfer merge`: reading saved traces.

use crate::{fail, traces_in};
use clxfer::model::rules::{self, RuleSet};
use clxfer::report::export::Export;
use clxfer::report::{DeviceReport, Format, Output, Report, csv, from_trace, job};
use clxfer::trace::{many, merge};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The traces named, a directory standing for every `clxfer-*.json` and `clxfer-*.pftrace` in
/// it and its subdirectories (`clxfer::trace::read::traces_in`; sorted).
fn expand(traces: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for t in traces {
        if !t.is_dir() {
            files.push(t.clone());
            continue;
        }
        let mut inside =
            traces_in(t).map_err(|e| format!("cannot read the directory {}: {e}", t.display()))?;
        if inside.is_empty() {
            return Err(format!(
                "{} is a directory with no clxfer-*.json or clxfer-*.pftrace trace",
                t.display()
            ));
        }
        inside.sort();
        files.extend(inside);
    }
    Ok(files)
}

pub fn report(
    traces: &[PathBuf],
    format: Output,
    table: csv::Table,
    project: Option<&str>,
) -> ExitCode {
    let project = project.and_then(rules::by_name);
    let traces = match expand(traces) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let format = match format {
        Output::Report(f) => f,
        Output::Csv => return report_csv(&traces, table, project),
    };
    // On every core, a trace a worker (a job's ranks' traces), then in the traces' order.
    let mut reports = Vec::new();
    for read in many::each(&traces, |path| reports_of(path, project)) {
        match read {
            Ok((r, warnings)) => {
                warnings.iter().for_each(|w| eprintln!("clxfer: {w}"));
                reports.extend(r)
            }
            Err(e) => return fail(e),
        }
    }
    let mut rendered: Vec<String> = reports.iter().map(|r| r.render(format)).collect();
    // The ranks of a parallel job: their table first (JSON has each report's rank and host).
    if format != Format::Json
        && let Some(table) = job::render(&reports, format)
    {
        rendered.insert(0, table);
    }
    // Several processes (traces, or a merge) as JSON: one document, an array of their reports.
    let out = match format {
        Format::Json if rendered.len() > 1 => format!(
            "[\n{}\n]\n",
            rendered
                .iter()
                .map(|r| r.trim_end())
                .collect::<Vec<_>>()
                .join(",\n")
        ),
        _ => rendered.join("\n"),
    };
    crate::progress::suspend(|| std::io::stdout().write_all(out.as_bytes())).ok();
    ExitCode::SUCCESS
}

/// The reports of each process in the trace at `path`, with a warning for each cut short, and
/// for each device `project` cannot project.
fn reports_of(
    path: &Path,
    project: Option<&'static RuleSet>,
) -> Result<(Vec<Report>, Vec<String>), String> {
    let processes = from_trace::report_file(path, project).map_err(|e| e.to_string())?;
    let mut warnings = Vec::new();
    let reports = processes
        .into_iter()
        .map(|p| {
            if let Some(warning) = &p.warning {
                warnings.push(format!("warning: {warning}"));
            }
            if let Some(set) = project {
                for d in p.report.devices.iter().filter(|d| d.projection.is_none()) {
                    warnings.push(unprojected(path, d, set));
                }
            }
            p.report
        })
        .collect();
    Ok((reports, warnings))
}

/// Why device `d` was not projected onto `set`.
fn unprojected(path: &Path, d: &DeviceReport, set: &RuleSet) -> String {
    let head = format!(
        "--project {}: device #{} of {} is not projected",
        set.name,
        d.index,
        path.display()
    );
    if set.cost.is_none() {
        return format!("{head}: the {} rules have no cost model", set.name);
    }
    format!(
        "{head}: the {} rules classified its transfers, and the {} rules would take other paths; \
         trace it under them to project it (clxfer run --rules {})",
        d.rules, set.name, set.name
    )
}

/// One CSV table of every trace, one header line.
fn report_csv(
    traces: &[PathBuf],
    table: csv::Table,
    project: Option<&'static RuleSet>,
) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for (i, path) in traces.iter().enumerate() {
        // The commands table is the trace's own rows: no report to build.
        let reports = match table {
            csv::Table::Commands => Ok(Vec::new()),
            _ => reports_of(path, project).map(|(reports, warnings)| {
                warnings.iter().for_each(|w| eprintln!("clxfer: {w}"));
                reports
            }),
        };
        let written =
            reports.and_then(|reports| csv::write(table, path, &reports, i == 0, &mut out));
        if let Err(e) = written {
            return fail(e);
        }
    }
    match out.flush() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(format!("writing the CSV failed: {e}")),
    }
}

/// `clxfer export`: every table of each trace under `out`, the traces on every core.
pub fn export(traces: &[PathBuf], out: &Path, format: Export) -> ExitCode {
    let traces = match expand(traces) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let taken = std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_some());
    if taken {
        return fail(format!(
            "{} holds files already: export into a new or empty directory",
            out.display()
        ));
    }
    if let Err(e) = std::fs::create_dir_all(out) {
        return fail(format!("cannot make {}: {e}", out.display()));
    }
    // Each trace's files are named for it (its name without the extension).
    let stems: Vec<String> = traces
        .iter()
        .map(|t| {
            t.file_stem()
                .map_or("trace".into(), |s| s.to_string_lossy().into_owned())
        })
        .collect();
    if let Some(twice) = (1..stems.len()).find(|&i| stems[..i].contains(&stems[i])) {
        return fail(format!(
            "two traces named {} (from {}): give them apart",
            stems[twice],
            traces[twice].display()
        ));
    }
    let jobs: Vec<(&PathBuf, &String)> = traces.iter().zip(&stems).collect();
    let done = many::each(&jobs, |&(path, stem)| {
        let (reports, warnings) = reports_of(path, None)?;
        let rows = clxfer::report::export::export(format, path, &reports, out, stem)?;
        Ok::<_, String>((rows, warnings))
    });
    let mut rows = vec![0usize; clxfer::report::export::TABLES.len()];
    for d in done {
        match d {
            Ok((written, warnings)) => {
                warnings.iter().for_each(|w| eprintln!("clxfer: {w}"));
                for (i, (_, n)) in written.into_iter().enumerate() {
                    rows[i] += n;
                }
            }
            Err(e) => return fail(e),
        }
    }
    let said: Vec<String> = (csv::Table::WORDS.iter().zip(&rows))
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    eprintln!(
        "clxfer: exported {} trace{} to {} ({}): {} rows",
        traces.len(),
        if traces.len() == 1 { "" } else { "s" },
        out.display(),
        format.extension(),
        said.join(", ")
    );
    ExitCode::SUCCESS
}

pub fn merge(traces: &[PathBuf], out: &Path) -> ExitCode {
    let merged = write_new(traces, out, |w| merge::merge_files(traces, w));
    match merged {
        Ok(n) => {
            let (t, e) = (traces.len(), n);
            eprintln!(
                "clxfer: merged {t} trace{} ({e} event{}) into {}",
                if t == 1 { "" } else { "s" },
                if e == 1 { "" } else { "s" },
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

pub fn convert(input: &Path, out: &Path) -> ExitCode {
    let inputs = [input.to_path_buf()];
    let mut ended = true;
    let converted = write_new(&inputs, out, |w| {
        let c = clxfer::trace::convert::convert_file(input, out, w)?;
        ended = c.ended;
        Ok(c.events)
    });
    match converted {
        Ok(n) => {
            let cut = if ended {
                ""
            } else {
                "; CUT SHORT: it has no end event, so neither has the copy, and a report of \
                 either says so"
            };
            eprintln!(
                "clxfer: converted {} ({n} events{cut}) into {}",
                input.display(),
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// Writes `out`, created new, with `write` (which returns its event count), once every input
/// opens: an input that cannot be opened is named before anything is written, and a failed write
/// leaves no half-written file behind.
fn write_new(
    inputs: &[PathBuf],
    out: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> Result<usize, String>,
) -> Result<usize, ExitCode> {
    for t in inputs {
        if let Err(e) = std::fs::File::open(t) {
            return Err(fail(format!("cannot read {}: {e}", t.display())));
        }
    }
    let file = clxfer::sink::trace_file::open_new(out).map_err(|e| {
        fail(format!(
            "cannot write {}: {e} (an existing file is never overwritten)",
            out.display()
        ))
    })?;
    let mut w = std::io::BufWriter::new(file);
    let written = write(&mut w).and_then(|n| {
        w.flush().map_err(|e| e.to_string())?;
        Ok(n)
    });
    written.map_err(|e| {
        let _ = std::fs::remove_file(out);
        fail(e)
    })
}
