//! The viewer's HTTP side: the page's own files (viewer/, built into this binary), a connection
//! per task on a small runtime, and the run's token that every request must carry.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::sync::Arc;

/// One of the page's files: (URL path, content type, bytes).
macro_rules! page_file {
    ($path:literal, $kind:literal) => {
        (
            concat!("/", $path),
            $kind,
            include_bytes!(concat!("../../../../viewer/", $path)) as &[u8],
        )
    };
}

/// The page's files (and `/`, the page itself).
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "/",
        "text/html",
        include_bytes!("../../../../viewer/index.html"),
    ),
    page_file!("index.html", "text/html"),
    page_file!("style.css", "text/css"),
    page_file!("model.js", "text/javascript"),
    page_file!("remote.js", "text/javascript"),
    page_file!("timeline.js", "text/javascript"),
    page_file!("header.js", "text/javascript"),
    page_file!("charts.js", "text/javascript"),
    page_file!("viewer.js", "text/javascript"),
    page_file!("vendor/chart.js/chart.umd.min.js", "text/javascript"),
];

/// What the server answers besides the page's files: a path under the token (with its query, if
/// any) to its status and JSON body, `None` where it has no such path.
pub type Answer = Arc<dyn Fn(&str, &str) -> Option<(StatusCode, Bytes)> + Send + Sync>;

/// Answers every connection until the process is stopped. Each connection is a task of its own,
/// so a browser's idle keep-alive connections or a slow reader of a 100 MB trace hold no other
/// request back; the bodies are shared, not copied per request.
pub fn serve(
    listener: std::net::TcpListener,
    answer: Answer,
    prefix: String,
) -> std::io::Result<()> {
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
            let (answer, prefix) = (answer.clone(), prefix.clone());
            let service = service_fn(move |request: Request<Incoming>| {
                let uri = request.uri();
                let response = respond(uri.path(), uri.query().unwrap_or(""), &prefix, &answer);
                async move { Ok::<_, std::convert::Infallible>(response) }
            });
            tokio::spawn(async move {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

/// 16 random bytes from the kernel, as hex: the path every request must start with.
pub fn token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The answer to a request for `path`: under `prefix` (the run's token), what `answer` serves or
/// one of the page's files; elsewhere, a refusal.
fn respond(path: &str, query: &str, prefix: &str, answer: &Answer) -> Response<Full<Bytes>> {
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
    let found = answer(path, query)
        .map(|(status, b)| (status, "application/json", b))
        .or_else(|| {
            let (_, kind, bytes) = FILES.iter().find(|(f, ..)| *f == path)?;
            Some((StatusCode::OK, *kind, Bytes::from_static(bytes)))
        });
    let mut response = Response::builder();
    let body = match found {
        // Nothing is cached: Chromium writing a 100 MB trace into its disk cache held the next
        // page's requests back (headless, now and then for minutes), and the file may change.
        Some((status, kind, bytes)) => {
            response = (response.status(status))
                .header(CONTENT_TYPE, format!("{kind}; charset=utf-8"))
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
