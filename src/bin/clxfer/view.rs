//! `clxfer view`: the viewer page (viewer/, built into this binary) served on 127.0.0.1 with the
//! trace and its report, computed here (so a trace cut short gets one too).

use crate::fail;
use clxfer::report::from_trace;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

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

/// The most trace, bytes of JSON, handed to the page: Chromium's strings hold at most 512 MiB,
/// and the page parses the trace whole.
const PAGE_LIMIT: u64 = 384 << 20;

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
    // as the JSON it stands for, which the page reads. A trace larger than the page can hold
    // (its JSON is one string in the browser) is not served: the page shows its report, and why.
    let format = clxfer::trace::format::Format::of_name(trace);
    let size = std::fs::metadata(trace).map_or(0, |m| m.len());
    // Protobuf is about a third of its JSON (docs/PERFORMANCE.md).
    let as_json = if format == clxfer::trace::format::Format::Json {
        size
    } else {
        size.saturating_mul(3)
    };
    let limit = match clxfer::config::global().test_page_limit_kib {
        0 => PAGE_LIMIT,
        kib => kib << 10,
    };
    let note = (as_json > limit).then(|| {
        format!(
            "{} ({}{}) is more than this page can read: the browser holds a trace as one \
             string, of at most {} here. Its report is below. For its timeline, open it in \
             Perfetto (ui.perfetto.dev reads large traces), or trace part of the run \
             (CLXFER_TRACE_LIMIT_MIB, with CLXFER_TRACE_LIMIT_KEEP=last for its end).",
            trace
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
            clxfer::units::bytes(size),
            if as_json == size {
                ""
            } else {
                ", about three times that as JSON"
            },
            clxfer::units::bytes(limit)
        )
    });
    if let Some(n) = &note {
        eprintln!("clxfer: {n}");
    }
    let body = if note.is_some() {
        Vec::new()
    } else if format != clxfer::trace::format::Format::Json {
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
    let listener = match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(l) => l,
        Err(e) => return fail(format!("cannot listen on 127.0.0.1:{port}: {e}")),
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => return fail(format!("the server has no address: {e}")),
    };
    // What the page loads when opened at the bare URL.
    let served = match &note {
        None => serde_json::json!({"trace": "trace.json", "report": "report.json", "name": name}),
        Some(note) => serde_json::json!({"report": "report.json", "name": name, "note": note}),
    }
    .to_string()
    .into_bytes();
    let files: Served = Arc::new([
        ("/trace.json", Bytes::from(body)),
        ("/report.json", Bytes::from(report)),
        ("/served.json", Bytes::from(served)),
    ]);
    // Login nodes are shared: only requests that carry this run's token in their path are
    // answered (as Jupyter does), so another user of the host cannot read the trace.
    let token = match token() {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot make the server's token: {e}")),
    };
    eprintln!(
        "clxfer: viewing {} at http://{addr}/{token}/ (Ctrl-C to stop; only this URL is \
         answered)",
        trace.display()
    );
    match serve(listener, files, format!("/{token}")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(format!("the server stopped: {e}")),
    }
}

/// What is served besides the page's own files: (URL path, JSON bytes).
type Served = Arc<[(&'static str, Bytes); 3]>;

/// Answers every connection until the process is stopped. Each connection is a task of its own,
/// so a browser's idle keep-alive connections or a slow reader of a 100 MB trace hold no other
/// request back; the bodies are shared, not copied per request.
fn serve(listener: std::net::TcpListener, files: Served, prefix: String) -> std::io::Result<()> {
    let prefix: Arc<str> = prefix.into();
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        loop {
            // A refused or reset connection is the browser's business, not the server's end.
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (files, prefix) = (files.clone(), prefix.clone());
            let answer = service_fn(move |request: Request<Incoming>| {
                let response = respond(request.uri().path(), &prefix, &files);
                async move { Ok::<_, std::convert::Infallible>(response) }
            });
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), answer)
                    .await;
            });
        }
    })
}

/// 16 random bytes from the kernel, as hex: the path every request must start with.
fn token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The answer to a request for `path`: under `prefix` (the run's token), the trace, its report,
/// what is served, or one of the page's files; elsewhere, a refusal.
fn respond(path: &str, prefix: &str, served: &Served) -> Response<Full<Bytes>> {
    let under = path.strip_prefix(prefix);
    let Some(path) = under.filter(|rest| rest.is_empty() || rest.starts_with('/')) else {
        let refused = "this server answers only the URL `clxfer view` printed (with its token)";
        return Response::builder()
            .status(StatusCode::FORBIDDEN)
            .header(CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(Full::new(Bytes::from_static(refused.as_bytes())))
            .expect("a valid response");
    };
    // The page's own paths are relative: it must be opened at the token's directory.
    if path.is_empty() {
        return Response::builder()
            .status(StatusCode::PERMANENT_REDIRECT)
            .header(hyper::header::LOCATION, format!("{prefix}/"))
            .body(Full::new(Bytes::new()))
            .expect("a valid response");
    }
    let found = (served.iter())
        .find(|(p, _)| *p == path)
        .map(|(_, b)| ("application/json", b.clone()))
        .or_else(|| {
            let (_, kind, bytes) = FILES.iter().find(|(f, ..)| *f == path)?;
            Some((*kind, Bytes::from_static(bytes)))
        });
    let mut response = Response::builder();
    let body = match found {
        // Nothing is cached: Chromium writing a 100 MB trace into its disk cache held the next
        // page's requests back (headless, now and then for minutes), and the file may change.
        Some((kind, bytes)) => {
            response = (response.header(CONTENT_TYPE, format!("{kind}; charset=utf-8")))
                .header(CACHE_CONTROL, "no-store");
            bytes
        }
        None => {
            response = response.status(StatusCode::NOT_FOUND);
            Bytes::from_static(b"not found")
        }
    };
    response.body(Full::new(body)).expect("a valid response")
}
