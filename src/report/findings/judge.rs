//! What a device's findings are judged by: its rules, how a saving is estimated (this run's
//! pinned bandwidth, a cost model's figure, the replay of the command graph), how evidence is
//! worded, and the list the findings go to ([`Judge`]).

use super::super::Finding;
pub use super::super::FindingKind;
use super::super::acc::{DeviceAcc, Projecting, Sum};
use super::super::bounds::Graph;
use super::super::replay::Fix;
use crate::model::classification::Direction;
use crate::model::rules::{self, RuleSet};
pub use crate::units::counted;
use crate::units::{bytes, duration, gbps};

/// One device's findings as they are judged: the device's sums and graph, its rules, and where
/// the findings go.
pub struct Judge<'a> {
    pub d: &'a DeviceAcc,
    pub graph: &'a Graph,
    pub set: &'static RuleSet,
    pub dev: u32,
    /// `device #1 (nvidia rules)`.
    pub on: String,
    /// Forced rules without a cost model: this device's times say nothing, and nothing projects.
    unmodelled: Option<String>,
    out: &'a mut Vec<Finding>,
}

impl<'a> Judge<'a> {
    pub fn new(d: &'a DeviceAcc, graph: &'a Graph, out: &'a mut Vec<Finding>) -> Judge<'a> {
        let set = rules_of(d);
        let dev = d.facts.index;
        let unmodelled = replacing(d).filter(|p| p.cost.is_none()).map(|p| {
            format!(
                "not estimated: the {} rules have no cost model (docs/RULES.md), and this \
                 device's times say nothing of such a device",
                p.set.name
            )
        });
        Judge {
            d,
            graph,
            set,
            dev,
            on: format!("device #{dev} ({} rules)", set.name),
            unmodelled,
            out,
        }
    }

    /// A finding of `kind`; one whose saving is time says none where nothing could estimate it.
    pub fn push(
        &mut self,
        kind: FindingKind,
        title: String,
        evidence: Vec<String>,
        fix: String,
        (saving_ns, estimate): (u64, String),
    ) {
        let time = kind.time();
        let saving = match &self.unmodelled {
            Some(why) if time => (0, why.clone()),
            _ => (saving_ns, estimate),
        };
        let mut f = finding(kind, self.dev, title, evidence, fix, saving);
        f.weighed = time && self.unmodelled.is_none();
        self.out.push(f)
    }

    /// The last finding's first fix frees `bytes` of device memory.
    pub fn frees(&mut self, bytes: u64) {
        if let Some(f) = self.out.last_mut() {
            f.saving_bytes = bytes;
        }
    }
}

pub fn rules_of(d: &DeviceAcc) -> &'static RuleSet {
    rules::by_name(&d.facts.rules).unwrap_or(&rules::GENERIC)
}

/// "the nvidia cost model (an NVIDIA H200 …; docs/RULES.md)": whose figures a projection uses
/// (each figure's source is in docs/RULES.md).
pub fn model(p: &Projecting) -> String {
    format!(
        "the {} cost model ({}; docs/RULES.md)",
        p.set.name,
        p.cost.map_or("none", |c| c.on)
    )
}

/// The projection standing in for this device's times (forced rules), if any.
pub fn replacing(d: &DeviceAcc) -> Option<Projecting> {
    d.projecting.filter(|p| p.replaces)
}

/// A fix's saving as the run would see it: its commands' own saving (`ns`, estimated as `how`)
/// replaced by what the command graph, replayed with the fix, says the run's wall time loses
/// (`replay.rs`): nothing for transfers that overlap others or that nothing waits for. Kept as
/// it is where the graph saw none of the commands (none had a device time).
///
/// Where sampled device timing left some of the calls untimed, the graph lacks their times: the
/// calls' own saving, scaled from the timed ones to all of them, stands instead.
pub fn replayed(
    d: &DeviceAcc,
    graph: &Graph,
    s: &Sum,
    (ns, how): (u64, String),
    fix: Fix,
) -> (u64, String) {
    // Nothing estimated: nothing to scale or replay.
    if ns == 0 && how.starts_with("not estimated") {
        return (0, how);
    }
    if s.sampled > 0 && s.timed > 0 {
        return (
            s.extrapolated(ns),
            format!(
                "{how}; scaled from the {} of its {} calls sampled device timing timed (not \
                 replayed: the others have no device time)",
                s.timed,
                s.timed + s.sampled
            ),
        );
    }
    if s.ungraphed > 0 {
        return (
            ns,
            format!(
                "{how} (not replayed: sampled device timing left {} of its calls out of the \
                 command graph)",
                s.ungraphed
            ),
        );
    }
    match graph.saved(d.facts.index, fix).filter(|_| ns > 0) {
        Some(saved) => (
            saved,
            format!(
                "replayed: the run's command graph{} with the fix ends {} sooner (the commands' \
                 own saving: {}, {how})",
                if replacing(d).is_some() {
                    ", its durations projected,"
                } else {
                    ""
                },
                duration(saved),
                duration(ns)
            ),
        ),
        None => (ns, how),
    }
}

/// The pinned bandwidth to estimate with in `dir`, and how it was chosen.
pub fn pinned(d: &DeviceAcc, dir: Direction) -> (f64, String) {
    let figure = |set: &RuleSet| set.cost.and_then(|c| c.pinned.get(dir as usize).copied()?);
    if let Some(p) = replacing(d)
        && let Some(f) = figure(p.set)
    {
        return (
            f.peak(),
            format!(
                "projected: at {} GB/s, the pinned {} figure of {}",
                gbps(f.peak()),
                dir.as_str(),
                model(&p)
            ),
        );
    }
    let forced = d.forced;
    if let Some(best) = d.best_pinned[dir as usize].filter(|_| !forced) {
        return (
            best,
            format!(
                "at this run's best pinned {} bandwidth, {} GB/s",
                dir.as_str(),
                gbps(best)
            ),
        );
    }
    let set = rules_of(d);
    if set.unified.value
        && let Some(best) = d.best_any[dir as usize].filter(|_| !forced)
    {
        // No bus: the best a large transfer reached here is what batching can approach.
        return (
            best,
            format!(
                "at this run's best {} bandwidth for a transfer of 1 MiB or more, {} GB/s",
                dir.as_str(),
                gbps(best)
            ),
        );
    }
    // A device whose memory is host memory has no bus: no bus figure describes it.
    if set.unified.value && !forced {
        return (
            0.0,
            format!(
                "not estimated: the device's memory is host memory, so no bus figure applies, and \
                 this run made no {} transfer of 1 MiB or more to measure what one large one \
                 reaches",
                dir.as_str()
            ),
        );
    }
    let (f, whose) = match figure(set) {
        Some(f) => (f, set.name),
        None => (
            figure(&rules::GENERIC).expect("the generic set has a pinned figure"),
            "generic",
        ),
    };
    (
        f.peak(),
        format!(
            // The figure's own source is listed in docs/RULES.md, which a user can open.
            "at {} GB/s, the {whose} cost model's pinned {} figure (docs/RULES.md): {}",
            gbps(f.peak()),
            dir.as_str(),
            if forced {
                format!(
                    "the {} rules were forced on a device they do not describe, so its own \
                     bandwidth says nothing of such a device",
                    d.facts.rules
                )
            } else {
                format!(
                    "this run measured no pinned {} transfer of 1 MiB or more",
                    dir.as_str()
                )
            }
        ),
    )
}

/// Time saved if `s`'s timed bytes had moved at `bw` GB/s.
pub fn saving(s: &Sum, bw: f64) -> u64 {
    let ideal = if bw > 0.0 {
        (s.timed_bytes as f64 / bw) as u64
    } else {
        s.ns
    };
    s.ns.saturating_sub(ideal)
}

/// `12 calls, 48.0 MiB, 12.3 ms (3.91 GB/s)`.
pub fn measured(s: &Sum) -> String {
    shown(s, false)
}

/// [`measured`], or `12 calls, 48.0 MiB, 12.3 ms projected (3.91 GB/s)` where the times are.
pub fn shown(s: &Sum, projected: bool) -> String {
    let mut t = format!("{}, {}", counted(s.count, "call"), bytes(s.bytes));
    if s.ns > 0 {
        t += &format!(", {}", duration(s.ns));
        if projected {
            t += " projected";
        }
        if s.timed_bytes > 0 {
            t += &format!(" ({} GB/s)", gbps(s.timed_bytes as f64 / s.ns as f64));
        }
        if s.sampled > 0 {
            t += &format!(
                " over the {} timed (sampled device timing left {} untimed)",
                s.timed, s.sampled
            );
        }
    }
    t
}

/// A finding on `device` that saves `saving_ns` (0: none), estimated as `estimate` says; its
/// `saves` is how the report shows both.
pub fn finding(
    kind: FindingKind,
    device: u32,
    title: String,
    evidence: Vec<String>,
    fix: String,
    (saving_ns, estimate): (u64, String),
) -> Finding {
    let saves = match saving_ns {
        0 => estimate.clone(),
        ns => format!("~{}, {estimate}", duration(ns)),
    };
    Finding {
        kind,
        device,
        title,
        evidence,
        fix,
        saving_ns,
        estimate,
        saving_bytes: 0,
        saves,
        confidence: None,
        misuse: kind.misuse(),
        minor: false,
        weighed: false,
    }
}
