//! One figure before and after, and what its change means: the bottom of `compare`, what every
//! comparison in it is made of.
//!
//! What is noise, and what a change: counts, bytes, paths and the cost model's projected times
//! are exact (the same calls project to the same time), so any change of them is one. A measured
//! figure (a device time, a median, the wall time) changes from run to run by more than one
//! run's own calls show (on this project's CPU device, two runs of one program differ by 10–30%
//! in device time, beyond the 10th–90th percentile band of either run's calls), so it is judged
//! only against runs: with two or more a side, it changed when the sides' ranges do not meet.
//! With one run a side, what the run's own spread and its sampled estimates' margins cover is
//! noise, and what they do not is shown, not judged ([`Verdict::Unjudged`]).

use serde::Serialize;

/// How a figure moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Exactly equal.
    Same,
    /// Different, within the runs' noise.
    Noise,
    /// Beyond the noise, for the better or the worse.
    Better,
    Worse,
    /// Beyond the noise, a figure neither better nor worse for being larger (calls, bytes).
    Changed,
    /// Only after, or only before.
    New,
    Gone,
    /// No measure of its noise: shown, not judged.
    Unjudged,
}

impl Verdict {
    /// A change the verdict must mention.
    pub fn changed(self) -> bool {
        !matches!(self, Verdict::Same | Verdict::Noise | Verdict::Unjudged)
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Noise => "within noise",
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Changed => "changed",
            Verdict::New => "new",
            Verdict::Gone => "gone",
            Verdict::Unjudged => "not judged",
        }
    }
}

/// Whether more of a figure is better, worse or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sense {
    MoreIsBetter,
    MoreIsWorse,
    Neutral,
}

/// A figure on both sides (`None`: absent there): the median over a side's runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figure {
    pub before: Option<f64>,
    pub after: Option<f64>,
    pub verdict: Verdict,
}

fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

fn range(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

impl Figure {
    fn present(before: &[f64], after: &[f64]) -> Result<(f64, f64), Figure> {
        let (b, a) = (median(before), median(after));
        let verdict = match (b, a) {
            (None, None) => Verdict::Same,
            (Some(_), None) => Verdict::Gone,
            (None, Some(_)) => Verdict::New,
            (Some(x), Some(y)) if x == y => Verdict::Same,
            (Some(x), Some(y)) => return Ok((x, y)),
        };
        Err(Figure {
            before: b,
            after: a,
            verdict,
        })
    }

    /// An exact figure (a count, bytes, a projected time): any difference is a change. `before`
    /// and `after` hold its value in each run of the side.
    pub fn exact(before: &[f64], after: &[f64], sense: Sense) -> Figure {
        match Figure::present(before, after) {
            Err(f) => f,
            Ok((b, a)) => Figure {
                before: Some(b),
                after: Some(a),
                verdict: by_sense(b, a, sense),
            },
        }
    }

    /// A measured figure. With two runs or more a side, it changed when the sides' ranges,
    /// widened by `margin` (a sampled estimate's), do not meet. With one run on a side, its
    /// run-to-run noise is not known: it is noise when `quiet` (the one run's own spread says so:
    /// [`Band::overlap`]) or within `margin`, and otherwise not judged.
    pub fn measured(
        before: &[f64],
        after: &[f64],
        sense: Sense,
        quiet: bool,
        margin: f64,
    ) -> Figure {
        let (b, a) = match Figure::present(before, after) {
            Err(f) => return f,
            Ok(x) => x,
        };
        let verdict = if before.len() >= 2 && after.len() >= 2 {
            let ((bl, bh), (al, ah)) = (range(before), range(after));
            if al <= bh + margin && bl <= ah + margin {
                Verdict::Noise
            } else {
                by_sense(b, a, sense)
            }
        } else if quiet || (b - a).abs() <= margin {
            Verdict::Noise
        } else {
            Verdict::Unjudged
        };
        Figure {
            before: Some(b),
            after: Some(a),
            verdict,
        }
    }

    /// The relative change, after over before less one (`None` when either is absent or before
    /// is 0).
    pub fn relative(&self) -> Option<f64> {
        match (self.before, self.after) {
            (Some(b), Some(a)) if b != 0.0 => Some(a / b - 1.0),
            _ => None,
        }
    }
}

fn by_sense(before: f64, after: f64, sense: Sense) -> Verdict {
    match sense {
        Sense::Neutral => Verdict::Changed,
        Sense::MoreIsBetter if after > before => Verdict::Better,
        Sense::MoreIsWorse if after < before => Verdict::Better,
        _ => Verdict::Worse,
    }
}

/// A median with the band of its run's calls (10th to 90th percentile).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
}

impl Band {
    pub fn new(median: Option<f64>, p10: Option<f64>, p90: Option<f64>) -> Option<Band> {
        let median = median?;
        Some(Band {
            median,
            p10: p10.unwrap_or(median).min(median),
            p90: p90.unwrap_or(median).max(median),
        })
    }

    fn holds(&self, v: f64) -> bool {
        self.p10 <= v && v <= self.p90
    }

    /// Two runs' medians differ by noise: either lies inside the other's band.
    pub fn overlap(a: &Band, b: &Band) -> bool {
        a.holds(b.median) || b.holds(a.median)
    }

    /// Some run before and some run after overlap so.
    pub fn any_overlap(before: &[Band], after: &[Band]) -> bool {
        before
            .iter()
            .any(|x| after.iter().any(|y| Band::overlap(x, y)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_by_presence_sense_runs_and_noise() {
        use Sense::*;
        let cases: &[(&str, Figure, Verdict)] = &[
            (
                "absent both",
                Figure::exact(&[], &[], Neutral),
                Verdict::Same,
            ),
            ("gone", Figure::exact(&[1.0], &[], Neutral), Verdict::Gone),
            ("new", Figure::exact(&[], &[1.0], Neutral), Verdict::New),
            (
                "equal",
                Figure::exact(&[2.0], &[2.0], MoreIsWorse),
                Verdict::Same,
            ),
            (
                "time down",
                Figure::exact(&[2.0], &[1.0], MoreIsWorse),
                Verdict::Better,
            ),
            (
                "time up",
                Figure::exact(&[1.0], &[2.0], MoreIsWorse),
                Verdict::Worse,
            ),
            (
                "GB/s up",
                Figure::exact(&[1.0], &[2.0], MoreIsBetter),
                Verdict::Better,
            ),
            (
                "calls up",
                Figure::exact(&[1.0], &[2.0], Neutral),
                Verdict::Changed,
            ),
            (
                "one run, quiet",
                Figure::measured(&[10.0], &[11.0], MoreIsWorse, true, 0.0),
                Verdict::Noise,
            ),
            (
                "one run, loud",
                Figure::measured(&[10.0], &[20.0], MoreIsWorse, false, 0.0),
                Verdict::Unjudged,
            ),
            (
                "one run, in margin",
                Figure::measured(&[10.0], &[12.0], MoreIsWorse, false, 3.0),
                Verdict::Noise,
            ),
            (
                "runs whose ranges meet",
                Figure::measured(&[10.0, 14.0, 12.0], &[13.0, 16.0], MoreIsWorse, false, 0.0),
                Verdict::Noise,
            ),
            (
                "runs apart",
                Figure::measured(&[10.0, 11.0, 12.0], &[15.0, 16.0], MoreIsWorse, true, 0.0),
                Verdict::Worse,
            ),
            (
                "runs apart but for the margin",
                Figure::measured(&[10.0, 12.0], &[15.0, 16.0], MoreIsWorse, false, 3.0),
                Verdict::Noise,
            ),
        ];
        for (what, f, want) in cases {
            assert_eq!(f.verdict, *want, "{what}");
        }
        let b = |m, lo, hi| Band::new(Some(m), Some(lo), Some(hi)).unwrap();
        assert!(Band::overlap(&b(10.0, 9.0, 12.0), &b(11.0, 10.5, 11.5)));
        assert!(!Band::overlap(&b(10.0, 9.0, 12.0), &b(20.0, 18.0, 22.0)));
        assert_eq!(
            Figure::measured(&[3.0, 1.0, 2.0], &[5.0, 4.0], Neutral, false, 0.0).before,
            Some(2.0)
        );
    }
}
