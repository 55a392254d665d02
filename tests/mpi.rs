//! Issue #59: a parallel job under clxfer, with Debian's Open MPI (scripts/setup installs it):
//! four ranks on PoCL, one of which stages its transfers (tests/programs/ranks.c), launched both
//! ways (`mpirun … clxfer run -- prog` and `clxfer run -- mpirun … prog`). Each rank's trace is
//! named for its rank and says it (rank, ranks, launcher, host); `clxfer report DIR` puts the
//! ranks side by side and names the one that stages; a merge labels each process and device by
//! its rank; `CLXFER_REPORT` names a report per rank.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// `mpirun` for four ranks on this machine's two cores (as root, as CI runs).
fn mpirun(cmd: &mut Command) {
    cmd.args(["--oversubscribe", "-np", "4"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
}

fn clxfer_cmd() -> Command {
    command(env!("CARGO_BIN_EXE_clxfer"), Load::None)
}

/// The traces of `dir` whose start says a rank, by rank: (rank, path, the start's args).
fn ranked(dir: &Path) -> Vec<(u64, PathBuf, Value)> {
    let mut out = Vec::new();
    for t in checked_traces(dir) {
        let events = clxfer::trace::read::read_file(&t).unwrap().events;
        let start = events
            .iter()
            .find(|e| e["name"] == clxfer::vocab::schema::TRACE_START)
            .expect("a start event")["args"]
            .clone();
        if let Some(rank) = start["rank"].as_u64() {
            out.push((rank, t, start));
        }
    }
    out.sort_by_key(|r| r.0);
    out
}

fn report(args: &[&str], dir: &Path) -> String {
    let mut cmd = clxfer_cmd();
    cmd.arg("report").args(args).arg(dir);
    let r = run_cmd(cmd, Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    r.stdout
}

/// Each rank's trace: named for its rank, saying its rank, the job's size, Open MPI and a host.
fn four_ranks(dir: &Path) -> Vec<(u64, PathBuf, Value)> {
    let ranks = ranked(dir);
    assert_eq!(
        ranks.iter().map(|r| r.0).collect::<Vec<_>>(),
        [0, 1, 2, 3],
        "{ranks:?}"
    );
    for (rank, path, start) in &ranks {
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(
            name.starts_with(&format!("clxfer-ranks-rank{rank}-")),
            "{name}"
        );
        assert_eq!(start["ranks"], 4, "{start}");
        assert_eq!(start["launcher"], "Open MPI", "{start}");
        assert!(!start["host"].as_str().unwrap_or("").is_empty(), "{start}");
    }
    ranks
}

/// `clxfer report DIR`: the job's table, one row per rank, and the staging rank named.
fn the_job_s_table_names(dir: &Path, staged: u64) {
    let text = report(&[], dir);
    assert!(text.starts_with("clxfer job · 4 ranks\n"), "{text}");
    let want = format!("rank {staged} stages 100% of its bytes through a driver bounce buffer");
    assert!(text.contains(&want), "{text}");
    let table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    let rows: Vec<&str> = table
        .iter()
        .copied()
        .filter(|l| {
            l.trim_start()
                .split(' ')
                .next()
                .is_some_and(|w| w.parse::<u32>().is_ok())
        })
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    let staged_row = rows
        .iter()
        .find(|r| r.trim_start().starts_with(&format!("{staged} ")))
        .unwrap();
    assert!(staged_row.contains("100%"), "{staged_row}");
    // Each rank's own report says where it ran; JSON carries the rank and host.
    assert!(text.contains(&format!("rank {staged} of 4 on ")), "{text}");
    let json: Value = serde_json::from_str(&report(&["--format", "json"], dir)).unwrap();
    let mut ranks: Vec<u64> = (json.as_array().unwrap().iter())
        .filter_map(|r| r["rank"].as_u64())
        .collect();
    ranks.sort();
    assert_eq!(ranks, [0, 1, 2, 3]);
}

#[test]
fn mpirun_runs_clxfer_run_in_each_rank() {
    let prog = program("ranks");
    let dir = fresh_dir("mpi-inside");
    let mut cmd = Command::new("mpirun");
    mpirun(&mut cmd);
    cmd.arg(env!("CARGO_BIN_EXE_clxfer"))
        .args(["run", "--rules", "nvidia", "--out"])
        .arg(&dir)
        .arg("--")
        .arg(&prog);
    let r = run_cmd(cmd, Duration::from_secs(300));
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("checksum"), "{}", r.stdout);
    four_ranks(&dir);
    the_job_s_table_names(&dir, 1);
}

#[test]
fn clxfer_run_runs_mpirun_and_its_ranks_are_traced() {
    let prog = program("ranks");
    let dir = fresh_dir("mpi-outside");
    let mut cmd = clxfer_cmd();
    cmd.args(["run", "--rules", "nvidia", "--out"])
        .arg(&dir)
        .args(["--", "mpirun"]);
    mpirun(&mut cmd);
    // Rank 3 stages.
    cmd.arg(&prog).arg("3");
    let r = run_cmd(cmd, Duration::from_secs(300));
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("side by side: clxfer report"),
        "{}",
        r.stderr
    );
    let ranks = four_ranks(&dir);
    the_job_s_table_names(&dir, 3);

    // Merged, every process and every device is labelled by its rank (and the host process by
    // its host too).
    let merged = dir.join("merged.json");
    let mut cmd = clxfer_cmd();
    cmd.args(["merge", "-o"]).arg(&merged);
    cmd.args(ranks.iter().map(|r| &r.1));
    let m = run_cmd(cmd, Duration::from_secs(120));
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    let events = clxfer::trace::read::read_file(&merged).unwrap().events;
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    for (rank, _, start) in &ranks {
        let host = start["host"].as_str().unwrap();
        let program = format!("ranks · rank {rank} ({host})");
        assert!(names.contains(&program.as_str()), "{names:?}");
        let device = format!("rank {rank} · device #1 · ");
        assert!(names.iter().any(|n| n.starts_with(&device)), "{names:?}");
    }
}

#[test]
fn a_report_per_rank_by_its_placeholders() {
    let prog = program("ranks");
    let dir = fresh_dir("mpi-reports");
    let mut cmd = Command::new("mpirun");
    mpirun(&mut cmd);
    let reports = dir.join("{program}-{rank}.txt");
    cmd.arg(env!("CARGO_BIN_EXE_clxfer"))
        .args(["run", "--summary", "--rules", "nvidia", "--report"])
        .arg(&reports)
        .arg("--")
        .arg(&prog);
    let r = run_cmd(cmd, Duration::from_secs(300));
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    for rank in 0..4 {
        let path = dir.join(format!("ranks-{rank}.txt"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), r.stderr));
        let head = text.lines().next().unwrap_or("");
        assert!(head.contains(&format!("rank {rank} of 4 on ")), "{head}");
    }
}

/// `report`, `diff` and `merge` of 64 traces read them on every core (`clxfer::trace::many`):
/// what they print is what one core prints (`taskset -c 0`), byte for byte.
#[test]
fn sixty_four_traces_read_on_every_core_give_what_one_core_gives() {
    let prog = program("ranks");
    // Sixty-four ranks, clxfer loaded into each as a layer.
    let mut cmd = command("mpirun", Load::Layer);
    cmd.args(["--oversubscribe", "-np", "64"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("CLXFER_RULES", "nvidia")
        .arg(&prog);
    let r = run_cmd(cmd, Duration::from_secs(600));
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    // The ranks', and mpirun's own (Open MPI's hwloc asks OpenCL for its devices).
    let ranks: Vec<&PathBuf> = (r.traces.iter())
        .filter(|t| t.file_name().unwrap().to_string_lossy().contains("-rank"))
        .collect();
    assert_eq!(ranks.len(), 64, "{:?}", r.traces);
    let many = r.traces[0].parent().unwrap().to_path_buf();
    let on = |cores: Option<&str>, args: &[&std::ffi::OsStr]| {
        let mut cmd = match cores {
            Some(c) => {
                let mut t = command("taskset", Load::None);
                t.args(["-c", c]).arg(env!("CARGO_BIN_EXE_clxfer"));
                t
            }
            None => clxfer_cmd(),
        };
        cmd.args(args);
        let r = run_cmd(cmd, Duration::from_secs(300));
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        r.stdout
    };
    let json = [
        "report".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        many.as_os_str(),
    ];
    let all = on(None, &json);
    assert_eq!(all, on(Some("0"), &json));
    let reports: Value = serde_json::from_str(&all).unwrap();
    let ranked = (reports.as_array().unwrap().iter()).filter(|r| r["rank"].is_u64());
    assert_eq!(ranked.count(), 64);
    let diff = ["diff".as_ref(), many.as_os_str(), many.as_os_str()];
    assert_eq!(on(None, &diff), on(Some("0"), &diff));
    let merged = |name: &str, cores| {
        let out = many.join(name);
        let mut args: Vec<&std::ffi::OsStr> =
            vec!["merge".as_ref(), "-o".as_ref(), out.as_os_str()];
        args.extend(ranks.iter().map(|t| t.as_os_str()));
        on(cores, &args);
        std::fs::read(&out).unwrap()
    };
    let (a, b) = (merged("all.json", None), merged("one.json", Some("0")));
    assert!(a == b, "the merges differ");
}
