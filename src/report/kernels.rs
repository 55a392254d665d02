//! The kernels table: per device, each kernel's launches, device time (with the median launch)
//! and time inside the enqueue calls. Bounded: past [`NAMES`] distinct names, the rest are one row.

use super::hist::Hist;
use super::sampled::{Moments, Sampled};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Kernel names kept apart at most per device.
pub const NAMES: usize = 256;
/// The row the kernels past [`NAMES`] share.
pub const OTHERS: &str = "(other kernels)";

/// What the host side knows of one kernel launch.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRun {
    pub device: u32,
    pub queue: u32,
    pub name: Arc<str>,
    /// Time inside the enqueue call.
    pub host_ns: u64,
    /// Sampled device timing left it untimed.
    pub sampled: bool,
}

/// One row of the kernels table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KernelRow {
    pub name: String,
    pub calls: u64,
    /// Summed device time of the launches that have one.
    pub device_ns: u64,
    /// The median launch's device time (within 1.2%).
    pub median_ns: Option<u64>,
    /// The launches' 10th and 90th percentiles (their spread: what `clxfer diff` calls noise).
    pub p10_ns: Option<u64>,
    pub p90_ns: Option<u64>,
    /// Summed time inside the enqueue calls.
    pub host_ns: u64,
    /// Launches without a device time (sampled ones included).
    pub untimed: u64,
    /// How the launches sampled device timing left untimed were extrapolated; `null` when it
    /// left none.
    pub sampled: Option<Sampled>,
}

impl KernelRow {
    /// Its device time with the estimate for the launches sampling left untimed.
    pub fn time_ns(&self) -> u64 {
        let estimated = self.sampled.and_then(|s| s.estimated_ns).unwrap_or(0);
        self.device_ns.saturating_add(estimated)
    }
}

#[derive(Debug, Default)]
struct Acc {
    calls: u64,
    device_ns: u64,
    host_ns: u64,
    untimed: u64,
    durations: Hist,
    sample: Moments,
}

/// A device's kernels.
#[derive(Debug, Default)]
pub struct Kernels(BTreeMap<Arc<str>, Acc>);

impl Kernels {
    /// A launch with its device time (`None`: unavailable or not timed); returns the name of
    /// the row it went to.
    pub fn add(&mut self, k: &KernelRun, device_ns: Option<u64>) -> Arc<str> {
        let name = if self.0.len() >= NAMES && !self.0.contains_key(&k.name) {
            Arc::from(OTHERS)
        } else {
            k.name.clone()
        };
        let acc = self.0.entry(name.clone()).or_default();
        acc.calls += 1;
        acc.host_ns = acc.host_ns.saturating_add(k.host_ns);
        match device_ns {
            Some(ns) => {
                acc.device_ns = acc.device_ns.saturating_add(ns);
                acc.durations.add(ns as f64);
                acc.sample.launch(ns);
            }
            None => {
                acc.untimed += 1;
                if k.sampled {
                    acc.sample.untimed(1);
                }
            }
        }
        name
    }

    /// The rows, most device time first.
    pub fn rows(&self) -> Vec<KernelRow> {
        let mut rows: Vec<KernelRow> = self
            .0
            .iter()
            .map(|(name, a)| KernelRow {
                name: name.to_string(),
                calls: a.calls,
                device_ns: a.device_ns,
                median_ns: a.durations.quantile(0.5).map(|m| m.round() as u64),
                p10_ns: a.durations.quantile(0.1).map(|m| m.round() as u64),
                p90_ns: a.durations.quantile(0.9).map(|m| m.round() as u64),
                host_ns: a.host_ns,
                untimed: a.untimed,
                sampled: a.sample.result(),
            })
            .collect();
        rows.sort_by(|a, b| b.device_ns.cmp(&a.device_ns).then(a.name.cmp(&b.name)));
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str) -> KernelRun {
        KernelRun {
            device: 1,
            queue: 1,
            name: name.into(),
            host_ns: 10,
            sampled: false,
        }
    }

    #[test]
    fn launches_sum_by_name_and_rank_by_device_time() {
        let mut k = Kernels::default();
        for (name, ns) in [
            ("a", Some(100)),
            ("b", Some(1000)),
            ("a", Some(300)),
            ("a", None),
        ] {
            k.add(&run(name), ns);
        }
        let rows = k.rows();
        assert_eq!(rows[0].name, "b");
        let a = &rows[1];
        assert_eq!(
            (a.calls, a.device_ns, a.host_ns, a.untimed),
            (3, 400, 30, 1)
        );
        let median = a.median_ns.unwrap() as f64;
        assert!((median - 100.0).abs() / 100.0 < 0.012 || (median - 300.0).abs() / 300.0 < 0.012);
    }

    #[test]
    fn names_past_the_bound_share_one_row() {
        let mut k = Kernels::default();
        for i in 0..NAMES + 10 {
            k.add(&run(&format!("k{i}")), Some(1));
        }
        let rows = k.rows();
        assert_eq!(rows.len(), NAMES + 1);
        let others = rows.iter().find(|r| r.name == OTHERS).unwrap();
        assert_eq!(others.calls, 10);
    }
}
