//! Issue #59: `clxfer export` of a four-rank Open MPI job's traces (tests/programs/ranks.c, rank 1
//! staging), read back by DuckDB and by Dask (PyPI duckdb and dask on pyarrow, which
//! scripts/setup installs in target/duckdb-venv) as users query them: the rank with the most
//! staged bytes, every command of every rank, each table a directory of one file per trace (Dask
//! reads one only where the files' schemas agree), the same tables as CSV; a directory that
//! holds files already is refused.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// DuckDB's answer to `sql`, one row per line, cells joined by `|`.
fn duckdb(sql: &str) -> String {
    let python = root().join("target/duckdb-venv/bin/python");
    let script = "import sys, duckdb\n\
                  for row in duckdb.sql(sys.argv[1]).fetchall():\n    \
                  print('|'.join(str(c) for c in row))\n";
    let out = Command::new(&python)
        .args(["-c", script, sql])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/setup installs it)", python.display()));
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What a Python `script` run with Dask (in DuckDB's venv) prints, given `arg`.
fn dask(script: &str, arg: &Path) -> String {
    let python = root().join("target/duckdb-venv/bin/python");
    let out = Command::new(&python)
        .args(["-c", script])
        .arg(arg)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/setup installs it)", python.display()));
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn clxfer(args: &[&std::ffi::OsStr]) -> Run {
    let mut cmd = command(env!("CARGO_BIN_EXE_clxfer"), Load::None);
    cmd.args(args);
    run_cmd(cmd, Duration::from_secs(300))
}

fn export(traces: &Path, out: &Path, format: &str) -> Run {
    clxfer(&[
        "export".as_ref(),
        "--format".as_ref(),
        format.as_ref(),
        traces.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ])
}

#[test]
fn duckdb_reads_the_export_of_a_job() {
    let prog = program("ranks");
    let mut cmd = command("mpirun", Load::Layer);
    cmd.args(["--oversubscribe", "-np", "4"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("CLXFER_RULES", "nvidia")
        .arg(&prog);
    let job = run_cmd(cmd, Duration::from_secs(300));
    assert_eq!(job.code, Some(0), "{}", job.stderr);
    let traces = job.traces[0].parent().unwrap().to_path_buf();
    let out = fresh_dir("export").join("tables");
    let r = export(&traces, &out, "parquet");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("clxfer: exported"), "{}", r.stderr);
    let table = |t: &str| format!("read_parquet('{}/{t}/*.parquet')", out.display());

    // The README's query: the ranks with the most staged bytes.
    let staged = duckdb(&format!(
        "SELECT rank, sum(bytes) FROM {} WHERE path = 'staged' GROUP BY rank ORDER BY 2 DESC",
        table("transfers")
    ));
    assert_eq!(staged.lines().next(), Some("1|8388608"), "{staged}");
    assert_eq!(staged.lines().count(), 1, "{staged}");

    // Every command of every rank: as many rows as the CSV report's commands table, with each
    // rank's host, typed.
    let csv = clxfer(&[
        "report".as_ref(),
        "--format".as_ref(),
        "csv".as_ref(),
        traces.as_os_str(),
    ]);
    assert_eq!(csv.code, Some(0), "{}", csv.stderr);
    let csv_rows = csv.stdout.lines().count() - 1;
    let counts = duckdb(&format!(
        "SELECT count(*), count(DISTINCT rank), count(host), typeof(any_value(bytes)), \
         typeof(any_value(device_us)), typeof(any_value(blocking)) FROM {}",
        table("commands")
    ));
    assert_eq!(
        counts.trim(),
        format!("{csv_rows}|4|{csv_rows}|BIGINT|DOUBLE|BOOLEAN"),
        "{counts}"
    );
    // Outside a job, rank is null: mpirun's own trace (Open MPI's hwloc asks OpenCL for its
    // devices) is a process of no rank.
    let findings = duckdb(&format!(
        "SELECT rank, place, kind FROM {} WHERE rank IS NOT NULL ORDER BY rank, place",
        table("findings")
    ));
    assert!(
        findings.lines().any(|l| l.starts_with("1|1|")),
        "{findings}"
    );

    // Dask reads each table's directory as one dataframe (its files' schemas must agree, the
    // process of no rank among them): as many rows as DuckDB counts, and the same answer.
    let by_dask = dask(
        "import sys, os, dask.dataframe as dd\n\
         for t in sorted(os.listdir(sys.argv[1])):\n    \
         print(t, len(dd.read_parquet(os.path.join(sys.argv[1], t))))\n\
         df = dd.read_parquet(os.path.join(sys.argv[1], 'transfers'))\n\
         s = df[df.path == 'staged'].groupby('rank').bytes.sum().compute()\n\
         print('staged', '|'.join(f'{int(r)}|{int(b)}' for r, b in s.items()))\n",
        &out,
    );
    let tables = [
        "commands",
        "findings",
        "host_calls",
        "kernels",
        "operations",
        "transfers",
    ];
    for t in tables {
        let rows = duckdb(&format!("SELECT count(*) FROM {}", table(t)));
        assert!(
            by_dask.lines().any(|l| l == format!("{t} {}", rows.trim())),
            "{t}: DuckDB counts {rows}, Dask:\n{by_dask}"
        );
    }
    assert!(
        by_dask
            .lines()
            .any(|l| l == format!("staged {}", staged.trim())),
        "{by_dask}"
    );

    // The same tables as CSV read alike; an export never writes into files already there.
    let as_csv = fresh_dir("export").join("csv");
    assert_eq!(export(&traces, &as_csv, "csv").code, Some(0));
    let csv_staged = duckdb(&format!(
        "SELECT rank, sum(bytes) FROM read_csv_auto('{}/transfers/*.csv') WHERE path = 'staged' \
         GROUP BY rank ORDER BY 2 DESC",
        as_csv.display()
    ));
    assert_eq!(csv_staged, staged);
    let again = export(&traces, &out, "parquet");
    assert_eq!(again.code, Some(2), "{}", again.stderr);
    assert!(
        again.stderr.contains("holds files already"),
        "{}",
        again.stderr
    );
}
