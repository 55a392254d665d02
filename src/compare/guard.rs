//! `clxfer check --require RULE`: a run's report held to rules, for CI. The vocabulary:
//!
//! - `no race`: no possible data race found (the report's `races`: every pair, not the findings
//!   that list them, which stop after a few and count the rest); `no misuse`: no finding
//!   that says the program does something wrong (races, hand-offs through the host, migrations
//!   on the source's queue, buffers initialised twice).
//! - `finding:KIND OP N`: how many findings of KIND (a name of `report::FindingKind`, or its last
//!   words: `held-host` for `nonblocking-held-host`); `findings OP N`: findings not minor.
//! - `PATH_bytes OP VALUE`: bytes moved on a path (`staged_bytes`, `pinned_bytes`, `zero-copy_bytes`, `host-copy_bytes`,
//!   …) over every device and direction; VALUE in bytes (`0`, `64MiB`, `1GB`) or as a share of all
//!   bytes moved (`1%`).
//! - `DIR.PATH.FIELD OP VALUE`: one row of the transfers tables (`h2d.pinned.median_gbps>=40`;
//!   `*` for any direction or path): FIELD is `calls`, `bytes`, `time` (the device time,
//!   projected where the device's times are the cost model's), `median_gbps` or `p90_gbps`. A
//!   row the run does not have fails a `>=`/`>` rule and holds a `<=`/`<`/`=` one (its figure is 0),
//!   except for the GB/s, which it fails.
//! - `transfer_time OP VALUE`: every transfer's time summed (`5ms`, or `50%` of the wall time);
//!   `wall_time OP VALUE`.
//!
//! OP is `<=`, `<`, `>=`, `>` or `=`. Against a baseline run (`--baseline FILE`), VALUE may be a
//! change from the baseline's figure: `transfer_time<=+5%`, `staged_bytes<=+0`,
//! `h2d.pinned.median_gbps>=-10%`. Each process of the run is held to every rule (the baseline's
//! process of the same program, or its only one).

use crate::model::classification::{Direction, Path};
use crate::report::{FindingKind, Report};
use crate::units::{bytes, duration, gbps};

/// A rule, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// As the user wrote it.
    pub text: String,
    metric: Metric,
    op: Op,
    value: Value,
}

#[derive(Debug, Clone, PartialEq)]
enum Metric {
    /// Findings whose kind is one of these (empty: every finding not minor).
    Findings(Vec<FindingKind>),
    PathBytes(&'static str),
    Row {
        dir: Option<&'static str>,
        path: Option<&'static str>,
        field: Field,
    },
    TransferTime,
    WallTime,
    /// Possible data races (the report's `races`).
    Races,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Field {
    Calls,
    Bytes,
    Time,
    MedianGbps,
    P90Gbps,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Le,
    Lt,
    Ge,
    Gt,
    Eq,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    /// In the metric's own unit (bytes, ns, GB/s, a count).
    Plain(f64),
    /// A share of the whole: of all bytes moved (bytes), of the wall time (times).
    Share(f64),
    /// A change from the baseline: relative (`+5%` is 0.05) or absolute.
    Relative(f64),
    Absolute(f64),
}

/// How the metric's figures read.
#[derive(Clone, Copy, PartialEq)]
enum Unit {
    Count,
    Bytes,
    Ns,
    Gbps,
}

impl Metric {
    fn unit(&self) -> Unit {
        match self {
            Metric::Findings(_) | Metric::Races => Unit::Count,
            Metric::PathBytes(_) => Unit::Bytes,
            Metric::Row { field, .. } => match field {
                Field::Calls => Unit::Count,
                Field::Bytes => Unit::Bytes,
                Field::Time => Unit::Ns,
                Field::MedianGbps | Field::P90Gbps => Unit::Gbps,
            },
            Metric::TransferTime | Metric::WallTime => Unit::Ns,
        }
    }
}

fn show(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Count => format!("{}", v.round() as i64),
        Unit::Bytes => bytes(v.max(0.0) as u64),
        Unit::Ns => duration(v.max(0.0) as u64),
        Unit::Gbps => format!("{} GB/s", gbps(v)),
    }
}

/// What the rules may say, for a message about one that does not parse.
pub const VOCABULARY: &str = "no race | no misuse | finding:KIND OP N | findings OP N | \
                              PATH_bytes OP VALUE | DIR.PATH.FIELD OP VALUE (FIELD: calls, bytes, \
                              time, median_gbps, p90_gbps) | transfer_time OP VALUE | wall_time OP \
                              VALUE; OP: <= < >= > =; VALUE: a number with its unit (64MiB, 5ms, \
                              40), a share (1%), or against --baseline a change (+5%, +0)";

/// Parses one rule; the error names what is wrong with it.
pub fn parse(text: &str) -> Result<Rule, String> {
    let t = text.trim();
    let squeezed: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    let rule = |metric, op, value| Rule {
        text: t.to_string(),
        metric,
        op,
        value,
    };
    match squeezed.to_ascii_lowercase().as_str() {
        "no race" | "no races" => {
            return Ok(rule(Metric::Races, Op::Eq, Value::Plain(0.0)));
        }
        "no misuse" | "no misuses" => {
            return Ok(rule(
                Metric::Findings(
                    FindingKind::ALL
                        .iter()
                        .copied()
                        .filter(|k| k.misuse())
                        .collect(),
                ),
                Op::Eq,
                Value::Plain(0.0),
            ));
        }
        _ => {}
    }
    let at = t
        .find(['<', '>', '='])
        .ok_or_else(|| format!("`{t}`: no comparison (<=, <, >=, >, =)"))?;
    let (lhs, rest) = (t[..at].trim(), &t[at..]);
    let (op, rhs) = [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("==", Op::Eq),
        ("<", Op::Lt),
        (">", Op::Gt),
        ("=", Op::Eq),
    ]
    .into_iter()
    .find_map(|(w, op)| rest.strip_prefix(w).map(|r| (op, r.trim())))
    .expect("a comparison starts the rest");
    let metric = metric(lhs).map_err(|e| format!("`{t}`: {e}"))?;
    let value = value(rhs, metric.unit()).map_err(|e| format!("`{t}`: {e}"))?;
    Ok(rule(metric, op, value))
}

fn metric(lhs: &str) -> Result<Metric, String> {
    let l = lhs.to_ascii_lowercase();
    if l == "findings" {
        return Ok(Metric::Findings(Vec::new()));
    }
    if l == "transfer_time" {
        return Ok(Metric::TransferTime);
    }
    if l == "wall_time" {
        return Ok(Metric::WallTime);
    }
    if let Some(kind) = l.strip_prefix("finding:") {
        let kinds: Vec<FindingKind> = (FindingKind::ALL.iter().copied())
            .filter(|k| k.as_str() == kind || k.as_str().ends_with(&format!("-{kind}")))
            .collect();
        if kinds.is_empty() {
            let all: Vec<&str> = FindingKind::ALL.iter().map(|k| k.as_str()).collect();
            return Err(format!(
                "no finding is called {kind} (kinds: {})",
                all.join(", ")
            ));
        }
        return Ok(Metric::Findings(kinds));
    }
    if let Some(p) = l.strip_suffix("_bytes") {
        return path(p)
            .map(Metric::PathBytes)
            .ok_or_else(|| format!("no path is called {p} (paths: {})", paths()));
    }
    let parts: Vec<&str> = l.split('.').collect();
    if let [dir, p, field] = parts[..] {
        let dir = match dir {
            "*" => None,
            d => Some(
                (Direction::ALL.iter().map(|x| x.as_str()))
                    .find(|x| x.eq_ignore_ascii_case(d))
                    .ok_or_else(|| format!("no direction is called {d} (h2d, d2h, d2d, h2h, *)"))?,
            ),
        };
        let p = match p {
            "*" => None,
            p => Some(
                path(p).ok_or_else(|| format!("no path is called {p} (paths: {}, *)", paths()))?,
            ),
        };
        let field = match field {
            "calls" => Field::Calls,
            "bytes" => Field::Bytes,
            "time" => Field::Time,
            "median_gbps" => Field::MedianGbps,
            "p90_gbps" => Field::P90Gbps,
            f => {
                return Err(format!(
                    "no field is called {f} (calls, bytes, time, median_gbps, p90_gbps)"
                ));
            }
        };
        return Ok(Metric::Row {
            dir,
            path: p,
            field,
        });
    }
    Err(format!("`{lhs}` is not a figure clxfer knows"))
}

fn path(word: &str) -> Option<&'static str> {
    Path::ALL.iter().map(|p| p.as_str()).find(|p| *p == word)
}

fn paths() -> String {
    Path::ALL
        .iter()
        .map(|p| p.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn value(rhs: &str, unit: Unit) -> Result<Value, String> {
    let r = rhs.replace(' ', "");
    if r.is_empty() {
        return Err("no value after the comparison".into());
    }
    let signed = r.starts_with('+') || r.starts_with('-');
    if let Some(pct) = r.strip_suffix('%') {
        let n: f64 = pct
            .parse()
            .map_err(|_| format!("`{rhs}` is not a percentage"))?;
        if signed {
            return Ok(Value::Relative(n / 100.0));
        }
        if matches!(unit, Unit::Count | Unit::Gbps) {
            return Err(
                "a share (%) is for bytes (of all moved) and times (of the wall time)".into(),
            );
        }
        return Ok(Value::Share(n / 100.0));
    }
    let split = r
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-' || c == 'e'))
        .unwrap_or(r.len());
    let (num, suffix) = r.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{rhs}` is not a number"))?;
    let scale = match (unit, suffix.to_ascii_lowercase().as_str()) {
        (_, "") => 1.0,
        (Unit::Bytes, "b") => 1.0,
        (Unit::Bytes, "kib") => 1024.0,
        (Unit::Bytes, "mib") => 1024.0 * 1024.0,
        (Unit::Bytes, "gib") => 1024.0 * 1024.0 * 1024.0,
        (Unit::Bytes, "tib") => 1024f64.powi(4),
        (Unit::Bytes, "kb") => 1e3,
        (Unit::Bytes, "mb") => 1e6,
        (Unit::Bytes, "gb") => 1e9,
        (Unit::Bytes, "tb") => 1e12,
        (Unit::Ns, "ns") => 1.0,
        (Unit::Ns, "us") | (Unit::Ns, "µs") => 1e3,
        (Unit::Ns, "ms") => 1e6,
        (Unit::Ns, "s") => 1e9,
        (Unit::Gbps, "gb/s") => 1.0,
        (_, s) => {
            let units = match unit {
                Unit::Bytes => "B, KiB, MiB, GiB, TiB, KB, MB, GB, TB",
                Unit::Ns => "ns, us, ms, s",
                Unit::Gbps => "GB/s",
                Unit::Count => "none: a count",
            };
            return Err(format!("`{s}` is not a unit of this figure ({units})"));
        }
    };
    Ok(if signed {
        Value::Absolute(n * scale)
    } else {
        Value::Plain(n * scale)
    })
}

impl Rule {
    /// Whether it compares with a baseline.
    pub fn needs_baseline(&self) -> bool {
        matches!(self.value, Value::Relative(_) | Value::Absolute(_))
    }

    /// Holds `r` to the rule (against `baseline`, the same program's run, for a change): `None`
    /// when it holds, else why not.
    pub fn broken(&self, r: &Report, baseline: Option<&Report>) -> Option<String> {
        let unit = self.metric.unit();
        let got = figure(&self.metric, r);
        let (limit, says) = match self.value {
            Value::Plain(v) => (Some(v), show(unit, v)),
            Value::Share(s) => {
                let whole = match unit {
                    Unit::Bytes => all_bytes(r),
                    _ => r.wall_ns as f64,
                };
                let limit = s * whole;
                let of = format!("{}% of {}", s * 100.0, show(unit, whole));
                (Some(limit), format!("{} ({of})", show(unit, limit)))
            }
            Value::Relative(_) | Value::Absolute(_) => {
                let Some(b) = baseline else {
                    return Some(format!(
                        "no run of {} in the baseline to compare with",
                        r.program
                    ));
                };
                let base = figure(&self.metric, b);
                match (base, self.value) {
                    (None, _) => (None, "the baseline has no such figure".into()),
                    (Some(x), Value::Relative(d)) => (
                        Some(x * (1.0 + d)),
                        format!(
                            "{} (the baseline's {} {:+}%)",
                            show(unit, x * (1.0 + d)),
                            show(unit, x),
                            d * 100.0
                        ),
                    ),
                    (Some(x), Value::Absolute(d)) => (
                        Some(x + d),
                        format!(
                            "{} (the baseline's {} {}{})",
                            show(unit, x + d),
                            show(unit, x),
                            if d < 0.0 { "-" } else { "+" },
                            show(unit, d.abs())
                        ),
                    ),
                    _ => unreachable!(),
                }
            }
        };
        let holds = match (got, limit) {
            (Some(g), Some(l)) => match self.op {
                Op::Le => g <= l,
                Op::Lt => g < l,
                Op::Ge => g >= l,
                Op::Gt => g > l,
                Op::Eq => (g - l).abs() < 1e-9,
            },
            _ => false,
        };
        if holds {
            return None;
        }
        let had = got.map_or("none".to_string(), |g| show(unit, g));
        let op = match self.op {
            Op::Le => "<=",
            Op::Lt => "<",
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Eq => "=",
        };
        Some(format!(
            "{}: the run has {had}; the rule wants {op} {says}",
            self.text
        ))
    }
}

fn all_bytes(r: &Report) -> f64 {
    r.devices
        .iter()
        .flat_map(|d| &d.transfers)
        .map(|t| t.bytes as f64)
        .sum()
}

/// The run's figure for `m` (`None`: it has none, a rate with no row).
fn figure(m: &Metric, r: &Report) -> Option<f64> {
    let rows = || {
        r.devices
            .iter()
            .flat_map(|d| d.transfers.iter().map(move |t| (d, t)))
    };
    let time = |d: &crate::report::DeviceReport, t: &crate::report::Row| {
        t.time_ns(d.times_projected()) as f64
    };
    match m {
        Metric::Races => Some(match r.races {
            Some(n) => n as f64,
            None => (r.findings.iter())
                .filter(|f| f.kind == FindingKind::PossibleRace)
                .count() as f64,
        }),
        Metric::Findings(kinds) => Some(
            (r.findings.iter())
                .filter(|f| {
                    if kinds.is_empty() {
                        !f.minor
                    } else {
                        kinds.contains(&f.kind)
                    }
                })
                .count() as f64,
        ),
        Metric::PathBytes(p) => Some(
            rows()
                .filter(|(_, t)| t.path == *p)
                .map(|(_, t)| t.bytes as f64)
                .sum(),
        ),
        Metric::TransferTime => Some(rows().map(|(d, t)| time(d, t)).sum()),
        Metric::WallTime => Some(r.wall_ns as f64),
        Metric::Row { dir, path, field } => {
            let chosen: Vec<_> = rows()
                .filter(|(_, t)| {
                    dir.is_none_or(|d| t.direction == d) && path.is_none_or(|p| t.path == p)
                })
                .collect();
            match field {
                Field::Calls => Some(chosen.iter().map(|(_, t)| t.calls as f64).sum()),
                Field::Bytes => Some(chosen.iter().map(|(_, t)| t.bytes as f64).sum()),
                Field::Time => Some(chosen.iter().map(|(d, t)| time(d, t)).sum()),
                // Of several rows, the slowest's (a rule on a rate holds for every row it names).
                Field::MedianGbps => chosen
                    .iter()
                    .filter_map(|(_, t)| t.median_gbps)
                    .reduce(f64::min),
                Field::P90Gbps => chosen
                    .iter()
                    .filter_map(|(_, t)| t.p90_gbps)
                    .reduce(f64::min),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_or_say_what_is_wrong() {
        for ok in [
            "no race",
            "No  Race",
            "no misuse",
            "staged_bytes<=1%",
            "staged_bytes <= 64MiB",
            "pinned_bytes>=1GB",
            "finding:held-host=0",
            "finding:staged-pageable<=2",
            "findings=0",
            "h2d.pinned.median_gbps>=40",
            "*.staged.calls=0",
            "d2h.*.time<5ms",
            "transfer_time<=+5%",
            "transfer_time<=50%",
            "wall_time<2s",
            "staged_bytes<=+0",
        ] {
            assert!(parse(ok).is_ok(), "{ok}: {:?}", parse(ok));
        }
        for (bad, says) in [
            ("staged_bytes", "no comparison"),
            ("finding:nope=0", "no finding is called nope"),
            ("slow_bytes<=0", "no path is called slow"),
            ("x2y.pinned.bytes>=1", "no direction"),
            ("h2d.pinned.speed>=1", "no field"),
            ("h2d.pinned.median_gbps>=10%", "a share"),
            ("staged_bytes<=5ms", "not a unit"),
            ("transfer_time<=", "no value"),
            ("frobs>3", "not a figure"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(parse("transfer_time<=+5%").unwrap().needs_baseline());
        assert!(!parse("transfer_time<=5%").unwrap().needs_baseline());
    }

    /// `no race` counts the races, not the findings that list them (16, then one for the rest).
    #[test]
    fn no_race_counts_races_not_findings() {
        let race = |title: &str| crate::report::Finding {
            kind: FindingKind::PossibleRace,
            device: 1,
            title: title.into(),
            evidence: Vec::new(),
            fix: String::new(),
            saving_ns: 0,
            estimate: String::new(),
            saving_bytes: 0,
            saves: String::new(),
            confidence: Some("known".into()),
            misuse: true,
            minor: false,
            weighed: false,
        };
        let mut r: Report = serde_json::from_value(serde_json::json!({
            "program": "p", "pid": 1, "start_time": "", "wall_ns": 1, "cut_short": false,
            "devices": [], "bounds": null, "pinned_host_peak_bytes": null, "findings": [],
            "incomplete_at_exit": null, "dropped_records": null, "overhead": null
        }))
        .unwrap();
        r.findings = (0..16).map(|i| race(&format!("race {i}"))).collect();
        r.findings.push(race("13 more possible data races"));
        r.races = Some(29);
        let rule = parse("no race").unwrap();
        let said = rule.broken(&r, None).unwrap();
        assert!(said.contains("the run has 29"), "{said}");
        // A report of a clxfer before `races`: its race findings are counted.
        r.races = None;
        assert!(rule.broken(&r, None).unwrap().contains("the run has 17"));
    }
}
