//! The viewer in a real browser: `clxfer view` serves a demo trace, headless Chromium (Debian's)
//! loads it through playwright-core (tests/browser/viewer.mjs), and what the page shows is checked
//! against the trace and its report.

mod common;

use common::*;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Transfers with a point: moved bytes and have a time (their command's device time, or the host
/// time of a blocking call; on a device under forced rules the cost model's projected time),
/// counted here independently of the page's code.
fn transfers_with_a_time(events: &[Value]) -> usize {
    let base = 1u64 << 31;
    let forced: HashSet<u64> = (events.iter())
        .filter(|e| e["name"] == "device info" && e["args"]["rules"] != e["args"]["auto_rules"])
        .filter_map(|e| e["args"]["index"].as_u64())
        .collect();
    let device_of = |a: &Value| -> Option<u64> {
        let q = a["queue"].as_str()?.strip_prefix("device #")?;
        q.split(' ').next()?.parse().ok()
    };
    let mut device: HashMap<u64, f64> = HashMap::new();
    for e in events {
        if e["ph"] == "X"
            && e["pid"].as_u64().unwrap_or(0) >= base
            && let Some(id) = e["args"]["command"].as_u64()
        {
            let unavailable = e["args"].get("device_time").is_some();
            let dur = e["dur"].as_f64().unwrap();
            device.insert(id, if unavailable { 0.0 } else { dur });
        }
    }
    events
        .iter()
        .filter(|e| {
            let a = &e["args"];
            e["ph"] == "X"
                && e["pid"].as_u64().unwrap_or(base) < base
                && a.get("path").is_some()
                && a["bytes"].as_u64().unwrap_or(0) > 0
                && if device_of(a).is_some_and(|d| forced.contains(&d)) {
                    a["projected_us"].as_f64().is_some_and(|t| t > 0.0)
                } else {
                    let dev = a["command"]
                        .as_u64()
                        .and_then(|id| device.get(&id))
                        .copied();
                    let host = if a["blocking"] == true {
                        e["dur"].as_f64()
                    } else {
                        None
                    };
                    dev.filter(|&d| d > 0.0).or(host).is_some_and(|t| t > 0.0)
                }
        })
        .count()
}

#[test]
fn the_viewer_shows_every_transfer_each_path_in_its_colour_and_the_report_s_findings() {
    let out = fresh_dir("viewer-trace");
    let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    cmd.env_remove("CLXFER_LOG").env_remove("CLXFER_DIR");
    cmd.args(["run", "--rules", "nvidia", "--out"])
        .arg(&out)
        .arg("--");
    cmd.arg(program("demo")).args(["4", "2"]);
    let r = run_cmd(cmd, Duration::from_secs(180));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let traces = checked_traces(&out);
    assert_eq!(traces.len(), 1);
    let trace = &traces[0];
    let events: Vec<Value> = serde_json::from_slice(&std::fs::read(trace).unwrap()).unwrap();
    let end = events
        .iter()
        .find(|e| e["name"] == "clxfer trace end")
        .unwrap();
    let report = end["args"]["report"].clone();
    assert!(
        report["findings"].as_array().is_some_and(|f| f.len() >= 3),
        "{report}"
    );

    // clxfer view on a free port; its first line gives the URL.
    let mut server = Command::new(env!("CARGO_BIN_EXE_clxfer"))
        .arg("view")
        .arg(trace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();

    let shots = fresh_dir("viewer-screenshots");
    let malformed = shots.join("malformed.json");
    std::fs::write(&malformed, "[{\"name\": \"clxfer trace start\", \"ph\": ").unwrap();
    let report_file = shots.join("report.json");
    let mut rep = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    rep.args(["report", "--format", "json"]).arg(trace);
    let rep = run_cmd(rep, Duration::from_secs(60));
    assert_eq!(rep.code, Some(0), "{}", rep.stderr);
    std::fs::write(&report_file, &rep.stdout).unwrap();
    let browser = root().join("tests/browser");
    let node = Command::new("node")
        .arg(browser.join("viewer.mjs"))
        .arg(&url)
        .arg(&shots)
        .arg(&malformed)
        .arg(&report_file)
        .output();
    let _ = server.kill();
    let _ = server.wait();
    let node = node.expect("node (scripts/setup installs it)");
    assert!(
        node.status.success(),
        "the browser run failed:\n{}\n{}",
        String::from_utf8_lossy(&node.stdout),
        String::from_utf8_lossy(&node.stderr)
    );
    let got: Value = serde_json::from_slice(&node.stdout).unwrap();
    let shown = &got["shown"];
    assert_eq!(
        got["errors"],
        serde_json::json!([]),
        "the page logged errors"
    );
    assert_eq!(shown["status"], "ready", "{got}");

    // One point per transfer, and the datasets hold them all.
    let want = transfers_with_a_time(&events);
    assert!(want > 200, "{want}");
    assert_eq!(shown["points"].as_u64().unwrap() as usize, want);
    let datasets = shown["datasets"].as_array().unwrap();
    let in_sets: u64 = datasets.iter().map(|d| d["points"].as_u64().unwrap()).sum();
    assert_eq!(in_sets as usize, want);
    // The rules were forced on PoCL's CPU device: every point is the NVIDIA cost model's
    // projection, none faster than its link (issue #26: no impossible bandwidth).
    let link = clxfer::model::rules::NVIDIA.cost.unwrap().link_gbps();
    for d in datasets {
        assert!(d["max_gbps"].as_f64().unwrap() <= link, "{d}");
        for t in d["times"].as_array().unwrap() {
            assert!(t.as_str().unwrap().starts_with("projected"), "{d}");
        }
    }
    // Each path: its own colour, and a legend entry in that colour.
    let paths: HashSet<&str> = datasets
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    for p in ["pinned", "staged"] {
        assert!(paths.contains(p), "{p} missing: {paths:?}");
    }
    let colours: HashSet<&str> = datasets
        .iter()
        .map(|d| d["color"].as_str().unwrap())
        .collect();
    assert_eq!(colours.len(), datasets.len(), "two paths share a colour");
    let legend = shown["legend"].as_array().unwrap();
    for d in datasets {
        assert!(
            legend
                .iter()
                .any(|l| l["text"] == d["path"] && l["color"] == d["color"]),
            "no legend entry for {d}"
        );
    }
    assert!(!shown["best_lines"].as_array().unwrap().is_empty());
    assert_eq!(shown["device_charts"], 1);
    assert_eq!(shown["perfetto_enabled"], true);

    // The findings: the report's, in its order and words; those that would save under 1% of
    // the run's wall time in one line after them, as in the text report.
    let findings = shown["findings"].as_array().unwrap();
    let want = report["findings"].as_array().unwrap();
    let (minor, major): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) =
        want.iter().partition(|f| f["minor"] == true);
    let shown_count = major.len() + usize::from(!minor.is_empty());
    assert_eq!(findings.len(), shown_count);
    if let Some(last) = findings.last().filter(|_| !minor.is_empty()) {
        let last = last.as_str().unwrap();
        assert!(last.contains("save under 1%"), "{last}");
        for f in &minor {
            assert!(
                last.contains(f["kind"].as_str().unwrap()),
                "{f} not in {last}"
            );
        }
    }
    for (shown, f) in findings.iter().zip(major) {
        let shown = shown.as_str().unwrap();
        for key in ["title", "fix", "saves"] {
            assert!(
                shown.contains(f[key].as_str().unwrap()),
                "{key} of {f} not in {shown}"
            );
        }
        for e in f["evidence"].as_array().unwrap() {
            assert!(shown.contains(e.as_str().unwrap()), "{e} not in {shown}");
        }
    }

    // A malformed file: an error message, not a blank page.
    let bad = &got["malformed"];
    assert_eq!(bad["visible"], true, "{got}");
    assert!(
        bad["text"]
            .as_str()
            .unwrap()
            .contains("malformed.json is not JSON"),
        "{bad}"
    );
    assert_eq!(bad["charts_hidden"], true);
    // A report file: its findings and device charts, no points.
    let shown_report = &got["report"];
    assert_eq!(
        shown_report["findings"].as_u64().unwrap() as usize,
        shown_count
    );
    assert_eq!(shown_report["points_hidden"], true);
    assert_eq!(shown_report["device_charts"], 1);
    for shot in ["viewer.png", "viewer-malformed.png"] {
        let png = std::fs::read(shots.join(shot)).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{shot}");
    }
}
