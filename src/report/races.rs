//! Possible data races in the report (issue #25): each pair of commands the race check
//! (`graph::race`) found unordered becomes a finding, ranked above the time findings, since a
//! race can make the program's results wrong however fast it runs. Live runs and saved traces
//! give the same facts (the trace's `possible data race` instants).

use super::Finding;
use super::finding_kind::FindingKind;
use super::findings::finding as made;
use serde::{Deserialize, Serialize};

/// One of the two commands of a race.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceSide {
    pub command: u64,
    pub api: String,
    pub device: u32,
    pub queue: u32,
    /// The host thread that enqueued it (OS thread id).
    pub thread: u32,
    /// `reads`, `writes`, or `may write` (a kernel argument the program did not declare
    /// read-only, taken as written).
    pub access: String,
    /// Bytes `[from, to)` of the object; `to` is `u64::MAX` for "to its end".
    pub bytes: (u64, u64),
}

/// Two commands that touch one memory object, at least one writing, with no event, queue
/// order or host wait between them; `first` was enqueued first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceFact {
    /// The memory object's handle.
    pub object: u64,
    /// `known` (both uses are what the commands do) or `declared` (a kernel argument not
    /// declared `const`, `__constant` or in a READ_ONLY buffer, taken as written).
    pub confidence: String,
    pub first: RaceSide,
    pub second: RaceSide,
}

/// Races shown one finding each; the rest are counted in the last.
pub const SHOWN: usize = 16;

impl RaceSide {
    /// "command #N (clEnqueue… on device #D queue #Q, thread T) writes bytes A..B".
    pub fn said(&self) -> String {
        let how = match self.access.as_str() {
            "may write" => "may write (its kernel argument is not `const`)",
            "may write (assumed)" => {
                "may write (assumed: the driver keeps no argument information)"
            }
            a => a,
        };
        let bytes = match self.bytes {
            (0, u64::MAX) => "the whole object".to_string(),
            (from, u64::MAX) => format!("bytes {from} to the end"),
            (from, to) => format!("bytes {from}..{to}"),
        };
        format!(
            "command #{} ({} on device #{} queue #{}, thread {}) {how} {bytes}",
            self.command, self.api, self.device, self.queue, self.thread
        )
    }
}

/// The race findings, in the order the races were found, and one for those past [`SHOWN`]; and
/// apart, one for the races clxfer had to assume (ranked last by the builder).
pub fn findings(races: &[RaceFact], more: u64) -> (Vec<Finding>, Option<Finding>) {
    let (assumed, sure): (Vec<&RaceFact>, Vec<&RaceFact>) =
        races.iter().partition(|r| r.confidence == "assumed");
    let groups = behind(&sure);
    let mut out: Vec<Finding> = (groups.iter().take(SHOWN))
        .map(|(r, also)| finding(r, also))
        .collect();
    let past = (groups.len().saturating_sub(SHOWN)) as u64 + more;
    if past > 0 {
        out.push(made(
            FindingKind::PossibleRace,
            0,
            format!("{past} more possible data races between other pairs of call sites"),
            vec![format!(
                "the first {SHOWN} are above; stderr names up to 1024 pairs of call sites"
            )],
            "order each pair as above".into(),
            (0, ESTIMATE.into()),
        ));
    }
    (out, unjudged(&assumed))
}

/// The pairs that would race if kernels wrote arguments the driver gave no qualifiers for: not
/// said as races (they may be two reads), but not hidden either.
fn unjudged(assumed: &[&RaceFact]) -> Option<Finding> {
    let first = assumed.first()?;
    let mut evidence: Vec<String> = assumed
        .iter()
        .take(3)
        .map(|r| format!("{}; {}", r.first.said(), r.second.said()))
        .collect();
    evidence.push(
        "clxfer has no source for these kernels (a program from a binary or IL) and the driver \
         keeps no argument qualifiers (no -cl-kernel-arg-info): it took each memory argument as \
         written, and does not call these races"
            .into(),
    );
    let estimate = "not a race clxfer can confirm: no time either way";
    Some(Finding {
        confidence: Some("assumed".into()),
        ..made(
            FindingKind::UnjudgedRace,
            first.second.device,
            format!(
                "{} of commands with no order between them would race if their kernels write \
                 arguments clxfer knows nothing of",
                match assumed.len() {
                    1 => "1 pair".to_string(),
                    n => format!("{n} pairs"),
                }
            ),
            evidence,
            "Run once with the program built from source (clxfer reads its kernels), or with \
             -cl-kernel-arg-info, or create buffers a kernel only reads CL_MEM_READ_ONLY, so \
             that clxfer can tell reads from writes; or order each pair with an event, as for a \
             race."
                .into(),
            (0, estimate.into()),
        )
    })
}

const ESTIMATE: &str = "no time: a race is about results, so it ranks above the time findings";

/// The races in order, each with the later ones it stands for: those of the same object and
/// first command whose second command comes later on the queue of its own second command. Ordering
/// the first command before the earlier one orders it before the later ones too where that queue
/// is in order: one missing dependency is one finding, not one per command behind it.
fn behind<'a>(races: &[&'a RaceFact]) -> Vec<(&'a RaceFact, Vec<&'a RaceFact>)> {
    let mut out: Vec<(&RaceFact, Vec<&RaceFact>)> = Vec::new();
    for &r in races {
        let on = |k: &RaceSide| (k.device, k.queue);
        // Not where the first command shares that queue (a race within one queue: it is out of
        // order), nor across confidences (a known race is not said as a declared one's).
        let lead = out.iter_mut().find(|(k, _)| {
            k.object == r.object
                && k.first.command == r.first.command
                && on(&k.second) == on(&r.second)
                && on(&k.first) != on(&k.second)
                && k.confidence == r.confidence
                && k.second.command < r.second.command
        });
        match lead {
            Some((_, also)) => also.push(r),
            None => out.push((r, Vec::new())),
        }
    }
    out
}

fn finding(r: &RaceFact, also: &[&RaceFact]) -> Finding {
    let (a, b) = (&r.first, &r.second);
    let declared = r.confidence == "declared";
    let one_queue = (a.device, a.queue) == (b.device, b.queue);
    // A queue belongs to one device: commands on two devices can share none.
    let other = match (one_queue, a.device == b.device) {
        (true, _) => {
            ", or put a barrier (clEnqueueBarrierWithWaitList) between them on their \
                      out-of-order queue"
        }
        (false, true) => ", or enqueue both on one in-order queue",
        (false, false) => "",
    };
    let mut fix = format!(
        "order them: pass command #{}'s event in the wait list of command #{} (or wait for it \
         on the host before enqueueing #{}){other}",
        a.command, b.command, b.command,
    );
    if !also.is_empty() {
        let numbers: Vec<String> = also
            .iter()
            .map(|x| format!("#{}", x.second.command))
            .collect();
        fix.push_str(&format!(
            "; on an in-order queue that orders {} after it as well (on an out-of-order one, \
             pass the event to {} too)",
            numbers.join(", "),
            if also.len() == 1 { "it" } else { "them" },
        ));
    }
    if declared {
        fix.push_str(
            "; if the kernel only reads the buffer, declare the argument `const` (or \
             `__constant`) or create the buffer CL_MEM_READ_ONLY, and clxfer will know",
        );
    }
    Finding {
        confidence: Some(r.confidence.clone()),
        ..made(
            FindingKind::PossibleRace,
            b.device,
            format!(
                "possible data race on memory object {:#x} between command #{} (device #{}) \
                 and command #{} (device #{}){}",
                r.object,
                a.command,
                a.device,
                b.command,
                b.device,
                match also.len() {
                    0 => String::new(),
                    n => format!(
                        ", and {} behind it",
                        crate::units::counted(n as u64, "command")
                    ),
                }
            ),
            [a.said(), b.said()]
                .into_iter()
                .chain(also.iter().map(|x| {
                    format!(
                        "{}, behind command #{} on its queue",
                        x.second.said(),
                        b.command
                    )
                }))
                .chain([
                    "no event, queue order or host wait orders them".into(),
                    match declared {
                        true => {
                            "confidence: declared (a kernel argument that is not `const`, whose \
                             use clxfer could not follow in the kernel's source, is taken as \
                             written; the kernel may only read it)"
                                .into()
                        }
                        false => "confidence: known (both uses are what the commands do: a \
                              kernel's as its source or qualifiers show)"
                            .into(),
                    },
                ])
                .collect(),
            fix,
            (0, ESTIMATE.into()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(command: u64, queue: u32, access: &str, bytes: (u64, u64)) -> RaceSide {
        RaceSide {
            command,
            api: "clEnqueueWriteBuffer".into(),
            device: queue,
            queue,
            thread: 7,
            access: access.into(),
            bytes,
        }
    }

    #[test]
    fn a_side_says_its_command_use_and_bytes() {
        let cases = [
            (
                side(1, 1, "writes", (0, 64)),
                "command #1 (clEnqueueWriteBuffer on device #1 queue #1, thread 7) writes bytes 0..64",
            ),
            (
                side(2, 2, "may write", (0, u64::MAX)),
                "command #2 (clEnqueueWriteBuffer on device #2 queue #2, thread 7) may write (its \
                 kernel argument is not `const`) the whole object",
            ),
            (
                side(3, 1, "reads", (16, u64::MAX)),
                "command #3 (clEnqueueWriteBuffer on device #1 queue #1, thread 7) reads bytes 16 \
                 to the end",
            ),
        ];
        for (s, want) in cases {
            assert_eq!(s.said(), want);
        }
    }

    #[test]
    fn each_race_is_a_finding_up_to_a_bound_and_the_fix_fits_the_queues() {
        let race = |n: u64, q2: u32, confidence: &str| RaceFact {
            object: 0x10,
            confidence: confidence.into(),
            first: side(n, 1, "writes", (0, 8)),
            second: side(n + 1, q2, "reads", (0, 8)),
        };
        let (f, unjudged) = findings(&[race(1, 2, "known"), race(3, 1, "declared")], 0);
        assert!(unjudged.is_none());
        assert_eq!(f.len(), 2);
        assert!(
            f.iter()
                .all(|f| f.kind == "possible-race" && f.saving_ns == 0)
        );
        assert_eq!(f[0].confidence.as_deref(), Some("known"));
        // Two devices: no queue holds both, so none is offered.
        assert!(!f[0].fix.contains("in-order queue"), "{}", f[0].fix);
        // Two queues of one device: one in-order queue would order them.
        let same_device = RaceFact {
            second: RaceSide {
                device: 1,
                ..side(2, 3, "reads", (0, 8))
            },
            ..race(1, 1, "known")
        };
        let (g, _) = findings(&[same_device], 0);
        assert!(g[0].fix.contains("one in-order queue"), "{}", g[0].fix);
        assert!(!f[0].fix.contains("`const`"), "{}", f[0].fix);
        // One out-of-order queue: a barrier; a declared write: how to say it is only read.
        assert!(f[1].fix.contains("barrier") && f[1].fix.contains("`const`"));
        assert!(
            f[1].title
                .contains("command #3 (device #1) and command #4 (device #1)")
        );
        // Past the bound: one finding counts the rest, and those the builder could not keep.
        let many: Vec<RaceFact> = (0..SHOWN as u64 + 3)
            .map(|n| race(2 * n, 2, "known"))
            .collect();
        let (f, _) = findings(&many, 5);
        assert_eq!(f.len(), SHOWN + 1);
        assert!(
            f[SHOWN].title.starts_with("8 more possible data races"),
            "{}",
            f[SHOWN].title
        );
        assert_eq!(f[SHOWN].confidence, None);
    }

    #[test]
    fn a_race_stands_for_the_commands_behind_its_second_on_one_queue() {
        let race = |second: u64, queue: u32| RaceFact {
            object: 0x10,
            confidence: "known".into(),
            first: side(2, 1, "writes", (0, 8)),
            second: side(second, queue, "reads", (0, 8)),
        };
        // #3 and #5 on queue 2 behind it, #4 on queue 3: two findings, not three.
        let (f, _) = findings(&[race(3, 2), race(4, 3), race(5, 2)], 0);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f[0].title
                .ends_with("and command #3 (device #2), and 1 command behind it")
        );
        assert!(
            f[0].evidence[2].starts_with("command #5 ")
                && f[0].evidence[2].ends_with("behind command #3 on its queue")
        );
        assert!(
            f[0].fix.contains("orders #5 after it as well"),
            "{}",
            f[0].fix
        );
        assert!(
            f[1].title.ends_with("and command #4 (device #3)"),
            "{}",
            f[1].title
        );
        // Another object, another confidence, or a race within the first's own (out-of-order)
        // queue: its own finding.
        let other = RaceFact {
            object: 0x20,
            ..race(5, 2)
        };
        assert_eq!(findings(&[race(3, 2), other], 0).0.len(), 2);
        let declared = RaceFact {
            confidence: "declared".into(),
            ..race(5, 2)
        };
        assert_eq!(findings(&[race(3, 2), declared], 0).0.len(), 2);
        assert_eq!(findings(&[race(3, 1), race(5, 1)], 0).0.len(), 2);
    }

    #[test]
    fn races_clxfer_had_to_assume_are_one_finding_apart() {
        let assumed = |n: u64| RaceFact {
            object: 0x10,
            confidence: "assumed".into(),
            first: side(n, 1, "may write (assumed)", (0, u64::MAX)),
            second: side(n + 1, 2, "reads", (0, 8)),
        };
        let known = RaceFact {
            confidence: "known".into(),
            ..assumed(9)
        };
        let (sure, unjudged) = findings(&[assumed(1), known, assumed(3)], 0);
        assert_eq!(sure.len(), 1, "the known race alone is said");
        let u = unjudged.expect("the assumed ones are not hidden");
        assert_eq!(u.kind, "unjudged-race");
        assert!(u.title.starts_with("2 pairs of commands"), "{}", u.title);
        assert!(u.evidence[0].contains("may write (assumed: the driver keeps no argument"));
        assert!(u.fix.contains("-cl-kernel-arg-info"));
        assert_eq!(u.confidence.as_deref(), Some("assumed"));
    }
}
