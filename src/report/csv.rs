//! `clxfer report --format csv`: one table as CSV, for a spreadsheet or pandas. `commands` has a
//! row per enqueued command, joined from its host and device slices; `transfers`, `operations`
//! and `findings` are the report's tables. Every table starts with the process (`pid`,
//! `program`), so the tables of several traces or of a merge stack into one.

use super::Report;
use super::from_trace::process_of;
use crate::event::Event;
use crate::json::read::us_json;
use crate::trace::read::{ReadError, read_expanded_with};
use crate::vocab::schema as s;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::io::Write;

/// The tables, as `--table` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Commands,
    Transfers,
    Operations,
    Kernels,
    HostCalls,
    Findings,
}

impl Table {
    pub const WORDS: &'static [&'static str] = &[
        "commands",
        "transfers",
        "operations",
        "kernels",
        "host_calls",
        "findings",
    ];

    /// Every table, in [`Table::WORDS`]' order.
    pub const ALL: [Table; 6] = [
        Table::Commands,
        Table::Transfers,
        Table::Operations,
        Table::Kernels,
        Table::HostCalls,
        Table::Findings,
    ];

    pub fn parse(word: &str) -> Option<Table> {
        Table::WORDS
            .iter()
            .position(|w| *w == word)
            .map(|at| Table::ALL[at])
    }

    /// Its name, as `--table` takes it.
    pub fn word(self) -> &'static str {
        Table::WORDS[self as usize]
    }
}

/// How a column's cells are typed: Parquet stores them so (`clxfer export`); CSV writes every
/// cell as text, an empty one for none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Int,
    Float,
    Text,
    Bool,
}

use Type::{Bool, Float, Int, Text};

/// The columns of `commands`; docs/TRACE.md lists them from here.
pub const COMMAND_COLUMNS: &[(&str, Type, &str)] = &[
    (
        "pid",
        Int,
        "The process (in a merge, as the trace start says).",
    ),
    (
        "command",
        Int,
        "The command's number in its process (0: not timed).",
    ),
    ("api", Text, "The OpenCL entry point."),
    ("kernel", Text, "A kernel's function name."),
    ("queue", Text, "`device #D queue #Q`."),
    ("direction", Text, "`H2D`, `D2H`, `D2D`, `H2H`."),
    ("path", Text, "How the bytes moved (the trace's `path`)."),
    ("bytes", Int, "Bytes moved."),
    ("blocking", Bool, "`true` or `false`."),
    (
        "host_memory",
        Text,
        "What the host pointer is (`pageable`, `mapped`, …).",
    ),
    ("rules", Text, "The rule set that classified it."),
    ("rule_ids", Text, "The rules applied, space-separated."),
    (
        "host_start_us",
        Float,
        "The call's start, µs on the trace's clock.",
    ),
    ("host_us", Float, "Time inside the call, µs."),
    (
        "device_start_us",
        Float,
        "The command's start on the device, µs (empty: no device slice).",
    ),
    ("device_us", Float, "Its device time, µs."),
    ("device_gbps", Float, "Bytes over the device time, GB/s."),
    (
        "device_time",
        Text,
        "`unavailable` when the driver gave no usable time.",
    ),
    (
        "error",
        Text,
        "The driver's error code, when it refused the call.",
    ),
];

/// The columns of `transfers` and `operations`.
const TRANSFER_COLUMNS: &[(&str, Type)] = &[
    ("pid", Int),
    ("program", Text),
    ("device", Int),
    ("device_name", Text),
    ("rules", Text),
    ("kind", Text),
    ("direction", Text),
    ("path", Text),
    ("calls", Int),
    ("bytes", Int),
    ("device_ns", Int),
    ("host_ns", Int),
    ("waited_ns", Int),
    ("median_gbps", Float),
    ("p90_gbps", Float),
    ("projected_ns", Int),
    ("total_ns", Int),
];

const KERNEL_COLUMNS: &[(&str, Type)] = &[
    ("pid", Int),
    ("program", Text),
    ("device", Int),
    ("kernel", Text),
    ("calls", Int),
    ("device_ns", Int),
    ("median_ns", Int),
    ("host_ns", Int),
    ("untimed", Int),
    ("total_ns", Int),
];

const HOST_CALL_COLUMNS: &[(&str, Type)] = &[
    ("pid", Int),
    ("program", Text),
    ("api", Text),
    ("calls", Int),
    ("total_ns", Int),
    ("wait_ns", Int),
    ("median_ns", Int),
    ("max_ns", Int),
];

const FINDING_COLUMNS: &[(&str, Type)] = &[
    ("pid", Int),
    ("program", Text),
    ("rank", Int),
    ("device", Int),
    ("kind", Text),
    ("saving_ns", Int),
    ("title", Text),
    ("evidence", Text),
    ("fix", Text),
    ("saves", Text),
];

/// The columns of `table`, in order: their names and types.
pub fn columns(table: Table) -> Vec<(&'static str, Type)> {
    match table {
        Table::Commands => COMMAND_COLUMNS.iter().map(|c| (c.0, c.1)).collect(),
        Table::Transfers | Table::Operations => TRANSFER_COLUMNS.to_vec(),
        Table::Kernels => KERNEL_COLUMNS.to_vec(),
        Table::HostCalls => HOST_CALL_COLUMNS.to_vec(),
        Table::Findings => FINDING_COLUMNS.to_vec(),
    }
}

/// docs/TRACE.md's section on the CSV tables.
pub fn markdown() -> String {
    let mut out = String::from(
        "\n## CSV: `clxfer report --format csv`\n\n\
         For a spreadsheet or pandas (`pd.read_csv`): one table of every trace named, one header \
         line, RFC 4180 quoting. `--table` picks it:\n\n\
         - `commands` (the default): a row per enqueued command, in the order of the calls, its \
         host slice and its device slice joined by `command` (a command still waiting for its \
         device slice when 65,536 rows after it wait too is written without it). Columns \
         below.\n\
         - `transfers` and `operations`: the report's tables, a row per device, direction and \
         path (and in `operations` kind); `transfers` counts every command that moved bytes, \
         maps and unmaps included, and `operations` the same map, unmap, migrate, fill and \
         copy commands again by kind, so a sum over both counts those twice (`pid, program, device, \
         device_name, rules, kind, direction, path, calls, bytes, device_ns, host_ns, waited_ns, \
         median_gbps, p90_gbps, projected_ns, total_ns`; `kind` is empty in `transfers`; \
         `waited_ns` is the part of `host_ns` blocking calls waited for the commands ahead of \
         theirs; `projected_ns` is the cost model's device time, empty where the device is not \
         projected, and under forced rules the GB/s are projected too; `total_ns` is the time \
         every total adds: the projection where there is one, else `device_ns` with the \
         estimate for the calls sampling left untimed).\n\
         - `kernels`: `pid, program, device, kernel, calls, device_ns, median_ns, host_ns, \
         untimed, total_ns` (`total_ns`: with the estimate for the launches sampling left \
         untimed).\n\
         - `host_calls`: `pid, program, api, calls, total_ns, wait_ns, median_ns, max_ns`: the \
         program's calls per entry point on all its threads, `wait_ns` the time of the calls \
         that waited for commands (blocking transfers, `clFinish`, `clWaitForEvents`).\n\
         - `findings`: `pid, program, rank, device, kind, saving_ns, title, evidence, fix, \
         saves` (evidence lines joined by ` | `).\n\n\
         | `commands` column | meaning |\n|---|---|\n",
    );
    for (column, _, doc) in COMMAND_COLUMNS {
        out.push_str(&format!("| `{column}` | {doc} |\n"));
    }
    out
}

/// Rows waiting for their other half before they are written, at most; past it the oldest is
/// written with what it has (a command that never completed must not hold every row after it).
const WAITING: usize = 1 << 16;

/// Writes `table` of the trace at `path` to `out` as CSV, its header first if `header`;
/// `reports` are its processes' reports.
pub fn write(
    table: Table,
    path: &std::path::Path,
    reports: &[Report],
    header: bool,
    out: &mut dyn Write,
) -> Result<(), String> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out);
    let fail = |e: csv::Error| e.to_string();
    let names: Vec<&str> = columns(table).iter().map(|c| c.0).collect();
    // The header before the first row (another tool's trace gets the one-line error and
    // nothing on stdout), or alone for a table with none.
    let mut header = header;
    rows(table, path, reports, |row| {
        if std::mem::take(&mut header) {
            w.write_record(&names).map_err(fail)?;
        }
        w.write_record(&row).map_err(fail)
    })?;
    if header {
        w.write_record(&names).map_err(fail)?;
    }
    w.flush().map_err(|e| e.to_string())
}

/// Hands each row of `table` of the trace at `path` to `row`, cells in [`columns`]' order;
/// `reports` are its processes' reports (the `commands` table is read from the trace itself).
pub fn rows(
    table: Table,
    path: &std::path::Path,
    reports: &[Report],
    mut row: impl FnMut(Vec<String>) -> Result<(), String>,
) -> Result<(), String> {
    match table {
        Table::Commands => {
            let mut join = Join::default();
            let mut failed = None;
            read_expanded_with(path, |_, e| {
                for r in join.event(&e) {
                    if failed.is_none() {
                        failed = row(r).err();
                    }
                }
            })
            .map_err(|ReadError(e)| e)?;
            if join.pids.is_empty() {
                return Err(format!(
                    "{}: not a clxfer trace (no `{}` event)",
                    path.display(),
                    s::TRACE_START
                ));
            }
            if let Some(e) = failed {
                return Err(e);
            }
            for r in join.rest() {
                row(r)?;
            }
        }
        Table::Transfers | Table::Operations => {
            for r in reports {
                for d in &r.devices {
                    let rows = if table == Table::Transfers {
                        &d.transfers
                    } else {
                        &d.operations
                    };
                    for t in rows {
                        let g = |v: Option<f64>| v.map(|g| format!("{g:.3}")).unwrap_or_default();
                        row(vec![
                            r.pid.to_string(),
                            r.program.clone(),
                            d.index.to_string(),
                            d.name.clone(),
                            d.rules.clone(),
                            t.kind.clone().unwrap_or_default(),
                            t.direction.clone(),
                            t.path.clone(),
                            t.calls.to_string(),
                            t.bytes.to_string(),
                            t.device_ns.to_string(),
                            t.host_ns.to_string(),
                            t.waited_ns.to_string(),
                            g(t.median_gbps),
                            g(t.p90_gbps),
                            t.projected_ns.map(|n| n.to_string()).unwrap_or_default(),
                            t.total_ns.to_string(),
                        ])?;
                    }
                }
            }
        }
        Table::Kernels => {
            for r in reports {
                for d in &r.devices {
                    for k in &d.kernels {
                        row(vec![
                            r.pid.to_string(),
                            r.program.clone(),
                            d.index.to_string(),
                            k.name.clone(),
                            k.calls.to_string(),
                            k.device_ns.to_string(),
                            k.median_ns.map(|m| m.to_string()).unwrap_or_default(),
                            k.host_ns.to_string(),
                            k.untimed.to_string(),
                            k.time_ns().to_string(),
                        ])?;
                    }
                }
            }
        }
        Table::HostCalls => {
            for r in reports {
                for c in &r.host_calls {
                    let n = [c.calls, c.total_ns, c.wait_ns, c.median_ns, c.max_ns];
                    let mut cells = vec![r.pid.to_string(), r.program.clone(), c.api.clone()];
                    cells.extend(n.iter().map(u64::to_string));
                    row(cells)?;
                }
            }
        }
        Table::Findings => {
            for r in reports {
                for (rank, f) in r.findings.iter().enumerate() {
                    row(vec![
                        r.pid.to_string(),
                        r.program.clone(),
                        (rank + 1).to_string(),
                        f.device.to_string(),
                        f.kind.to_string(),
                        f.saving_ns.to_string(),
                        f.title.clone(),
                        f.evidence.join(" | "),
                        f.fix.clone(),
                        f.saves.clone(),
                    ])?;
                }
            }
        }
    }
    Ok(())
}

/// A command's row, as its host slice gives it, and whether its device half has come (or will
/// not: command 0 is not timed).
struct Waiting {
    row: Vec<String>,
    done: bool,
    key: (u64, u64),
}

/// Joins host and device slices into rows, in the order of the calls.
#[derive(Default)]
struct Join {
    rows: VecDeque<Waiting>,
    /// The sequence number of `rows[0]`.
    first: u64,
    /// (process, command) → sequence number, for rows waiting for their device slice.
    at: HashMap<(u64, u64), u64>,
    /// Device halves that came before their host slice.
    early: HashMap<(u64, u64), [String; 4]>,
    /// A process's pid as its trace start says (a merge may have renumbered its events' pids).
    pids: HashMap<u64, String>,
}

/// A JSON value as a cell: strings bare, numbers as written, nothing for null.
fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(t)) => t.clone(),
        Some(v) => v.to_string(),
    }
}

impl Join {
    /// Takes one event; returns the rows now complete, in order.
    fn event(&mut self, e: &Event) -> Vec<Vec<String>> {
        let pid = u64::from(e.pid);
        let args = &e.args;
        if e.name == s::TRACE_START {
            self.pids
                .insert(process_of(pid), cell(args.get(s::PID.name)));
        }
        // Enqueues: the timed ones' slices (category `enqueue`), and untimed ones' host slices
        // (a queue and a command number: `clFinish` names a queue and no command).
        let is_slice = e.is_slice()
            && (e.cat == s::CAT_ENQUEUE
                || (args.get(s::QUEUE.name).is_some() && args.get(s::COMMAND.name).is_some()));
        if !is_slice {
            return Vec::new();
        }
        let arg = |k: s::Key| cell(args.get(k.name));
        let id = args
            .get(s::COMMAND.name)
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let key = (process_of(pid), id);
        let (ts, dur) = (us_json(e.ts), us_json(e.dur()));
        if e.on_device() {
            let device = [
                cell(Some(&ts)),
                cell(Some(&dur)),
                arg(s::DEVICE_GBPS),
                arg(s::DEVICE_TIME),
            ];
            match self.at.remove(&key) {
                Some(seq) => {
                    let w = &mut self.rows[(seq - self.first) as usize];
                    fill(&mut w.row, device);
                    w.done = true;
                }
                None if self.early.len() < WAITING => {
                    self.early.insert(key, device);
                }
                None => {}
            }
        } else {
            let ids = args.get(s::RULE_IDS.name).and_then(Value::as_array);
            let rule_ids: Vec<&str> = ids
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut row = vec![
                self.pids
                    .get(&key.0)
                    .cloned()
                    .unwrap_or_else(|| key.0.to_string()),
                arg(s::COMMAND),
                arg(s::API),
                arg(s::KERNEL),
                arg(s::QUEUE),
                arg(s::DIRECTION),
                arg(s::PATH),
                arg(s::BYTES),
                arg(s::BLOCKING),
                arg(s::HOST_MEMORY),
                arg(s::RULES),
                rule_ids.join(" "),
                cell(Some(&ts)),
                cell(Some(&dur)),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                arg(s::ERROR),
            ];
            let mut done = id == 0 || args.get(s::DEVICE_TIME.name).is_some();
            if let Some(device) = self.early.remove(&key) {
                fill(&mut row, device);
                done = true;
            } else if !done {
                self.at.insert(key, self.first + self.rows.len() as u64);
            }
            self.rows.push_back(Waiting { row, done, key });
        }
        self.ready(WAITING)
    }

    /// The rows at the front that are complete, and the oldest beyond `keep` rows.
    fn ready(&mut self, keep: usize) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        while let Some(front) = self.rows.front() {
            if !front.done && self.rows.len() <= keep {
                break;
            }
            let w = self.rows.pop_front().expect("a front row");
            if !w.done {
                self.at.remove(&w.key);
            }
            self.first += 1;
            out.push(w.row);
        }
        out
    }

    /// Every row left: commands whose device slice never came (incomplete at the end).
    fn rest(&mut self) -> Vec<Vec<String>> {
        self.ready(0)
    }
}

/// A row's device columns (`device_start_us` to `device_time`).
fn fill(row: &mut [String], device: [String; 4]) {
    let [start, dur, gbps, time] = device;
    row[14] = start;
    row[15] = dur;
    row[16] = gbps;
    row[17] = time;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn host(pid: u64, id: u64, ts: f64) -> Event {
        ev(
            json!({"name": "w", "cat": "enqueue", "ph": "X", "pid": pid, "tid": pid, "ts": ts,
               "dur": 2.5, "args": {"api": "clEnqueueWriteBuffer", "command": id,
               "queue": "device #1 queue #1", "direction": "H2D", "path": "staged",
               "bytes": 4096, "blocking": false, "rule_ids": ["any.pageable", "nvidia.pageable"]}}),
        )
    }

    fn ev(v: Value) -> Event {
        crate::json::read::from_json(v).unwrap()
    }

    fn device(pid: u64, id: u64, ts: f64) -> Event {
        let dpid = crate::vocab::schema::device_pid(pid as u32, 1);
        ev(
            json!({"name": "Write", "cat": "enqueue", "ph": "X", "pid": dpid, "tid": 1024,
               "ts": ts, "dur": 1.25, "args": {"command": id, "device_gbps": 3.277}}),
        )
    }

    /// What a case shows, its events, and for each event the rows it completes (their command
    /// numbers).
    type Case = (&'static str, Vec<Event>, Vec<Vec<&'static str>>);

    #[test]
    fn host_and_device_halves_join_in_call_order() {
        let cases: &[Case] = &[
            (
                "device after host, out of order: rows wait for the first",
                vec![
                    host(7, 1, 10.0),
                    host(7, 2, 11.0),
                    device(7, 2, 12.0),
                    device(7, 1, 13.0),
                ],
                vec![vec![], vec![], vec![], vec!["1", "2"]],
            ),
            (
                "device before host, and an untimed command 0 at once",
                vec![device(7, 3, 5.0), host(7, 3, 4.0), host(7, 0, 6.0)],
                vec![vec![], vec!["3"], vec!["0"]],
            ),
            (
                "two processes of a merge with the same command numbers",
                vec![
                    host(7, 1, 1.0),
                    host(8, 1, 2.0),
                    device(8, 1, 3.0),
                    device(7, 1, 4.0),
                ],
                vec![vec![], vec![], vec![], vec!["1", "1"]],
            ),
        ];
        for (what, events, want) in cases {
            let mut j = Join::default();
            for (e, want) in events.iter().zip(want) {
                let got: Vec<String> = j.event(e).into_iter().map(|r| r[1].clone()).collect();
                assert_eq!(&got, want, "{what}");
            }
            assert!(j.rest().is_empty(), "{what}");
        }
        let mut j = Join::default();
        j.event(&host(7, 1, 10.0));
        let row = j.event(&device(7, 1, 12.5)).remove(0);
        assert_eq!(row.len(), COMMAND_COLUMNS.len());
        assert_eq!(row[11], "any.pageable nvidia.pageable");
        assert_eq!(&row[12..17], ["10", "2.5", "12.5", "1.25", "3.277"]);
    }

    #[test]
    fn a_command_that_never_completes_is_written_at_the_end_without_device_time() {
        let mut j = Join::default();
        assert!(j.event(&host(7, 1, 1.0)).is_empty());
        assert!(
            j.event(&host(7, 0, 2.0)).is_empty(),
            "held behind command 1"
        );
        let rest = j.rest();
        assert_eq!(rest.len(), 2);
        assert_eq!(rest[0][14], "", "no device start");
        assert_eq!(Table::parse("findings"), Some(Table::Findings));
        assert_eq!(Table::parse("csv"), None);
    }
}
