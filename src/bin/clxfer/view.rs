//! `clxfer view`: the viewer page (viewer/, built into this binary) served on 127.0.0.1 with the
//! trace and its report, computed here (so a trace cut short gets one too). A trace the page can
//! read whole is served whole; a larger one is indexed here (`view/indexed.rs`) and the page asks
//! for each view. The HTTP side, the page's files and the run's token are `view/http.rs`.

mod http;
mod indexed;

use crate::fail;
use clxfer::report::from_trace;
use clxfer::trace::format::Format;
use hyper::StatusCode;
use hyper::body::Bytes;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

/// The most trace, bytes of JSON, handed to the page whole: Chromium's strings hold at most 512
/// MiB, and the page parses the trace whole. Past it the trace is indexed (`view/indexed.rs`).
const PAGE_LIMIT: u64 = 384 << 20;

pub fn view(trace: &Path, port: u16) -> ExitCode {
    let name = trace
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // A trace the page can hold (its JSON is one string in the browser, parsed whole) is served
    // whole; a larger one is indexed here, and the page asks for what each view shows.
    let format = Format::of_name(trace);
    let size = match std::fs::metadata(trace) {
        Ok(m) => m.len(),
        Err(e) => return fail(format!("cannot read {}: {e}", trace.display())),
    };
    // Protobuf is about a third of its JSON (docs/PERFORMANCE.md).
    let as_json = if format == Format::Json {
        size
    } else {
        size.saturating_mul(3)
    };
    let limit = match clxfer::config::global().test_page_limit_kib {
        0 => PAGE_LIMIT,
        kib => kib << 10,
    };
    let answer: http::Answer = if as_json > limit {
        let note = format!(
            "{name} ({}{}) is more than this page reads whole (a browser holds a trace as one \
             string, of at most {} here): `clxfer view` has indexed it, and the page asks it for \
             what each view shows. The bandwidth scatter is drawn for traces the page reads \
             whole; the report's tables below have the same figures.",
            clxfer::units::bytes(size),
            if as_json == size {
                ""
            } else {
                ", about three times that as JSON"
            },
            clxfer::units::bytes(limit)
        );
        let served = serde_json::json!({"mode": "indexed", "report": "report.json",
                                        "name": name, "note": note});
        let live = indexed::Live::new(trace.to_path_buf(), size);
        live.start();
        let served = Bytes::from(served.to_string());
        Arc::new(move |path: &str, query: &str| match path {
            "/served.json" => Some((StatusCode::OK, served.clone())),
            _ => live.answer(path, query),
        })
    } else {
        match whole(trace, format, &name) {
            Ok(files) => Arc::new(move |path: &str, _: &str| {
                (files.iter())
                    .find(|(p, _)| *p == path)
                    .map(|(_, b)| (StatusCode::OK, b.clone()))
            }),
            Err(e) => return e,
        }
    };
    let listener = match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => return fail(format!("cannot listen on 127.0.0.1:{port}: {e}")),
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => return fail(format!("the server has no address: {e}")),
    };
    // Login nodes are shared: only requests that carry this run's token in their path are
    // answered (as Jupyter does), so another user of the host cannot read the trace.
    let token = match http::token() {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot make the server's token: {e}")),
    };
    crate::progress::suspend(|| {
        eprintln!(
            "clxfer: viewing {} at http://{addr}/{token}/ (Ctrl-C to stop; only this URL is \
             answered)",
            trace.display()
        )
    });
    match http::serve(listener, answer, format!("/{token}")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(format!("the server stopped: {e}")),
    }
}

/// What is served of a trace the page reads whole: (URL path, JSON bytes).
type Served = [(&'static str, Bytes); 3];

/// A trace served whole, with its report (computed first): as written (the page reads a trace cut
/// short as Perfetto does), a protobuf trace as the JSON it stands for.
fn whole(trace: &Path, format: Format, name: &str) -> Result<Served, ExitCode> {
    // The page shows one process's report: of a merge, the first's.
    let total = crate::progress::total(&[trace.to_path_buf()], 1);
    let read = crate::progress::watch("reading", total, || from_trace::report_file(trace, None));
    let report = match read {
        Ok(ps) => {
            if ps.len() > 1 {
                eprintln!(
                    "clxfer: {} holds {} processes; the page shows the report of the first (pid \
                     {}): clxfer report gives each",
                    trace.display(),
                    ps.len(),
                    ps[0].report.pid
                );
            }
            serde_json::to_vec(&ps[0].report).unwrap_or_default()
        }
        Err(e) => return Err(fail(e)),
    };
    let body = if format != Format::Json {
        let mut json = Vec::new();
        let as_json = std::path::Path::new("trace.json");
        match clxfer::trace::convert::convert_file(trace, as_json, &mut json) {
            Ok(_) => json,
            Err(e) => return Err(fail(format!("cannot read {}: {e}", trace.display()))),
        }
    } else {
        match std::fs::read(trace) {
            Ok(b) => b,
            Err(e) => return Err(fail(format!("cannot read {}: {e}", trace.display()))),
        }
    };
    let served = serde_json::json!({"mode": "whole", "trace": "trace.json", "report": "report.json", "name": name});
    Ok([
        ("/trace.json", Bytes::from(body)),
        ("/report.json", Bytes::from(report)),
        ("/served.json", Bytes::from(served.to_string())),
    ])
}
