//! The program's host time per entry point: the table nsys users know as the API summary. The
//! layer keeps the figures (`sink/host_calls.rs`) and the trace's end carries them; a trace cut
//! short, without its end, has them counted here from its call slices.

use super::hist::Hist;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// One entry point's calls on the program's threads.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct HostCall {
    pub api: String,
    pub calls: u64,
    /// Their time, summed.
    pub total_ns: u64,
    /// Of it, the time of calls that waited for commands (blocking transfers, `clFinish`,
    /// `clWaitForEvents`): the device's as much as the host's.
    pub wait_ns: u64,
    pub median_ns: u64,
    pub max_ns: u64,
    /// Its calls that failed, by the error they returned, most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<Failed>,
}

/// Calls of one entry point that failed with one error.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Failed {
    /// The error code the call returned, or set in its `errcode_ret`; `None` where the call
    /// returned no object and gave no error code (the program asked none, or the driver left
    /// it CL_SUCCESS).
    pub code: Option<i32>,
    pub calls: u64,
}

impl Failed {
    /// What the call returned: `CL_INVALID_BUFFER_SIZE (-61)`, or `no object (no error code
    /// given)`: the program asked none, or the driver set none.
    pub fn error(&self) -> String {
        match self.code {
            Some(c) => format!("{} ({c})", crate::model::flags::error_name(c)),
            None => "no object (no error code given)".into(),
        }
    }
}

impl HostCall {
    /// The table's order: most total time first, then by name.
    pub fn sort(rows: &mut [HostCall]) {
        rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.api.cmp(&b.api)));
    }

    /// The time of its calls that did not wait: the host's own.
    pub fn own_ns(&self) -> u64 {
        self.total_ns.saturating_sub(self.wait_ns)
    }

    /// A query (`clGet…`): its errors are mostly a program asking what a device lacks, so they
    /// are listed, not made the verdict.
    pub fn is_query(&self) -> bool {
        self.api.starts_with("clGet")
    }
}

/// Entry points counted from a trace's call slices.
#[derive(Debug, Default)]
pub struct FromSlices {
    by: FxHashMap<String, (HostCall, Hist)>,
}

impl FromSlices {
    pub fn add(&mut self, api: &str, ns: u64, waited: bool) {
        let (c, h) = match self.by.get_mut(api) {
            Some(e) => e,
            None => self.by.entry(api.to_string()).or_default(),
        };
        c.calls += 1;
        c.total_ns += ns;
        if waited {
            c.wait_ns += ns;
        }
        c.max_ns = c.max_ns.max(ns);
        h.add(ns as f64);
    }

    /// The table, most total time first.
    pub fn rows(self) -> Vec<HostCall> {
        let mut rows: Vec<HostCall> = (self.by.into_iter())
            .map(|(api, (c, h))| HostCall {
                api,
                median_ns: h.quantile(0.5).map_or(0, |m| (m as u64).min(c.max_ns)),
                ..c
            })
            .collect();
        HostCall::sort(&mut rows);
        rows
    }
}
