//! The `clxfer` command line, and the README's options table.

mod common;

use common::*;
use std::time::Duration;

fn clxfer() -> std::process::Command {
    let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    cmd.env_remove("CLXFER_LOG");
    cmd
}

#[test]
fn doctor_shows_options_loader_platforms_and_devices() {
    let mut cmd = clxfer();
    cmd.arg("doctor").env("CLXFER_MODE", "summary");
    let r = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for needle in [
        "CLXFER_MODE             summary",
        "(environment)",
        "CLXFER_OPENCL_LIB       libOpenCL.so.1",
        "loader:         OpenCL ICD Loader 2.3.1",
        "platform 0: Portable Computing Language",
        "device 0: pthread-",
        "[CPU]",
        "OPENCL_LAYERS=",
    ] {
        assert!(
            r.stdout.contains(needle),
            "missing {needle:?} in\n{}",
            r.stdout
        );
    }
    assert!(
        r.stdout
            .contains(&layer_lib().canonicalize().unwrap().display().to_string())
    );
    // Issue #23: the testing-only options only with --testing (or when set), and the columns
    // aligned whichever are shown.
    assert!(!r.stdout.contains("CLXFER_TEST_"), "{}", r.stdout);
    for (args, env, shown) in [
        (vec!["doctor", "--testing"], None, true),
        (
            vec!["doctor"],
            Some(("CLXFER_TEST_WRITER_STALL_MS", "5")),
            true,
        ),
        (vec!["doctor"], None, false),
    ] {
        let mut cmd = clxfer();
        cmd.args(&args);
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let r = run_cmd(cmd, Duration::from_secs(60));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let rows: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| l.starts_with("  CLXFER_"))
            .collect();
        assert_eq!(
            rows.iter()
                .any(|l| l.contains("CLXFER_TEST_WRITER_STALL_MS")),
            shown,
            "{args:?} {env:?}: {}",
            r.stdout
        );
        // Every value starts in the same column.
        let columns: std::collections::HashSet<usize> = rows
            .iter()
            .map(|l| {
                let name_end = 2 + l[2..].find(' ').unwrap();
                name_end + l[name_end..].find(|c: char| c != ' ').unwrap()
            })
            .collect();
        assert_eq!(columns.len(), 1, "{args:?}: misaligned:\n{}", r.stdout);
    }
}

#[test]
fn doctor_warns_about_a_bad_value_once() {
    let mut cmd = clxfer();
    cmd.arg("doctor").env("CLXFER_LOG", "chatty");
    let r = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(r.code, Some(0));
    let lines = r.clxfer_lines();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].contains("CLXFER_LOG") && lines[0].contains("warn|info|debug"),
        "{}",
        lines[0]
    );
    assert!(
        r.stdout.contains("CLXFER_LOG              warn"),
        "{}",
        r.stdout
    );
}

#[test]
fn doctor_reports_a_missing_loader() {
    let mut cmd = clxfer();
    cmd.arg("doctor")
        .env("CLXFER_OPENCL_LIB", "/nonexistent/libOpenCL.so.1");
    let r = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout.contains("cannot open /nonexistent/libOpenCL.so.1"),
        "{}",
        r.stdout
    );
}

#[test]
fn readme_options_table_is_the_generated_one() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let table = clxfer::config::markdown_table();
    assert!(
        readme.contains(&table),
        "README.md's options table is stale; paste `clxfer doctor --options-markdown`:\n{table}"
    );
    let mut cmd = clxfer();
    cmd.args(["doctor", "--options-markdown"]);
    assert_eq!(run_cmd(cmd, Duration::from_secs(30)).stdout, table);
}

/// Issue #56 item 7: what clxfer cites, a user can open: every document a rule's source, a
/// finding or a doc of this repository names is in the repository (`docs/…`), else it is a
/// public URL or a named public source (a driver repository at a commit, a vendor's guide).
#[test]
fn every_document_cited_is_in_the_repository() {
    let rules = clxfer::model::rules::markdown();
    let mut texts = vec![("docs/RULES.md (generated)".to_string(), rules)];
    for doc in [
        "README.md",
        "docs/RULES.md",
        "docs/TRACE.md",
        "docs/ground-truth.md",
    ] {
        texts.push((
            doc.into(),
            std::fs::read_to_string(root().join(doc)).unwrap(),
        ));
    }
    let mut missing = Vec::new();
    for (whose, text) in &texts {
        // Outside code blocks (a command's output file is no citation).
        let prose: String = (text.split("```").step_by(2)).collect::<Vec<_>>().join(" ");
        for word in prose.split(|c: char| c.is_whitespace() || "()[]`,;|\"'".contains(c)) {
            let word = word.trim_end_matches(['.', ':']);
            let named = word.len() > ".md".len() && !word.contains('=');
            if !named || !word.ends_with(".md") || word.starts_with("http") || word.contains("://")
            {
                continue;
            }
            // Relative to the repository, or to docs/ from a doc there.
            let found = root().join(word).exists()
                || root().join("docs").join(word).exists()
                || word.contains('/') && !word.starts_with("docs/") && !word.starts_with("../");
            if !found || word.starts_with("../") {
                missing.push(format!("{whose}: {word}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "cited but not in the repository: {missing:#?}"
    );
}

#[test]
fn rules_doc_is_the_generated_one() {
    let doc = std::fs::read_to_string(root().join("docs/RULES.md")).unwrap_or_default();
    let table = clxfer::model::rules::markdown();
    assert!(
        doc == table,
        "docs/RULES.md is stale; run `clxfer doctor --rules-markdown > docs/RULES.md`"
    );
    let mut cmd = clxfer();
    cmd.args(["doctor", "--rules-markdown"]);
    assert_eq!(run_cmd(cmd, Duration::from_secs(30)).stdout, table);
}

#[test]
fn readme_names_the_two_commands_and_ci_runs_the_test_one() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("scripts/demo") && readme.contains("scripts/test"));
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == "scripts/test"),
        ".ci/run must run scripts/test:\n{ci}"
    );
}

#[test]
fn trace_doc_is_the_generated_one() {
    let doc = std::fs::read_to_string(root().join("docs/TRACE.md")).unwrap_or_default();
    let table = clxfer::report::trace_doc();
    assert!(
        doc == table,
        "docs/TRACE.md is stale; run `clxfer doctor --trace-markdown > docs/TRACE.md`"
    );
    let mut cmd = clxfer();
    cmd.args(["doctor", "--trace-markdown"]);
    assert_eq!(run_cmd(cmd, Duration::from_secs(30)).stdout, table);
}

#[test]
fn check_reports_violations_and_unreadable_files() {
    let dir = fresh_dir("check");
    let good = dir.join("good.json");
    std::fs::write(
        &good,
        "[{\"name\":\"a\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1.0,\"dur\":1.0},\n",
    )
    .unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        "[{\"name\":\"a\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":-1.0,\"dur\":1.0}]",
    )
    .unwrap();
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "not a trace").unwrap();
    let check = |files: &[&std::path::Path]| {
        let mut cmd = clxfer();
        cmd.arg("check").args(files);
        run_cmd(cmd, Duration::from_secs(30))
    };
    let r = check(&[&good]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("ok: 1 events, 1 slices, 0 flows; not closed"),
        "{}",
        r.stdout
    );
    let r = check(&[&good, &bad]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stdout.contains("event 0: \"ts\" -1.0 is negative"),
        "{}",
        r.stdout
    );
    let r = check(&[&junk, &good]);
    assert_eq!(r.code, Some(2));
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line per unreadable file: {}", r.stderr);
    assert!(
        lines[0].starts_with("clxfer: ") && lines[0].contains("not a Chrome trace"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"));
    let r = check(&[&dir.join("missing.json")]);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("cannot read"), "{}", r.stderr);
}

#[test]
fn the_h200_examples_pass_check_and_report_what_the_gpu_did() {
    let trace = root().join("docs/examples/h200-trace.json");
    let mut cmd = clxfer();
    cmd.arg("check").arg(&trace);
    let r = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(r.stdout.contains(": ok:"), "{}", r.stdout);
    // NVIDIA's migrations carry no trustworthy device time: each is marked, and sits 0 long
    // after its own enqueue call, on no other command's time.
    let events = clxfer::trace::read::read_file(&trace).unwrap().events;
    untrusted_migrations_stand_alone(&events);
    // Nor do the maps that move nothing (nvidia.borrowed-times): no two measured device slices
    // share a start and a duration.
    let mut seen = std::collections::HashMap::new();
    for e in (events.iter()).filter(|e| e["ph"] == "X" && e["pid"].as_u64() >= Some(1 << 31)) {
        let (name, ts, dur) = (e["name"].as_str().unwrap(), &e["ts"], &e["dur"]);
        if name.starts_with("Map") && name.ends_with("none") {
            assert_eq!(e["args"]["device_time"], "untrusted", "{e}");
        }
        if dur.as_f64() > Some(0.0)
            && let Some(other) = seen.insert((ts.to_string(), dur.to_string()), e)
        {
            panic!("two device slices at one time: {other} and {e}");
        }
    }
    let mut cmd = clxfer();
    cmd.args(["report", "--format", "json"]).arg(&trace);
    let r = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let devices = report["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 1, "made on one H200 (two: issue #30)");
    assert_eq!(devices[0]["name"], "NVIDIA H200");
    assert_eq!(devices[0]["rules"], "nvidia");
    // Staged and pinned both seen, and the run's pinned bandwidth is a PCIe figure, not a memcpy's.
    let paths: Vec<&str> = devices[0]["transfers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"pinned") && paths.contains(&"staged"),
        "{paths:?}"
    );
    let best = devices[0]["best_pinned_gbps"][0][1].as_f64().unwrap();
    assert!((20.0..64.0).contains(&best), "{best}");
    let summary = std::fs::read_to_string(root().join("docs/examples/h200-summary.md")).unwrap();
    assert!(summary.contains("NVIDIA H200 · nvidia rules"), "{summary}");
}

/// Issue #23: a newcomer with the stable toolchain alone can run the demo: `scripts/setup demo`
/// asks for no nightly toolchain, while the tests' setup does, and says why it cannot get one.
#[test]
fn the_demo_needs_no_nightly_toolchain() {
    let shims = fresh_dir("setup-shims");
    let cargo = which("cargo");
    let shim = shims.join("cargo");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\n[ \"$1\" = +nightly ] && {{ echo \"error: toolchain 'nightly' is not \
             installed\" >&2; exit 1; }}\nexec {} \"$@\"\n",
            cargo.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    // No rustup on this PATH: the nightly toolchain cannot be fetched.
    let path = format!("{}:/usr/bin:/bin", shims.display());
    let setup = |what: &str| {
        let mut cmd = std::process::Command::new(root().join("scripts/setup"));
        cmd.arg(what)
            .env("PATH", &path)
            .env("RUSTUP_TOOLCHAIN", "stable");
        run_cmd(cmd, Duration::from_secs(120))
    };
    let demo = setup("demo");
    assert_eq!(demo.code, Some(0), "{}", demo.stderr);
    assert_eq!(
        demo.stderr, "",
        "the demo's setup has nothing to install here"
    );
    let test = setup("test");
    assert_eq!(test.code, Some(1), "{}", test.stderr);
    assert_eq!(
        test.stderr,
        "setup: the nightly Rust toolchain is missing and there is no rustup to fetch it\n"
    );
}

/// The full path of a program on this PATH.
fn which(program: &str) -> std::path::PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}

/// Issue #23: README's examples are the ones `--help` gives, and its command table names every
/// command and every flag each one takes.
#[test]
fn readme_command_table_and_examples_are_the_help() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for sub in ["run", "report", "check", "diff", "merge", "view", "doctor"] {
        let mut cmd = clxfer();
        cmd.args([sub, "--help"]);
        let help = run_cmd(cmd, Duration::from_secs(30)).stdout;
        let examples: Vec<&str> = help
            .lines()
            .skip_while(|l| !l.starts_with("Example"))
            .skip(1)
            .map(str::trim)
            .filter(|l| l.starts_with("clxfer "))
            .collect();
        assert!(!examples.is_empty(), "{sub} --help has no example");
        for e in examples {
            assert!(readme.contains(e), "README lacks {sub}'s example {e:?}");
        }
        let row = readme
            .lines()
            .find(|l| l.starts_with(&format!("| `clxfer {sub}")))
            .unwrap_or_else(|| panic!("README's command table has no row for {sub}"));
        let flags = help
            .lines()
            .skip_while(|l| !l.starts_with("Options:"))
            .take_while(|l| !l.starts_with("Example"))
            .filter(|l| l.trim_start().starts_with('-'))
            .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("--")))
            .map(|f| f.trim_end_matches(','))
            .filter(|f| {
                !matches!(
                    *f,
                    "--help" | "--options-markdown" | "--rules-markdown" | "--trace-markdown"
                )
            });
        for flag in flags {
            // Merge's `-o FILE` stands for its --output.
            let short = if flag == "--output" { "-o FILE" } else { flag };
            assert!(
                row.contains(flag) || row.contains(short),
                "README's {sub} row lacks {flag}"
            );
        }
    }
}

/// Issue #55: `clxfer run` checks every `CLXFER_*` setting before it starts the program: a bad
/// value or an unknown name exits 2, one line each naming the variable (and the accepted values,
/// or the nearest name), and the program never runs.
#[test]
fn run_refuses_bad_settings_before_starting_the_program() {
    let dir = fresh_dir("refused");
    let marker = dir.join("ran");
    let script = format!("touch {}", marker.display());
    for (var, value, needles) in [
        (
            "CLXFER_MODE",
            "bogus",
            &["CLXFER_MODE=\"bogus\"", "trace|summary|off"][..],
        ),
        (
            "CLXFER_BUFFER_MIB",
            "0",
            &["CLXFER_BUFFER_MIB=\"0\"", "1 to 4096"],
        ),
        (
            "CLXFER_MOD",
            "summary",
            &[
                "CLXFER_MOD is not a clxfer variable",
                "did you mean CLXFER_MODE?",
            ],
        ),
    ] {
        let mut cmd = clxfer();
        cmd.args(["run", "--", "sh", "-c", &script]).env(var, value);
        let r = run_cmd(cmd, Duration::from_secs(60));
        assert_eq!(r.code, Some(2), "{var}: {}", r.stderr);
        let line = r.one_line(var);
        for n in needles {
            assert!(line.contains(n), "{var}: {line}");
        }
        assert!(!marker.exists(), "{var}: the program ran");
    }
    // A flag replaces its variable, so a bad variable that a flag overrides is no error.
    let mut cmd = clxfer();
    cmd.args(["run", "--summary", "--", "sh", "-c", &script])
        .env("CLXFER_MODE", "bogus");
    let r = run_cmd(cmd, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(marker.exists(), "the program did not run");
}
