//! One device's part of the report, from the sums the builder kept: its tables (transfers by
//! direction and path, operations by kind), kernels, busy time with the estimate for what
//! sampling left untimed, and memory peaks.

use super::acc::{Acc, DeviceAcc};
use super::facts::Kind;
use super::sampled::RowKey;
use super::timeline::Busy;
use super::{DeviceReport, QueueBusy, Row};
use crate::model::classification::{Direction, Path};
use std::collections::BTreeMap;

/// Kinds of command shown in the operations table.
const OPERATIONS: [Kind; 6] = [
    Kind::Create,
    Kind::Map,
    Kind::Unmap,
    Kind::Migrate,
    Kind::Fill,
    Kind::Copy,
];

/// The device's report; its busy time and queues' are `projected` where the run was projected
/// (forced rules with a cost model), else this device's timeline.
pub(super) fn device_report(
    d: &mut DeviceAcc,
    projected_busy: Option<(Busy, Vec<(u32, Busy)>)>,
) -> DeviceReport {
    let projected = d.projecting.is_some();
    let row = |kind: Option<Kind>, dir: Direction, path: Path, acc: &Acc| Row {
        kind: kind.map(|k| k.as_str().to_string()),
        direction: dir.as_str().into(),
        path: path.as_str().into(),
        calls: acc.calls,
        bytes: acc.bytes,
        device_ns: acc.device_ns,
        host_ns: acc.host_ns,
        waited_ns: acc.waited_ns,
        median_gbps: acc.gbps.quantile(0.5),
        p10_gbps: acc.gbps.quantile(0.1),
        p90_gbps: acc.gbps.quantile(0.9),
        projected_ns: projected.then_some(acc.projected_ns),
        compared: Some(acc.compared).filter(|c| c.calls > 0),
        total_ns: 0,
        timed: acc.timed,
        sampled: acc.sample.result(),
    };
    let row = |kind, dir, path, acc: &Acc| {
        let mut r = row(kind, dir, path, acc);
        r.total_ns = r.time_ns(projected);
        r
    };
    // A launch whose arguments moved is its kernel's time on the device (the timeline's), so its
    // kernel's row estimates it when sampling left it untimed: the transfers' part of the
    // estimate leaves launches out (`moves`), or the busy line would count them twice. A
    // projection replays the move apart from the kernel (`bounds::project`): its move stays a
    // transfer's.
    let replaces = d.projecting.is_some_and(|p| p.replaces);
    let mut moves: BTreeMap<(Direction, Path), super::sampled::Moments> = BTreeMap::new();
    let mut by_class: BTreeMap<(Direction, Path), Acc> = BTreeMap::new();
    for ((kind, dir, path), acc) in d.rows.iter() {
        if kind != Kind::Kernel || replaces {
            moves.entry((dir, path)).or_default().merge(&acc.sample);
        }
        let sum = by_class.entry((dir, path)).or_default();
        sum.calls += acc.calls;
        sum.bytes = sum.bytes.saturating_add(acc.bytes);
        sum.device_ns = sum.device_ns.saturating_add(acc.device_ns);
        sum.host_ns = sum.host_ns.saturating_add(acc.host_ns);
        sum.waited_ns = sum.waited_ns.saturating_add(acc.waited_ns);
        sum.gbps.merge(&acc.gbps);
        sum.projected_ns = sum.projected_ns.saturating_add(acc.projected_ns);
        sum.compared.merge(&acc.compared);
        sum.timed += acc.timed;
        sum.sample.merge(&acc.sample);
    }
    let transfers: Vec<Row> = by_class
        .iter()
        .map(|(&(dir, path), acc)| row(None, dir, path, acc))
        .collect();
    let kernels = d.kernels.rows();
    let estimated = |s: Option<super::Sampled>| s.and_then(|s| s.estimated_ns).unwrap_or(0);
    let busy_projected = projected_busy.is_some();
    let (busy, queues) = match projected_busy {
        Some((busy, queues)) => (Some(busy), queues),
        None => (d.timeline.busy(), d.timeline.queues()),
    };
    let moved = |dir: &Direction, path: &Path| moves.get(&(*dir, *path)).and_then(|m| m.result());
    let totals: (u64, u64) = (
        moves.values().map(|m| estimated(m.result())).sum(),
        kernels.iter().map(|k| estimated(k.sampled)).sum(),
    );
    let busy = busy.map(|b| b.with_estimate(totals.0, totals.1));
    // Each queue its part of the device's estimate, so that the queues' lines add up to it.
    let per_queue = d.untimed.estimates(|key| match key {
        RowKey::Transfer(dir, path) => moved(dir, path),
        RowKey::Kernel(name) => kernels.iter().find(|k| *k.name == **name)?.sampled,
    });
    let queues = match busy {
        Some(b) => with_estimates(queues, &b, totals, &per_queue),
        None => queues,
    };
    let mut operations: Vec<Row> = Vec::new();
    for kind in OPERATIONS {
        for ((k, dir, path), acc) in d.rows.iter() {
            if k == kind {
                operations.push(row(Some(kind), dir, path, acc));
            }
        }
    }
    DeviceReport {
        index: d.facts.index,
        name: d.facts.name.clone(),
        rules: d.facts.rules.clone(),
        auto_rules: d.facts.auto_rules.clone(),
        global_mem_bytes: d.facts.global_mem,
        judged_memory: Some(d.facts.memory(super::findings::rules_of(d)))
            .filter(|&(b, _)| b != d.facts.global_mem),
        projection: d.projecting.map(|p| super::Projection {
            rules: p.set.name.into(),
            on: p.cost.map_or("", |c| c.on).into(),
            replaces: p.replaces,
        }),
        transfers,
        operations,
        best_pinned_gbps: Direction::ALL
            .iter()
            .filter_map(|&dir| Some((dir.as_str().to_string(), d.best_pinned[dir as usize]?)))
            .collect(),
        kernels,
        busy,
        busy_projected,
        queues: {
            // By queue number, whichever completed first.
            let mut queues: Vec<QueueBusy> = (queues.into_iter())
                .map(|(queue, busy)| QueueBusy { queue, busy })
                .collect();
            queues.sort_by_key(|q| q.queue);
            queues
        },
        resident_peak_bytes: d.end.as_ref().map(|e| e.resident_peak),
        alloc_host_ptr_peak_bytes: d.end.as_ref().map(|e| e.alloc_host_ptr_peak),
        without_device_time: d.without_device_time,
        sampled_out: d.sampled,
        failed: d.failed,
        migrations: (crate::model::classification::When::ALL.iter())
            .zip(d.migrations)
            .filter(|(_, (calls, _))| *calls > 0)
            .map(|(when, (calls, bytes))| super::Migrations {
                moved: when.as_str().into(),
                calls,
                bytes,
            })
            .collect(),
        clock_mapping: d.end.as_ref().map(|e| e.clock.clone()),
    }
}

/// The queues' figures with their parts of `device`'s estimate, scaled as the device's own
/// parts are (the device takes its transfers' estimate first, within its span): `totals` are
/// the device's uncapped estimates (transfers, kernels), `per_queue` each queue's. A queue whose
/// commands sampling all left untimed is listed with its estimate alone.
fn with_estimates(
    mut queues: Vec<(u32, Busy)>,
    device: &Busy,
    totals: (u64, u64),
    per_queue: &BTreeMap<u32, (f64, f64)>,
) -> Vec<(u32, Busy)> {
    let transfer = totals.0.min(device.estimated_ns);
    let kernel = device.estimated_ns - transfer;
    let part = |ns: f64, of: u64, total: u64| match total {
        0 => 0,
        _ => (ns * of as f64 / total as f64).round() as u64,
    };
    for (&queue, &(t, k)) in per_queue {
        let (t, k) = (part(t, transfer, totals.0), part(k, kernel, totals.1));
        if t == 0 && k == 0 {
            continue;
        }
        match queues.iter().position(|q| q.0 == queue) {
            Some(at) => queues[at].1 = queues[at].1.plus_estimate(t, k),
            None if queues.len() < super::timeline::QUEUES => {
                queues.push((queue, Busy::default().plus_estimate(t, k)))
            }
            None => {}
        }
    }
    queues
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_share_the_device_estimate_as_the_device_takes_it() {
        let timed = Busy {
            span_ns: 1_000,
            busy_ns: 100,
            transfer_ns: 100,
            ..Busy::default()
        };
        let per_queue = BTreeMap::from([(1, (40.0, 10.0)), (2, (40.0, 10.0))]);
        // (device's room for the estimate, queue 1's and 2's (busy, transfers, kernels, estimated))
        let cases = [
            // Room for all of it: each queue its own.
            (900, [(150, 140, 10, 50), (50, 40, 10, 50)]),
            // Room for 60 of the 100: the transfers' first, scaled alike on each queue.
            (60, [(130, 130, 0, 30), (30, 30, 0, 30)]),
        ];
        for (room, want) in cases {
            let device = Busy {
                span_ns: 100 + room,
                ..timed
            }
            .with_estimate(80, 20);
            let queues = vec![(1, timed)];
            let got_busy = with_estimates(queues, &device, (80, 20), &per_queue);
            let got: Vec<_> = (got_busy.iter())
                .map(|(_, b)| (b.busy_ns, b.transfer_ns, b.kernel_ns, b.estimated_ns))
                .collect();
            assert_eq!(got, want, "room {room}");
            let parts: u64 = got.iter().map(|g| g.3).sum();
            assert_eq!(parts, device.estimated_ns);
            // The kernels' part is kept apart (what the lines mark `~`): here all of their
            // kernel time, the queues having timed no kernel.
            let kernels: Vec<u64> = (got_busy.iter())
                .map(|(_, b)| b.estimated_kernel_ns)
                .collect();
            assert_eq!(kernels, want.map(|w| w.2));
        }
    }
}
