//! Perfetto's protobuf format: clxfer's traces converted to it (`clxfer convert`) decode with
//! Perfetto's own schema (PyPI `perfetto`'s perfetto_trace_pb2, which scripts/setup installs in
//! target/perfetto-venv), keep the rules its trace processor relies on (one sequence started
//! afresh, every interned name and track described before use, each flow begun and ended once)
//! and hold the slices, flows, counters and names of the JSON; clxfer's readers give the same
//! report from either format, and back to JSON nothing is lost.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn clxfer(args: &[&std::ffi::OsStr]) -> Run {
    let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    cmd.args(args);
    run_cmd(cmd, Duration::from_secs(120))
}

fn convert(from: &Path, to: &Path) {
    let r = clxfer(&["convert".as_ref(), from.as_os_str(), to.as_os_str()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
}

fn report(trace: &Path) -> Value {
    let r = clxfer(&[
        "report".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        trace.as_os_str(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

/// Perfetto's schema decodes `pf` and finds it consistent with `json`: the validator's summary,
/// or its complaints.
fn validate(pf: &Path, json: &Path) -> Result<Value, String> {
    let python = root().join("target/perfetto-venv/bin/python");
    assert!(
        python.exists(),
        "{} missing: scripts/setup installs it",
        python.display()
    );
    let out = std::process::Command::new(python)
        .arg(root().join("tests/perfetto/validate.py"))
        .arg(pf)
        .arg(json)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// A JSON trace of `program args` under clxfer.
fn traced(program_name: &str, args: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let mut cmd = command(program(program_name), Load::Layer);
    cmd.args(args).envs(env.iter().copied());
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.traces.len(), 1, "{}", r.stderr);
    r.traces[0].clone()
}

#[test]
fn protobuf_traces_decode_with_perfetto_s_schema_and_hold_what_the_json_holds() {
    let cases = [
        traced("demo", &["4", "2"], &[("CLXFER_RULES", "nvidia")]),
        // Four threads, every command timed: arrows and device lanes from each.
        traced("storm", &["4000", "4"], &[("CLXFER_DEVICE_TIMING", "all")]),
        // Two devices, and a race: its instant and arrow.
        traced("races", &["race"], &[("POCL_DEVICES", "pthread pthread")]),
    ];
    for json in &cases {
        let pf = json.with_extension("pftrace");
        convert(json, &pf);
        let summary = validate(&pf, json).unwrap_or_else(|e| panic!("{}: {e}", pf.display()));
        assert!(summary["slices"].as_u64().unwrap() > 10, "{summary}");
        assert!(summary["flows"].as_u64().unwrap() > 0, "{summary}");
        // The same report from either format, and from the protobuf back as JSON.
        let back = json.with_extension("back.json");
        convert(&pf, &back);
        let want = report(json);
        assert_eq!(report(&pf), want, "{}", pf.display());
        assert_eq!(report(&back), want, "{}", back.display());
        // Perfetto's JSON rules hold for the events the protobuf stands for, too.
        for t in [&pf, &back] {
            let r = clxfer::trace::check::check_file(t).unwrap();
            assert!(r.ok(), "{}: {:?}", t.display(), r.violations);
        }
        let (pf_len, json_len) = (
            std::fs::metadata(&pf).unwrap().len(),
            std::fs::metadata(json).unwrap().len(),
        );
        assert!(pf_len < json_len, "{pf_len} against {json_len}");
        eprintln!(
            "{}: {json_len} B as JSON, {pf_len} B as protobuf: {summary}",
            json.display()
        );
    }
}

/// The validator is not a rubber stamp: a file that lost a track descriptor, or a packet cut in
/// half, is refused. clxfer reads what is whole of a file cut short.
#[test]
fn a_broken_protobuf_trace_is_refused_and_a_cut_one_read_up_to_its_cut() {
    let json = traced("demo", &["2", "1"], &[]);
    let pf = json.with_extension("pftrace");
    convert(&json, &pf);
    let bytes = std::fs::read(&pf).unwrap();
    // The packets, as (start, end) in the file.
    let mut packets = Vec::new();
    let mut fields = clxfer::perfetto::wire::fields(&bytes);
    let mut start = 0;
    while let Some(f) = fields.next() {
        f.unwrap();
        packets.push((start, fields.offset()));
        start = fields.offset();
    }
    // Without the first thread's track descriptor.
    let thread_track = |&&(a, b): &&(usize, usize)| {
        let packet = clxfer::perfetto::wire::fields(&bytes[a..b])
            .next()
            .unwrap()
            .unwrap()
            .1;
        let fields = clxfer::perfetto::wire::fields(packet.bytes());
        let descriptor = fields.filter_map(Result::ok).find(|f| f.0 == 60);
        descriptor
            .is_some_and(|d| clxfer::perfetto::wire::fields(d.1.bytes()).any(|f| f.unwrap().0 == 4))
    };
    let &(a, b) = packets.iter().find(thread_track).unwrap();
    let broken = pf.with_extension("broken.pftrace");
    std::fs::write(&broken, [&bytes[..a], &bytes[b..]].concat()).unwrap();
    let why = validate(&broken, &json).unwrap_err();
    assert!(why.contains("before its descriptor"), "{why}");
    // clxfer check knows the rule too.
    let r = clxfer(&["check".as_ref(), broken.as_os_str()]);
    assert_eq!(r.code, Some(1), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("a track not described before it"),
        "{}",
        r.stdout
    );
    // Cut in the middle of a packet: clxfer reads the packets before it.
    let (a, b) = packets[packets.len() / 2];
    let cut = pf.with_extension("cut.pftrace");
    std::fs::write(&cut, &bytes[..(a + b) / 2]).unwrap();
    let trace = clxfer::trace::read::read_file(&cut).unwrap();
    assert!(trace.truncated && !trace.closed);
    assert!(!trace.events.is_empty());
    let r = clxfer(&["report".as_ref(), cut.as_os_str()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("was cut short"), "{}", r.stderr);
    // Not a trace at all: a one-line error, exit 2.
    let junk = pf.with_extension("junk.pftrace");
    std::fs::write(&junk, [0x0a, 0x05, 0x01]).unwrap();
    let r = clxfer(&["report".as_ref(), junk.as_os_str()]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
}

/// A run traced straight to protobuf (`CLXFER_FORMAT=perfetto`): the demo, four threads with
/// every command timed, a program that forks, and one killed while it runs. Each file decodes with
/// Perfetto's schema and keeps its rules; clxfer reads it (a killed one up to its last whole
/// packet) and its report is the one the run wrote at exit.
#[test]
fn traces_written_as_protobuf_keep_perfetto_s_rules_in_every_way_a_program_ends() {
    let check = |pf: &Path| -> Value {
        let json = pf.with_extension("as.json");
        convert(pf, &json);
        validate(pf, &json).unwrap_or_else(|e| panic!("{}: {e}", pf.display()))
    };
    let perfetto = [("CLXFER_FORMAT", "perfetto")];
    // The demo, and four threads with every command timed.
    for (name, args, extra) in [
        ("demo", &["4", "2"][..], ("CLXFER_RULES", "nvidia")),
        ("storm", &["4000", "4"][..], ("CLXFER_DEVICE_TIMING", "all")),
    ] {
        let pf = traced(name, args, &[perfetto[0], extra]);
        assert_eq!(pf.extension().unwrap(), "pftrace");
        let summary = check(&pf);
        assert_eq!(summary["whole"], true, "{summary}");
        // The report from the file is the one written at exit, in its last event.
        let ev = clxfer::trace::read::read_file(&pf).unwrap().events;
        let end = ev
            .iter()
            .rfind(|e| e["name"] == "clxfer trace end")
            .unwrap();
        assert_eq!(report(&pf), end["args"]["report"], "{}", pf.display());
        if name == "storm" {
            let enqueues = 4 * 4000;
            let bytes = std::fs::metadata(&pf).unwrap().len();
            eprintln!(
                "storm, 4 threads, every command timed: {} B per enqueue",
                bytes / enqueues
            );
        }
    }
    // A forked child writes its own protobuf trace.
    let r = run(program("fork"), Load::Layer, &perfetto);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.traces.len(), 2, "{:?}", r.traces);
    for t in &r.traces {
        assert_eq!(check(t)["whole"], true);
    }
    // Killed: readable up to its last whole packet.
    let mut cmd = command(program("storm"), Load::Layer);
    cmd.arg("100000000").envs(perfetto);
    let dir: PathBuf = cmd
        .get_envs()
        .find(|(k, _)| *k == "CLXFER_DIR")
        .and_then(|(_, v)| v)
        .unwrap()
        .into();
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let size = || -> u64 {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok()?.metadata().ok())
            .map(|m| m.len())
            .sum()
    };
    while size() < 1 << 20 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let traces = checked_traces(&dir);
    assert_eq!(traces.len(), 1);
    let summary = check(&traces[0]);
    assert!(summary["slices"].as_u64().unwrap() > 1000, "{summary}");
    let r = clxfer(&["report".as_ref(), traces[0].as_os_str()]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("was cut short"), "{}", r.stderr);
}

/// `clxfer merge` and `clxfer view` take protobuf traces: a merge of a protobuf and a JSON trace
/// is one JSON timeline Perfetto's rules accept, and the viewer's server hands the page a protobuf
/// trace as the JSON it stands for.
#[test]
fn merge_and_view_take_protobuf_traces() {
    let json = traced("demo", &["2", "1"], &[]);
    let pf = traced("demo", &["2", "1"], &[("CLXFER_FORMAT", "perfetto")]);
    let merged = pf.with_extension("merged.json");
    let r = clxfer(&[
        "merge".as_ref(),
        json.as_os_str(),
        pf.as_os_str(),
        "-o".as_ref(),
        merged.as_os_str(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let check = clxfer::trace::check::check_file(&merged).unwrap();
    assert!(check.ok(), "{:?}", check.violations);
    let reports = clxfer::report::from_trace::report_file(&merged, None).unwrap();
    assert_eq!(reports.len(), 2);
    // The viewer's server: the trace as JSON.
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_clxfer"))
        .arg("view")
        .arg(&pf)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::{BufRead, Read, Write};
    std::io::BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // http://ADDR/TOKEN/: the server answers only under the run's token.
    let (addr, token) = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|r| r.trim_end_matches('/').split_once('/'))
        .map(|(a, t)| (a.to_string(), t.to_string()))
        .unwrap_or_else(|| panic!("no URL in {line:?}"));
    let mut conn = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        conn,
        "GET /{token}/trace.json HTTP/1.0\r\nHost: {addr}\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    conn.read_to_end(&mut response).unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let at = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let events: Vec<Value> = serde_json::from_slice(&response[at..]).unwrap();
    let decoded = clxfer::trace::read::read_file_with(&pf, |_, _| {}).unwrap();
    assert_eq!(events.len(), decoded.events);
    assert!(events.iter().any(|e| e["name"] == "clxfer trace end"));
}
