//! `clxfer view`: the viewer page (viewer/, built into this binary) served on 127.0.0.1 with the
//! trace and its report, computed here (so a trace cut short gets one too).

use crate::fail;
use clxfer::report::from_trace;
use std::path::Path;
use std::process::ExitCode;
use tiny_http::{Header, Response, Server};

/// One of the page's files: (URL path, content type, bytes).
macro_rules! page_file {
    ($path:literal, $kind:literal) => {
        (
            concat!("/", $path),
            $kind,
            include_bytes!(concat!("../../../viewer/", $path)) as &[u8],
        )
    };
}

/// The page's files (and `/`, the page itself).
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "/",
        "text/html",
        include_bytes!("../../../viewer/index.html"),
    ),
    page_file!("index.html", "text/html"),
    page_file!("style.css", "text/css"),
    page_file!("model.js", "text/javascript"),
    page_file!("timeline.js", "text/javascript"),
    page_file!("header.js", "text/javascript"),
    page_file!("charts.js", "text/javascript"),
    page_file!("viewer.js", "text/javascript"),
    page_file!("vendor/chart.js/chart.umd.min.js", "text/javascript"),
];

pub fn view(trace: &Path, port: u16) -> ExitCode {
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
        Err(e) => return fail(e),
    };
    // Served as written (the page reads a trace cut short as Perfetto does); a protobuf trace
    // as the JSON it stands for, which the page reads.
    let body = if clxfer::trace::convert::is_protobuf_name(trace) {
        let mut json = Vec::new();
        let as_json = std::path::Path::new("trace.json");
        match clxfer::trace::convert::convert_file(trace, as_json, &mut json) {
            Ok(_) => json,
            Err(e) => return fail(format!("cannot read {}: {e}", trace.display())),
        }
    } else {
        match std::fs::read(trace) {
            Ok(b) => b,
            Err(e) => return fail(format!("cannot read {}: {e}", trace.display())),
        }
    };
    let name = trace
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let server = match Server::http(("127.0.0.1", port)) {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot listen on 127.0.0.1:{port}: {e}")),
    };
    let Some(addr) = server.server_addr().to_ip() else {
        return fail("the server has no IP address");
    };
    // What the page loads when opened at the bare URL.
    let served = serde_json::json!({"trace": "trace.json", "report": "report.json", "name": name})
        .to_string()
        .into_bytes();
    eprintln!(
        "clxfer: viewing {} at http://{addr}/ (Ctrl-C to stop)",
        trace.display()
    );
    // A few threads answer: a response that waits on a slow reader (a 100 MB trace) holds no
    // other request back.
    let files = [
        ("/trace.json", body),
        ("/report.json", report),
        ("/served.json", served),
    ];
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                while let Ok(request) = server.recv() {
                    respond(request, &files);
                }
            });
        }
    });
    ExitCode::SUCCESS
}

/// Answers one request: the trace, its report, what is served, or one of the page's files.
fn respond(request: tiny_http::Request, served: &[(&str, Vec<u8>)]) {
    let path = request.url().split('?').next().unwrap_or("/").to_string();
    let found = (served.iter())
        .find(|(p, _)| *p == path)
        .map(|(_, b)| ("application/json", b.as_slice()))
        .or_else(|| {
            let (_, kind, bytes) = FILES.iter().find(|(f, ..)| *f == path)?;
            Some((*kind, *bytes))
        });
    let Some((kind, bytes)) = found else {
        let _ = request.respond(Response::from_string("not found").with_status_code(404));
        return;
    };
    let header = Header::from_bytes("Content-Type", format!("{kind}; charset=utf-8"))
        .expect("a valid header");
    // Nothing is cached: Chromium writing a 100 MB trace into its disk cache held the next
    // page's requests back (headless, now and then for minutes), and the file may change.
    let no_store = Header::from_bytes("Cache-Control", "no-store").expect("a valid header");
    let response = Response::from_data(bytes.to_vec())
        .with_header(header)
        .with_header(no_store);
    let _ = request.respond(response);
}
