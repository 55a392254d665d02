//! One device's part of the report, from the sums the builder kept: its tables (transfers by
//! direction and path, operations by kind), kernels, busy time with the estimate for what
//! sampling left untimed, and memory peaks.

use super::acc::{Acc, DeviceAcc};
use super::facts::Kind;
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
    let mut by_class: BTreeMap<(Direction, Path), Acc> = BTreeMap::new();
    for ((_, dir, path), acc) in d.rows.iter() {
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
    let busy = busy.map(|b| {
        b.with_estimate(
            transfers.iter().map(|r| estimated(r.sampled)).sum(),
            kernels.iter().map(|k| estimated(k.sampled)).sum(),
        )
    });
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
