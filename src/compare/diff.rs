//! Two reports of one program compared ([`pair_diff`]): per device, per direction and path, the
//! calls, bytes, time and GB/s before and after; bytes that moved from one path to another; the
//! kernels; the busy time and the overlap; the findings that went away, appeared or remained,
//! and for each one that went, whether the time it promised to save was saved. What is noise is
//! [`super::figure`]'s to say.

use super::figure::{Band, Figure, Sense, Verdict};
use super::findings::{FindingDiff, findings_diff};
use crate::report::{DeviceReport, KernelRow, Report, Row};
use serde::Serialize;
use std::collections::BTreeSet;

/// One row of a transfers or operations table, both sides.
#[derive(Debug, Clone, Serialize)]
pub struct RowDiff {
    /// `Map`, `Unmap`, … (operations); absent for transfers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub direction: String,
    pub path: String,
    pub calls: Figure,
    pub bytes: Figure,
    /// Device time: the cost model's when the device is projected, else measured (sampled
    /// commands' estimate included).
    pub time_ns: Figure,
    pub median_gbps: Figure,
}

/// Bytes that left one path of a direction for another (reads and writes: the transfers table
/// less map/unmap, migrate, fill and copy).
#[derive(Debug, Clone, Serialize)]
pub struct Move {
    pub direction: String,
    pub from: String,
    pub to: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct KernelDiff {
    pub name: String,
    pub calls: Figure,
    pub device_ns: Figure,
    pub median_ns: Figure,
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceDiff {
    pub index: u32,
    pub name: String,
    /// The other side's name, when it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_after: Option<String>,
    /// The rule set whose cost model gives the times (the device was traced under forced
    /// rules), when it does on both sides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projected: Option<String>,
    pub transfers: Vec<RowDiff>,
    pub operations: Vec<RowDiff>,
    pub moved: Vec<Move>,
    /// The transfers table's time, summed.
    pub transfer_ns: Figure,
    pub kernels: Vec<KernelDiff>,
    pub busy_ns: Figure,
    pub overlap_ns: Figure,
}

/// One program's run before and after.
#[derive(Debug, Clone, Serialize)]
pub struct PairDiff {
    pub program: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program_after: Option<String>,
    pub pid_before: u32,
    pub pid_after: u32,
    /// Runs compared on each side (several files of the program: run-to-run noise measured).
    pub runs_before: usize,
    pub runs_after: usize,
    /// The sides (`before`, `after`) with a run whose trace was cut short: their figures stop at
    /// its last event.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cut_short: Vec<String>,
    pub wall_ns: Figure,
    pub devices: Vec<DeviceDiff>,
    /// Devices on one side only: (index, name, on the side `before` or `after`).
    pub devices_alone: Vec<(u32, String, String)>,
    pub findings: Vec<FindingDiff>,
    /// The change as a whole: `better` when something got better beyond the noise (a misuse or a
    /// finding gone, a device's transfer time down, a kernel faster, the wall time) and nothing
    /// worse; `worse` the other way round; `changed` when both; `same` when neither.
    pub overall: Verdict,
}

/// Compares the runs `before` of a program with its runs `after` (each side one run or more; the
/// findings, the moves and the devices are the first run's).
pub fn pair_diff(before: &[&Report], after: &[&Report]) -> PairDiff {
    let (b0, a0) = (before[0], after[0]);
    let mut devices = Vec::new();
    let mut alone = Vec::new();
    fn runs_of<'a>(side: &[&'a Report], index: u32) -> Vec<&'a DeviceReport> {
        (side.iter())
            .filter_map(|r| r.devices.iter().find(|d| d.index == index))
            .collect()
    }
    for b in &b0.devices {
        match a0.devices.iter().find(|a| a.index == b.index) {
            Some(_) => devices.push(device_diff(
                &runs_of(before, b.index),
                &runs_of(after, b.index),
            )),
            None => alone.push((b.index, b.name.clone(), "before".to_string())),
        }
    }
    for a in &a0.devices {
        if !b0.devices.iter().any(|b| b.index == a.index) {
            alone.push((a.index, a.name.clone(), "after".to_string()));
        }
    }
    let findings = findings_diff(before, after);
    let wall = |side: &[&Report]| side.iter().map(|r| r.wall_ns as f64).collect::<Vec<_>>();
    let wall_ns = Figure::measured(&wall(before), &wall(after), Sense::MoreIsWorse, false, 0.0);
    let overall = overall(&findings, &devices, &wall_ns);
    PairDiff {
        program: b0.program.clone(),
        program_after: (a0.program != b0.program).then(|| a0.program.clone()),
        pid_before: b0.pid,
        pid_after: a0.pid,
        runs_before: before.len(),
        runs_after: after.len(),
        cut_short: [("before", before), ("after", after)]
            .iter()
            .filter(|(_, side)| side.iter().any(|r| r.cut_short))
            .map(|(name, _)| name.to_string())
            .collect(),
        wall_ns,
        devices,
        devices_alone: alone,
        findings,
        overall,
    }
}

/// The change as a whole (see [`PairDiff::overall`]). A finding that is new counts against the
/// after side only when it is a misuse: a new opportunity is not a regression, and the time it
/// names is in the transfer time judged beside it.
fn overall(findings: &[FindingDiff], devices: &[DeviceDiff], wall: &Figure) -> Verdict {
    // The wall time, a device's transfer time or a kernel's, judged `v`.
    let figures = |v: Verdict| {
        wall.verdict == v
            || (devices.iter()).any(|d| {
                d.transfer_ns.verdict == v || d.kernels.iter().any(|k| k.device_ns.verdict == v)
            })
    };
    let better = findings.iter().any(|f| f.state == Verdict::Gone) || figures(Verdict::Better);
    let worse =
        findings.iter().any(|f| f.state == Verdict::New && f.misuse) || figures(Verdict::Worse);
    match (better, worse) {
        (true, false) => Verdict::Better,
        (false, true) => Verdict::Worse,
        (true, true) => Verdict::Changed,
        (false, false) => Verdict::Same,
    }
}

/// A row's time: projected when the device's times are the model's, else measured with the
/// sampled commands' estimate; and the margin of that estimate, ns.
fn row_time(r: &Row, projected: bool) -> (f64, f64) {
    let margin = match (projected, r.sampled) {
        (false, Some(s)) => s.margin().unwrap_or(1.0) * s.estimated_ns.unwrap_or(0) as f64,
        _ => 0.0,
    };
    (r.time_ns(projected) as f64, margin)
}

/// A row in each run of a side that has it.
type RowRuns<'a> = Vec<&'a Row>;

fn row_diff(b: &RowRuns, a: &RowRuns, projected: bool) -> RowDiff {
    let some = b.first().or(a.first()).expect("a row on one side at least");
    let vals =
        |rs: &RowRuns, f: &dyn Fn(&Row) -> f64| rs.iter().map(|r| f(r)).collect::<Vec<f64>>();
    let calls = Figure::exact(
        &vals(b, &|r| r.calls as f64),
        &vals(a, &|r| r.calls as f64),
        Sense::Neutral,
    );
    let bytes = Figure::exact(
        &vals(b, &|r| r.bytes as f64),
        &vals(a, &|r| r.bytes as f64),
        Sense::Neutral,
    );
    let bands = |rs: &RowRuns| -> Vec<Band> {
        rs.iter()
            .filter_map(|r| Band::new(r.median_gbps, r.p10_gbps, r.p90_gbps))
            .collect()
    };
    let (bb, ab) = (bands(b), bands(a));
    let overlap = Band::any_overlap(&bb, &ab);
    let medians = |bs: &[Band]| bs.iter().map(|x| x.median).collect::<Vec<f64>>();
    let median_gbps = if projected {
        Figure::exact(&medians(&bb), &medians(&ab), Sense::MoreIsBetter)
    } else {
        Figure::measured(
            &medians(&bb),
            &medians(&ab),
            Sense::MoreIsBetter,
            overlap,
            0.0,
        )
    };
    let times = |rs: &RowRuns| {
        rs.iter()
            .map(|r| row_time(r, projected))
            .collect::<Vec<_>>()
    };
    let (tb, ta) = (times(b), times(a));
    let margin = |t: &[(f64, f64)]| t.iter().map(|x| x.1).fold(0.0, f64::max);
    let firsts = |t: &[(f64, f64)]| t.iter().map(|x| x.0).collect::<Vec<f64>>();
    let same_work = !calls.verdict.changed() && !bytes.verdict.changed();
    let time_ns = if projected {
        Figure::exact(&firsts(&tb), &firsts(&ta), Sense::MoreIsWorse)
    } else {
        let m = margin(&tb) + margin(&ta);
        Figure::measured(
            &firsts(&tb),
            &firsts(&ta),
            Sense::MoreIsWorse,
            same_work && overlap,
            m,
        )
    };
    RowDiff {
        kind: some.kind.clone(),
        direction: some.direction.clone(),
        path: some.path.clone(),
        calls,
        bytes,
        time_ns,
        median_gbps,
    }
}

/// The rows of a table in every run, matched by (kind, direction, path), in the first run
/// before's order and then the new ones.
fn rows_diff(b: &[&[Row]], a: &[&[Row]], projected: bool) -> Vec<RowDiff> {
    type Key = (Option<String>, String, String);
    let key = |r: &Row| -> Key { (r.kind.clone(), r.direction.clone(), r.path.clone()) };
    let mut keys: Vec<Key> = Vec::new();
    for r in b.iter().chain(a).flat_map(|t| t.iter()) {
        if !keys.contains(&key(r)) {
            keys.push(key(r));
        }
    }
    fn runs<'a>(side: &[&'a [Row]], k: &Key, key: impl Fn(&Row) -> Key) -> Vec<&'a Row> {
        side.iter()
            .filter_map(|t| t.iter().find(|r| &key(r) == k))
            .collect()
    }
    // A row that ran in only some runs of a side counts as absent in the others (its calls 0).
    keys.iter()
        .map(|k| row_diff(&runs(b, k, key), &runs(a, k, key), projected))
        .collect()
}

/// Bytes of the reads and writes (transfers less operations) by (direction, path).
fn plain_bytes(d: &DeviceReport) -> Vec<((String, String), i128)> {
    let mut out: Vec<((String, String), i128)> = (d.transfers.iter())
        .map(|r| ((r.direction.clone(), r.path.clone()), r.bytes as i128))
        .collect();
    for o in &d.operations {
        if let Some(e) = out
            .iter_mut()
            .find(|e| e.0 == (o.direction.clone(), o.path.clone()))
        {
            e.1 -= o.bytes as i128;
        }
    }
    out
}

/// Where the reads' and writes' bytes moved between paths of a direction: what each path lost
/// goes to the paths that gained, largest first.
fn moves(b: &DeviceReport, a: &DeviceReport) -> Vec<Move> {
    let (pb, pa) = (plain_bytes(b), plain_bytes(a));
    let get = |v: &[((String, String), i128)], k: &(String, String)| {
        v.iter().find(|e| &e.0 == k).map_or(0, |e| e.1.max(0))
    };
    let keys: BTreeSet<(String, String)> = pb.iter().chain(&pa).map(|e| e.0.clone()).collect();
    let dirs: BTreeSet<String> = keys.iter().map(|k| k.0.clone()).collect();
    let mut out = Vec::new();
    for dir in dirs {
        let mut lost: Vec<(String, i128)> = Vec::new();
        let mut gained: Vec<(String, i128)> = Vec::new();
        for k in keys.iter().filter(|k| k.0 == dir) {
            let d = get(&pa, k) - get(&pb, k);
            if d < 0 {
                lost.push((k.1.clone(), -d));
            } else if d > 0 {
                gained.push((k.1.clone(), d));
            }
        }
        lost.sort_by_key(|x| std::cmp::Reverse(x.1));
        gained.sort_by_key(|x| std::cmp::Reverse(x.1));
        for (from, mut left) in lost {
            for (to, room) in gained.iter_mut() {
                let n = left.min(*room);
                if n > 0 {
                    out.push(Move {
                        direction: dir.clone(),
                        from: from.clone(),
                        to: to.clone(),
                        bytes: n as u64,
                    });
                    left -= n;
                    *room -= n;
                }
            }
        }
    }
    out
}

fn kernel_diff(b: &[&KernelRow], a: &[&KernelRow]) -> KernelDiff {
    let some = b
        .first()
        .or(a.first())
        .expect("a kernel on one side at least");
    let bands = |ks: &[&KernelRow]| -> Vec<Band> {
        let f = |v: Option<u64>| v.map(|v| v as f64);
        ks.iter()
            .filter_map(|k| Band::new(f(k.median_ns), f(k.p10_ns), f(k.p90_ns)))
            .collect()
    };
    let (bb, ab) = (bands(b), bands(a));
    let overlap = Band::any_overlap(&bb, &ab);
    let vals = |ks: &[&KernelRow], f: &dyn Fn(&KernelRow) -> f64| {
        ks.iter().map(|k| f(k)).collect::<Vec<f64>>()
    };
    let calls = Figure::exact(
        &vals(b, &|k| k.calls as f64),
        &vals(a, &|k| k.calls as f64),
        Sense::Neutral,
    );
    let same = !calls.verdict.changed();
    let total =
        |k: &KernelRow| (k.device_ns + k.sampled.and_then(|s| s.estimated_ns).unwrap_or(0)) as f64;
    let medians = |bs: &[Band]| bs.iter().map(|x| x.median).collect::<Vec<f64>>();
    KernelDiff {
        name: some.name.clone(),
        device_ns: Figure::measured(
            &vals(b, &total),
            &vals(a, &total),
            Sense::MoreIsWorse,
            same && overlap,
            0.0,
        ),
        median_ns: Figure::measured(
            &medians(&bb),
            &medians(&ab),
            Sense::MoreIsWorse,
            overlap,
            0.0,
        ),
        calls,
    }
}

/// One device in each run before and after (the first run's is the one shown).
fn device_diff(b: &[&DeviceReport], a: &[&DeviceReport]) -> DeviceDiff {
    let (b0, a0) = (b[0], a[0]);
    let projected = match (&b0.projection, &a0.projection) {
        (Some(x), Some(y))
            if b0.times_projected() && a0.times_projected() && x.rules == y.rules =>
        {
            Some(x.rules.clone())
        }
        _ => None,
    };
    let p = projected.is_some();
    fn tables<'a>(side: &[&'a DeviceReport], ops: bool) -> Vec<&'a [Row]> {
        (side.iter())
            .map(|d| {
                if ops {
                    &d.operations[..]
                } else {
                    &d.transfers[..]
                }
            })
            .collect()
    }
    let (tb, ta) = (tables(b, false), tables(a, false));
    let (ob, oa) = (tables(b, true), tables(a, true));
    let transfers = rows_diff(&tb, &ta, p);
    let operations = rows_diff(&ob, &oa, p);
    let mut names: Vec<String> = Vec::new();
    for k in b.iter().chain(a).flat_map(|d| &d.kernels) {
        if !names.contains(&k.name) {
            names.push(k.name.clone());
        }
    }
    fn krows<'a>(side: &[&'a DeviceReport], name: &str) -> Vec<&'a KernelRow> {
        (side.iter())
            .filter_map(|d| d.kernels.iter().find(|k| k.name == name))
            .collect()
    }
    let kernels: Vec<KernelDiff> = (names.iter())
        .map(|n| kernel_diff(&krows(b, n), &krows(a, n)))
        .collect();
    fn quiet<'a>(mut figs: impl Iterator<Item = &'a Figure>) -> bool {
        figs.all(|f| !f.verdict.changed() && f.verdict != Verdict::Unjudged)
    }
    // A sum over runs: the run's rows' times summed, judged as a measured figure of its own; with
    // one run a side, noise when each of its rows is.
    let sum_of = |tables: &[&[Row]]| -> Vec<f64> {
        (tables.iter())
            .filter(|t| !t.is_empty())
            .map(|t| t.iter().map(|r| row_time(r, p).0).sum())
            .collect()
    };
    let rows_quiet = quiet(transfers.iter().map(|r| &r.time_ns));
    let transfer_ns = if p {
        Figure::exact(&sum_of(&tb), &sum_of(&ta), Sense::MoreIsWorse)
    } else {
        Figure::measured(
            &sum_of(&tb),
            &sum_of(&ta),
            Sense::MoreIsWorse,
            rows_quiet,
            0.0,
        )
    };
    let all_quiet = rows_quiet
        && quiet(operations.iter().map(|r| &r.time_ns))
        && quiet(kernels.iter().map(|k| &k.device_ns));
    let busy = |side: &[&DeviceReport], f: fn(&crate::report::Busy) -> u64| -> Vec<f64> {
        side.iter()
            .filter_map(|d| d.busy.map(|x| f(&x) as f64))
            .collect()
    };
    DeviceDiff {
        index: b0.index,
        name: b0.name.clone(),
        name_after: (a0.name != b0.name).then(|| a0.name.clone()),
        projected,
        moved: moves(b0, a0),
        transfers,
        operations,
        transfer_ns,
        kernels,
        busy_ns: Figure::measured(
            &busy(b, |x| x.busy_ns),
            &busy(a, |x| x.busy_ns),
            Sense::Neutral,
            all_quiet,
            0.0,
        ),
        overlap_ns: Figure::measured(
            &busy(b, |x| x.overlap_ns),
            &busy(a, |x| x.overlap_ns),
            Sense::MoreIsBetter,
            all_quiet,
            0.0,
        ),
    }
}
