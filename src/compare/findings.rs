//! The findings of two runs compared: matched by kind, device and title's shape; for each that
//! went, whether it kept its promise (the time its transfers took off the critical path, or the
//! device memory it freed) within [`PROMISE_TOLERANCE`].

use super::figure::Verdict;
use crate::report::{Finding, Report};
use serde::Serialize;

/// A finding's saving counts as realised when the time saved is at least this share of it below
/// what it promised: the promise is the replay's (how much sooner the run's command graph ends),
/// the realised saving the transfers' own time, and the two differ by what overlapped them.
pub const PROMISE_TOLERANCE: f64 = 0.10;

/// What a finding that went away promised, and what was saved.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Realised {
    pub promised_ns: u64,
    /// The drop in the time of the reads and writes of the finding's direction on its device.
    pub saved_ns: i64,
    /// Within [`PROMISE_TOLERANCE`] below the promise, or more.
    pub as_promised: bool,
}

/// What a memory finding that went away promised to free, and what its device's peak fell by.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Freed {
    pub promised_bytes: u64,
    /// The drop in the device's peak of buffers and allocations.
    pub freed_bytes: i64,
    /// Within [`PROMISE_TOLERANCE`] of the promise.
    pub as_promised: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct FindingDiff {
    pub kind: String,
    pub device: u32,
    /// `gone`, `new`, or `same` (it remains).
    pub state: Verdict,
    pub title: String,
    pub misuse: bool,
    pub saving_before_ns: Option<u64>,
    pub saving_after_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub realised: Option<Realised>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freed: Option<Freed>,
}

/// A finding's title with its numbers left out: what names the same finding in two runs
/// (`8 H2D transfers … on device #1` and `16 H2D transfers … on device #1` are one).
fn shape(title: &str) -> String {
    let mut out = String::new();
    let (mut in_number, mut prev) = (false, ' ');
    for c in title.chars() {
        // A number starts where a word does (the 2 of `H2D` is no number).
        let digit = c.is_ascii_digit() && (in_number || !prev.is_alphanumeric());
        if digit || (in_number && (c == '.' || c == ',')) {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
        prev = c;
    }
    out
}

/// The direction a finding's title names (`H2D`, `D2H`, `D2D`), if one.
fn direction_of(title: &str) -> Option<&'static str> {
    ["H2D", "D2H", "D2D"]
        .into_iter()
        .find(|d| title.split(|c: char| !c.is_alphanumeric()).any(|w| w == *d))
}

/// Findings matched by kind, device and title's shape, then by kind and device in order.
pub(super) fn findings_diff(before: &[&Report], after: &[&Report]) -> Vec<FindingDiff> {
    let (b, a) = (&before[0].findings, &after[0].findings);
    let mut taken = vec![false; a.len()];
    let mut matched: Vec<Option<usize>> = vec![None; b.len()];
    for exact in [true, false] {
        for (i, f) in b.iter().enumerate() {
            if matched[i].is_some() {
                continue;
            }
            let hit = a.iter().enumerate().position(|(j, g)| {
                !taken[j]
                    && g.kind == f.kind
                    && g.device == f.device
                    && (!exact || shape(&g.title) == shape(&f.title))
            });
            if let Some(j) = hit {
                taken[j] = true;
                matched[i] = Some(j);
            }
        }
    }
    let mut out = Vec::new();
    for (i, f) in b.iter().enumerate() {
        let still = matched[i].map(|j| &a[j]);
        out.push(FindingDiff {
            kind: f.kind.to_string(),
            device: f.device,
            state: if still.is_some() {
                Verdict::Same
            } else {
                Verdict::Gone
            },
            title: still.map_or(&f.title, |g| &g.title).clone(),
            misuse: f.misuse,
            saving_before_ns: Some(f.saving_ns),
            saving_after_ns: still.map(|g| g.saving_ns),
            realised: (still.is_none() && f.saving_ns > 0)
                .then(|| realised(f, before, after))
                .flatten(),
            freed: (still.is_none() && f.saving_bytes > 0)
                .then(|| freed(f, before, after))
                .flatten(),
        });
    }
    for (j, g) in a.iter().enumerate().filter(|(j, _)| !taken[*j]) {
        let _ = j;
        out.push(FindingDiff {
            kind: g.kind.to_string(),
            device: g.device,
            state: Verdict::New,
            title: g.title.clone(),
            misuse: g.misuse,
            saving_before_ns: None,
            saving_after_ns: Some(g.saving_ns),
            realised: None,
            freed: None,
        });
    }
    // Misuses first, then what went, what came, what stayed.
    let rank = |f: &FindingDiff| {
        let state = match f.state {
            Verdict::Gone => 0,
            Verdict::New => 1,
            _ => 2,
        };
        (!f.misuse, state)
    };
    out.sort_by_key(rank);
    out
}

/// The time saved in the direction finding `f` names (both, for the host side pinned: one
/// finding for both directions, issue #57): the drop in the time its reads and writes take on
/// the run's critical path, as projected where the rules were forced. The promise is the
/// replay's (how much sooner the run ends), which also counts the host work the fix lets
/// overlap; this counts the transfers only, which the cost model gives alike on any machine,
/// clear of PoCL's host and kernel times (a build 5 ms slower is not the fix's).
fn realised(f: &Finding, before: &[&Report], after: &[&Report]) -> Option<Realised> {
    let dir = direction_of(&f.title);
    if dir.is_none() && f.kind != crate::report::FindingKind::StagedPageable {
        return None;
    }
    let ours = |what: &str| {
        let mut words = what.split(' ');
        let verb = words.next().unwrap_or("");
        let d = words.next().unwrap_or("");
        matches!(verb, "Write" | "Read" | "Memcpy") && d != "D2D" && dir.is_none_or(|dir| d == dir)
    };
    let path = |side: &[&Report]| -> Option<f64> {
        let times: Vec<f64> = (side.iter())
            .filter_map(|r| r.bounds.as_ref())
            .map(|b| {
                (b.top.iter())
                    .filter(|c| ours(&c.what))
                    .map(|c| c.ns as f64)
                    .sum()
            })
            .collect();
        (!times.is_empty()).then(|| times.iter().sum::<f64>() / times.len() as f64)
    };
    let saved = (path(before)? - path(after)?).round() as i64;
    Some(Realised {
        promised_ns: f.saving_ns,
        saved_ns: saved,
        as_promised: saved as f64 >= f.saving_ns as f64 * (1.0 - PROMISE_TOLERANCE),
    })
}

/// The device memory a gone memory finding freed: the fall of its device's peak (the mean of
/// each side's runs).
fn freed(f: &Finding, before: &[&Report], after: &[&Report]) -> Option<Freed> {
    let peak = |side: &[&Report]| -> Option<f64> {
        let peaks: Vec<f64> = (side.iter())
            .filter_map(|r| r.devices.iter().find(|d| d.index == f.device))
            .filter_map(|d| d.resident_peak_bytes)
            .map(|b| b as f64)
            .collect();
        (!peaks.is_empty()).then(|| peaks.iter().sum::<f64>() / peaks.len() as f64)
    };
    let freed = (peak(before)? - peak(after)?).round() as i64;
    let promised = f.saving_bytes as f64;
    Some(Freed {
        promised_bytes: f.saving_bytes,
        freed_bytes: freed,
        as_promised: (freed as f64 - promised).abs() <= promised * PROMISE_TOLERANCE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_match_without_their_numbers_and_name_their_direction() {
        let cases = [
            (
                "8 H2D transfers of 1.00 MiB on device #1",
                "# H2D transfers of # MiB on device ##",
            ),
            ("16,384 D2H", "# D2H"),
        ];
        for (title, want) in cases {
            assert_eq!(shape(title), want, "{title}");
        }
        assert_eq!(
            direction_of("8 H2D transfers from pageable memory"),
            Some("H2D")
        );
        assert_eq!(direction_of("a D2H/H2D pair"), Some("H2D"));
        assert_eq!(
            direction_of("ALLOC_HOST_PTR buffers took device memory"),
            None
        );
    }
}
