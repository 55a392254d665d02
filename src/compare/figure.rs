//! One figure before and after, and what its change means: the bottom of `compare`, what every
//! comparison in it is made of.
//!
//! What is noise, and what a change: counts, bytes, paths and the cost model's projected times
//! are exact (the same calls project to the same time), so any change of them is one. A measured
//! figure (a device time, a median, the wall time) changes from run to run by more than one
//! run's own calls show (on this project's CPU device, two runs of one program differ by 10–30%
//! in device time, beyond the 10th–90th percentile band of either run's calls), so it is judged
//! only against runs: with two or more a side, it changed when Welch's t-test on the runs says
//! so at [`ALPHA`].
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

/// The false-alarm rate a measured figure's change is judged at, with two runs or more a side:
/// a report holds a few dozen figures, so at 1% one run in several would show a change that is
/// not one, and at this rate about one in a hundred.
pub const ALPHA: f64 = 0.001;

/// Welch's t-test: whether the means of `a` and `b` (two runs or more each) differ at
/// [`ALPHA`], two-sided.
fn differ(a: &[f64], b: &[f64]) -> bool {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let moments = |v: &[f64]| {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (n, mean, var)
    };
    let ((na, ma, va), (nb, mb, vb)) = (moments(a), moments(b));
    let se2 = va / na + vb / nb;
    if se2 == 0.0 {
        // Every run alike on each side: the means differ or not.
        return ma != mb;
    }
    let t = (ma - mb).abs() / se2.sqrt();
    let df = se2.powi(2) / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    StudentsT::new(0.0, 1.0, df.max(1.0))
        .map(|d| t > d.inverse_cdf(1.0 - ALPHA / 2.0))
        .unwrap_or(false)
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

    /// A measured figure. With two runs or more a side, it changed when the runs' means differ
    /// by more than `margin` (a sampled estimate's) and by Welch's t-test at [`ALPHA`]. With one
    /// run on a side, its run-to-run noise is not known: it is noise when `quiet` (the one run's
    /// own spread says so: [`Band::overlap`]) or within `margin`, and otherwise not judged.
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
        let verdict = if (b - a).abs() <= margin {
            Verdict::Noise
        } else if before.len() >= 2 && after.len() >= 2 {
            match differ(before, after) {
                true => by_sense(b, a, sense),
                false => Verdict::Noise,
            }
        } else if quiet {
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
                "runs that overlap",
                Figure::measured(
                    &[10.0, 14.0, 12.0],
                    &[13.0, 16.0, 11.0],
                    MoreIsWorse,
                    false,
                    0.0,
                ),
                Verdict::Noise,
            ),
            (
                "runs apart, but too few and too spread to tell",
                Figure::measured(&[10.0, 12.0], &[15.0, 16.0], MoreIsWorse, false, 0.0),
                Verdict::Noise,
            ),
            (
                "runs far apart",
                Figure::measured(
                    &[10.0, 10.1, 9.9, 10.0],
                    &[20.0, 20.2, 19.9, 20.1],
                    MoreIsWorse,
                    true,
                    0.0,
                ),
                Verdict::Worse,
            ),
            (
                "runs far apart, faster",
                Figure::measured(
                    &[20.0, 20.2, 19.9],
                    &[10.0, 10.1, 9.9],
                    MoreIsWorse,
                    false,
                    0.0,
                ),
                Verdict::Better,
            ),
            (
                "every run alike, and apart",
                Figure::measured(&[5.0, 5.0], &[6.0, 6.0], MoreIsWorse, false, 0.0),
                Verdict::Worse,
            ),
            (
                "runs apart but for the margin",
                Figure::measured(
                    &[10.0, 10.1, 9.9],
                    &[15.0, 15.1, 14.9],
                    MoreIsWorse,
                    false,
                    6.0,
                ),
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
