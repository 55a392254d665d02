//! The verdict: what the first lines a user reads say (issue #56). What is wrong with the
//! program first (a misuse), else the change that saves most, else that nothing needs changing;
//! then, per device and direction, how the bytes moved, in the words the question is asked in
//! ("by DMA from pinned memory", "staged through a driver bounce buffer"); then where the time
//! went. Made once from the finished report, so every format says the same.

use super::{DeviceReport, Finding, Report, Row};
use crate::model::classification::Path;
use crate::units::{bytes, counted, duration};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    /// What to do first: the first misuse, else the finding that saves most, else "nothing to
    /// change".
    pub headline: String,
    /// The finding the headline names: its index in the report's `findings`.
    pub finding: Option<usize>,
    /// Per device and direction, the bytes that moved and how, in the report's device order,
    /// H2D first.
    pub moved: Vec<Moved>,
    /// Where the run's time went, in one line.
    pub time: String,
    /// When the migrations' bytes moved, where there were migrations: `migrations: 2 copied at
    /// the call, 1 only marked its objects (moved at first use)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migrated: Option<String>,
}

/// The bytes that moved one way on one device.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Moved {
    pub device: u32,
    pub direction: String,
    pub bytes: u64,
    /// By path (`pinned`, `staged`, …), most bytes first.
    pub paths: Vec<PathShare>,
    /// In words: `H2D 89.0 MiB: 63% by DMA from pinned memory, 37% staged through a driver
    /// bounce buffer (260 calls)` (with `device #N` first where there are several).
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PathShare {
    pub path: String,
    pub bytes: u64,
    pub calls: u64,
}

impl Verdict {
    /// The verdict of a report whose findings are ranked.
    pub fn of(r: &Report) -> Verdict {
        let (mut headline, finding) = headline(r);
        // A call that returned an error is said first (the rest covers only what ran; the
        // program may have handled it, so what else there is follows it).
        if let Some(failed) = failed(&r.host_calls) {
            headline = match finding {
                Some(_) => format!("{failed}; and {headline}"),
                None => format!("{failed}; otherwise {headline}"),
            };
        }
        let several = r.devices.len() > 1;
        let mut moved: Vec<Moved> = r.devices.iter().flat_map(moved).collect();
        for m in &mut moved {
            m.text = m.line(several);
        }
        Verdict {
            headline,
            finding,
            moved,
            time: time(r),
            migrated: migrated(r),
        }
    }

    /// Its lines: the headline (without its `verdict:` label), how the bytes moved (`moved`:
    /// [`Verdict::moved`] or [`Verdict::by_direction`]; the first `keep` a line each, the rest
    /// summed in one line), where the time went.
    pub fn lines(&self, moved: &[Moved], keep: usize, migrated: bool) -> Vec<String> {
        let mut lines = vec![self.headline.clone()];
        lines.extend(moved.iter().take(keep).map(|m| m.text.clone()));
        if moved.len() > keep {
            let rest: Vec<String> = moved[keep..].iter().map(Moved::short).collect();
            let head = if keep == 0 { "moved:" } else { "and" };
            lines.push(format!("{head} {} (the tables say how)", rest.join(", ")));
        }
        if moved.is_empty() {
            lines.push("no bytes moved between host and device".into());
        }
        if let Some(m) = self.migrated.as_ref().filter(|_| migrated) {
            lines.push(m.clone());
        }
        lines.push(self.time.clone());
        lines
    }

    /// The moves summed per direction over every device (`device` 0, named by its direction
    /// alone), for a verdict short of room.
    pub fn by_direction(&self) -> Vec<Moved> {
        let mut out: Vec<Moved> = Vec::new();
        for m in &self.moved {
            for p in &m.paths {
                add(&mut out, 0, &m.direction, p.clone());
            }
        }
        for o in &mut out {
            o.paths.sort_by_key(|p| std::cmp::Reverse(p.bytes));
            o.text = o.line(true);
        }
        out
    }
}

/// The finding to act on first and its line: a misuse (never a race clxfer could not judge for
/// certain), else the first finding a reader is shown (it saves most, or is about memory or
/// accuracy), else nothing to change.
fn headline(r: &Report) -> (String, Option<usize>) {
    let first = (r.findings.iter())
        .position(|f| f.misuse && unsure(f).is_none())
        .or_else(|| (r.findings.iter()).position(|f| !f.minor && unsure(f).is_none()));
    let uncertain = (r.findings.iter())
        .enumerate()
        .find_map(|(i, f)| Some((i, unsure(f)?)));
    match (first, uncertain) {
        (Some(i), _) => {
            let f = &r.findings[i];
            let number = shown_number(r, i);
            // The same finding on other devices (a hand-off gone wrong on both): counted, so
            // that the headline's one device is not taken for the whole run.
            let like = (r.findings.iter())
                .filter(|g| g.kind == f.kind && g.device != f.device && !g.minor)
                .count();
            let more = match like {
                0 => String::new(),
                n => format!("; {n} more like it on another device"),
            };
            (format!("{}; {}{more}", f.title, gain(f, number)), Some(i))
        }
        // A race clxfer could not judge for certain leads nothing, and is not hidden either.
        (None, Some((i, rests_on))) => (
            format!(
                "nothing certain to change; finding {} is a possible race that rests on {rests_on}",
                shown_number(r, i)
            ),
            Some(i),
        ),
        (None, None) => (nothing_to_change(r), None),
    }
}

/// What a race finding clxfer could not judge for certain rests on; `None` for any other.
fn unsure(f: &Finding) -> Option<&'static str> {
    match f.confidence.as_deref() {
        Some("declared") => Some("a kernel argument clxfer could not follow"),
        Some("assumed") => Some("kernels whose source clxfer does not have"),
        _ => None,
    }
}

/// What acting on a finding gives, and where it is in the list.
fn gain(f: &Finding, number: usize) -> String {
    let projected = if f.estimate.contains("projected") {
        " projected"
    } else {
        ""
    };
    match (f.misuse, f.saving_ns) {
        (true, 0) => format!("a misuse (finding {number})"),
        (true, ns) => format!(
            "a misuse; saves ~{}{projected} (finding {number})",
            duration(ns)
        ),
        (false, 0) => format!("no time to save (finding {number})"),
        (false, ns) => format!("saves ~{}{projected} (finding {number})", duration(ns)),
    }
}

/// The verdict's change in a few words, for a table with a row per run (a job's ranks): the
/// finding's name and what acting on it gives, or that there is nothing to change.
pub fn change_in_brief(r: &Report) -> String {
    match r
        .verdict
        .finding
        .and_then(|i| Some((i, r.findings.get(i)?)))
    {
        Some((i, f)) => format!("{}: {}", f.kind, gain(f, shown_number(r, i))),
        None => "nothing to change".into(),
    }
}

/// A finding's number in the text report's list, which shows the findings that are not minor.
fn shown_number(r: &Report, index: usize) -> usize {
    r.findings[..index].iter().filter(|f| !f.minor).count() + 1
}

/// The program's calls that returned an error, queries aside (a program asking what a device
/// lacks): `1 OpenCL call returned an error: clCreateBuffer returned CL_INVALID_BUFFER_SIZE (-61)`.
fn failed(host_calls: &[super::HostCall]) -> Option<String> {
    let mut failed: Vec<(&str, &super::Failed)> = (host_calls.iter())
        .filter(|c| !c.is_query())
        .flat_map(|c| c.failed.iter().map(|f| (c.api.as_str(), f)))
        .collect();
    // A wait that failed because a command it waited for had failed says a consequence: the
    // causes first. The rest keep the host calls' order (their time), which varies from run to
    // run: a wait on failed commands sometimes took longer than the failed creation before it.
    failed.sort_by_key(|(_, f)| {
        f.code == Some(opencl_sys::CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    });
    let calls: u64 = failed.iter().map(|(_, f)| f.calls).sum();
    let said = |(api, f): &(&str, &super::Failed)| match f.calls {
        1 => format!("{api} returned {}", f.error()),
        n => format!("{api} returned {} ({n} calls)", f.error()),
    };
    const SAID: usize = 2;
    let mut text: Vec<String> = failed.iter().take(SAID).map(said).collect();
    if failed.len() > SAID {
        text.push(format!(
            "{} more entry points or errors (the failed calls line lists them)",
            failed.len() - SAID
        ));
    }
    let verb = if calls == 1 {
        "returned an error"
    } else {
        "returned errors"
    };
    let calls_said = counted(calls, "OpenCL call");
    (calls > 0).then(|| format!("{calls_said} {verb}: {}", text.join(", ")))
}

fn nothing_to_change(r: &Report) -> String {
    let transfer_ns: u64 = r.devices.iter().map(DeviceReport::transfer_ns).sum();
    let share = transfer_ns as f64 * 100.0 / r.wall_ns.max(1) as f64;
    let minor = r.findings.iter().filter(|f| f.minor).count();
    let rest = match minor {
        0 => String::new(),
        1 => " (1 smaller finding below)".into(),
        n => format!(" ({n} smaller findings below)"),
    };
    format!("nothing to change: transfers are {share:.0}% of the run{rest}")
}

/// The directions bytes moved in, on one device.
fn moved(d: &DeviceReport) -> Vec<Moved> {
    let mut out: Vec<Moved> = Vec::new();
    for row in d
        .transfers
        .iter()
        .filter(|r| r.bytes > 0 && r.path != "none")
    {
        add(&mut out, d.index, &row.direction, share(row));
    }
    for m in &mut out {
        m.paths.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    }
    let order = ["H2D", "D2H", "D2D", "H2H"];
    out.sort_by_key(|m| order.iter().position(|&d| d == m.direction));
    out
}

/// Adds a path's bytes to `direction`'s entry of `out` (made where missing, in the order first
/// met), and to its path's share there.
fn add(out: &mut Vec<Moved>, device: u32, direction: &str, p: PathShare) {
    let at = match out.iter().position(|m| m.direction == direction) {
        Some(at) => at,
        None => {
            out.push(Moved {
                device,
                direction: direction.to_string(),
                bytes: 0,
                paths: Vec::new(),
                text: String::new(),
            });
            out.len() - 1
        }
    };
    let m = &mut out[at];
    m.bytes = m.bytes.saturating_add(p.bytes);
    match m.paths.iter_mut().find(|q| q.path == p.path) {
        Some(q) => {
            q.bytes = q.bytes.saturating_add(p.bytes);
            q.calls += p.calls;
        }
        None => m.paths.push(p),
    }
}

fn share(row: &Row) -> PathShare {
    PathShare {
        path: row.path.clone(),
        bytes: row.bytes,
        calls: row.calls,
    }
}

impl Moved {
    fn prefix(&self, several: bool) -> String {
        // Device 0: every device's together.
        match (several, self.device) {
            (true, d) if d > 0 => format!("device #{d} {}", self.direction),
            _ => self.direction.clone(),
        }
    }

    /// `H2D 89.0 MiB: 63% by DMA from pinned memory, 37% staged through a driver bounce buffer
    /// (260 calls)`: the calls are counted where they are what to change.
    fn line(&self, several: bool) -> String {
        let parts: Vec<String> = self
            .paths
            .iter()
            .map(|p| {
                let how = words(&p.path, &self.direction);
                let share = match self.paths.len() {
                    1 => "all".to_string(),
                    _ => percent(p.bytes as f64 * 100.0 / self.bytes.max(1) as f64),
                };
                match p.path.as_str() {
                    "staged" | "via-host" | "unknown" => {
                        format!("{share} {how} ({})", counted(p.calls, "call"))
                    }
                    _ => format!("{share} {how}"),
                }
            })
            .collect();
        format!(
            "{} {}: {}",
            self.prefix(several),
            bytes(self.bytes),
            parts.join(", ")
        )
    }

    fn short(&self) -> String {
        // The text's opening, up to its size: `device #2 H2D 256 KiB`.
        let head = self.text.split(':').next().unwrap_or(&self.text);
        head.to_string()
    }
}

/// A share as a whole percent, never rounded to 0% or 100% when it is neither.
fn percent(pct: f64) -> String {
    if pct > 0.0 && pct < 1.0 {
        "<1%".into()
    } else if pct < 100.0 && pct > 99.0 {
        ">99%".into()
    } else {
        format!("{pct:.0}%")
    }
}

/// How bytes moved along a path, as the question is asked.
fn words(path: &str, direction: &str) -> &'static str {
    let to = direction == "D2H";
    match Path::ALL.iter().find(|p| p.as_str() == path) {
        Some(Path::Pinned) if to => "by DMA to pinned memory",
        Some(Path::Pinned) => "by DMA from pinned memory",
        Some(Path::Staged) => "staged through a driver bounce buffer",
        Some(Path::ZeroCopy) => "zero-copy (nothing copied: the device uses host memory in place)",
        Some(Path::HostCopy) => "copied by the CPU within host memory (a memcpy, no DMA)",
        Some(Path::Device) => "within device memory",
        Some(Path::Peer) => "peer-to-peer",
        Some(Path::ViaHost) => "through host memory",
        _ => "by a path clxfer cannot tell",
    }
}

/// When the run's migrations moved their bytes, summed over its devices.
fn migrated(r: &Report) -> Option<String> {
    let mut by: Vec<(String, u64)> = Vec::new();
    for m in r.devices.iter().flat_map(|d| &d.migrations) {
        match by.iter_mut().find(|b| b.0 == m.moved) {
            Some(b) => b.1 += m.calls,
            None => by.push((m.moved.clone(), m.calls)),
        }
    }
    let parts: Vec<String> = (by.iter())
        .map(|(when, n)| match when.as_str() {
            "at the call" => format!("{n} copied at the call"),
            "at first use" => format!("{n} only marked (moved at first use)"),
            _ => format!("{n} moved nothing"),
        })
        .collect();
    (!parts.is_empty()).then(|| format!("migrations: {}", parts.join(", ")))
}

/// `, 40% overlapped` (of the transfer time, with kernels, by the busy lines) where transfers and
/// kernels ran: whether the program's pipeline overlapped.
fn overlapped(r: &Report, kernel_ns: u64) -> String {
    let (overlap, transfer_busy) = (r.devices.iter())
        .filter_map(|d| d.busy)
        .fold((0, 0), |(o, t), b| (o + b.overlap_ns, t + b.transfer_ns));
    match (kernel_ns, transfer_busy) {
        (0, _) | (_, 0) => String::new(),
        _ => format!(
            ", {:.0}% overlapped",
            overlap as f64 * 100.0 / transfer_busy as f64
        ),
    }
}

/// `time: 124 ms run: transfers 15.3 ms (12%), kernels 949 µs, 40% overlapped; critical path 88%
/// host`: one line, so that the moves above it keep theirs. Under forced rules, the run as
/// projected (its wall, busy lines and path: the replay's), which the header's wall is not.
fn time(r: &Report) -> String {
    let transfer_ns: u64 = r.devices.iter().map(DeviceReport::transfer_ns).sum();
    let kernel_ns: u64 = r.devices.iter().map(DeviceReport::kernel_ns).sum();
    let projected = r.devices.iter().any(DeviceReport::times_projected);
    let estimate = |s: Option<super::Sampled>| s.is_some_and(|s| s.estimated_ns.is_some());
    let estimated = r.devices.iter().any(|d| {
        !d.times_projected()
            && (d.transfers.iter().any(|row| estimate(row.sampled))
                || d.kernels.iter().any(|k| estimate(k.sampled)))
    });
    let projected_wall = (r.bounds.as_ref())
        .filter(|b| b.projected)
        .map(|b| b.wall_ns);
    let wall = projected_wall.unwrap_or(r.wall_ns);
    let path = r
        .bounds
        .as_ref()
        .and_then(|b| Some((b, b.top.first()?)))
        .map(|(b, top)| {
            // The contributor's name without its explanation: `host (the program and its calls)`;
            // the host's parts (its own work, and re-arming the device after a wait) as one.
            let what = top.what.split(" (").next().unwrap_or(&top.what);
            let ns: u64 = match what {
                "host" => (b.top.iter())
                    .filter(|c| c.what.starts_with("host ("))
                    .map(|c| c.ns)
                    .sum(),
                _ => top.ns,
            };
            format!(
                "; critical path {:.0}% {what}",
                ns as f64 * 100.0 / wall.max(1) as f64
            )
        });
    let run = match (projected, projected_wall) {
        (true, Some(ns)) => format!("{} projected", duration(ns)),
        _ => format!("{} run", duration(r.wall_ns)),
    };
    // Forced rules without a cost model (AMD's, the host-memory sets') project no time.
    let no_model = (r.devices.iter())
        .filter(|d| d.times_projected())
        .find_map(|d| d.projection.as_ref().filter(|p| p.on.is_empty()));
    let transfers = match (projected, transfer_ns) {
        (true, 0) if let Some(p) = no_model => {
            format!("not projected (the {} rules have no cost model)", p.rules)
        }
        (true, ns) => duration(ns),
        (false, 0) => "no device time".to_string(),
        (false, ns) => format!(
            "{} ({:.0}%{})",
            duration(ns),
            ns as f64 * 100.0 / wall.max(1) as f64,
            if estimated {
                ", sampled ones estimated"
            } else {
                ""
            }
        ),
    };
    format!(
        "time: {run}: transfers {transfers}, kernels {}{}{}",
        duration(kernel_ns),
        overlapped(r, kernel_ns),
        path.unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::super::{Failed, HostCall};

    #[test]
    fn a_failed_wait_comes_after_the_failure_it_reports() {
        let call = |api: &str, code, total_ns| HostCall {
            api: api.into(),
            calls: 1,
            total_ns,
            failed: vec![Failed { code, calls: 1 }],
            ..Default::default()
        };
        // The host calls' order is their time: here the wait took longer.
        let calls = [
            call("clWaitForEvents", Some(-14), 2_000),
            call("clCreateBuffer", Some(-61), 1_000),
        ];
        assert_eq!(
            super::failed(&calls).unwrap(),
            "2 OpenCL calls returned errors: clCreateBuffer returned CL_INVALID_BUFFER_SIZE \
             (-61), clWaitForEvents returned CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14)"
        );
    }
}
