//! Which process before goes with which after. Each file of a side is a run; in a run, the
//! processes of a program are numbered in order of start (a program that forks has several), and
//! the same program's same-numbered process in several files of a side are runs of one process
//! (their spread is the run-to-run noise). Processes are paired by hand first (`--pair
//! BEFORE=AFTER`, program names), then by program name and number; one left on each side are
//! paired as different programs.

use super::diff::{PairDiff, pair_diff};
use crate::report::Report;
use serde::Serialize;

/// A process left without its other side.
#[derive(Debug, Clone, Serialize)]
pub struct Alone {
    pub program: String,
    pub pid: u32,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub pairs: Vec<PairDiff>,
    pub only_before: Vec<Alone>,
    pub only_after: Vec<Alone>,
}

/// One process of a program (its number among the program's processes in a run), in each run.
struct Group<'a> {
    program: String,
    nth: usize,
    runs: Vec<&'a Report>,
}

fn groups(runs: &[Vec<Report>]) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for run in runs {
        let mut order: Vec<&Report> = run.iter().collect();
        order.sort_by(|x, y| x.start_time.cmp(&y.start_time));
        let mut seen: Vec<&str> = Vec::new();
        for r in order {
            let nth = seen.iter().filter(|p| **p == r.program).count();
            seen.push(&r.program);
            match out
                .iter_mut()
                .find(|g| g.program == r.program && g.nth == nth)
            {
                Some(g) => g.runs.push(r),
                None => out.push(Group {
                    program: r.program.clone(),
                    nth,
                    runs: vec![r],
                }),
            }
        }
    }
    out
}

/// Compares the runs of `before` with those of `after` (a list of processes per file);
/// `by_hand` pairs program names.
pub fn diff(before: &[Vec<Report>], after: &[Vec<Report>], by_hand: &[(String, String)]) -> Diff {
    let (gb, ga) = (groups(before), groups(after));
    let mut left_b: Vec<usize> = (0..gb.len()).collect();
    let mut left_a: Vec<usize> = (0..ga.len()).collect();
    let mut pairs = Vec::new();
    let mut take = |b: &str, a: &str, left_b: &mut Vec<usize>, left_a: &mut Vec<usize>| {
        let picks: Vec<(usize, usize)> = (left_b.iter())
            .filter(|&&i| gb[i].program == b)
            .filter_map(|&i| {
                let j = left_a
                    .iter()
                    .find(|&&j| ga[j].program == a && ga[j].nth == gb[i].nth)?;
                Some((i, *j))
            })
            .collect();
        for (i, j) in picks {
            left_b.retain(|&x| x != i);
            left_a.retain(|&x| x != j);
            pairs.push((i, j));
        }
    };
    for (b, a) in by_hand {
        take(b, a, &mut left_b, &mut left_a);
    }
    let names: Vec<String> = left_b.iter().map(|&i| gb[i].program.clone()).collect();
    for name in names {
        take(&name, &name, &mut left_b, &mut left_a);
    }
    if left_b.len() == 1 && left_a.len() == 1 {
        pairs.push((left_b.remove(0), left_a.remove(0)));
    }
    pairs.sort();
    let alone = |gs: &[Group], left: &[usize]| {
        (left.iter())
            .flat_map(|&i| gs[i].runs.iter())
            .map(|r| Alone {
                program: r.program.clone(),
                pid: r.pid,
            })
            .collect()
    };
    Diff {
        pairs: (pairs.iter())
            .map(|&(i, j)| pair_diff(&gb[i].runs, &ga[j].runs))
            .collect(),
        only_before: alone(&gb, &left_b),
        only_after: alone(&ga, &left_a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(program: &str, pid: u32, start: &str) -> Report {
        Report {
            program: program.into(),
            pid,
            job: Default::default(),
            start_time: start.into(),
            wall_ns: 1,
            cut_short: false,
            signal: None,
            verdict: Default::default(),
            weighed_against: Default::default(),
            races: None,
            host_calls: Vec::new(),
            devices: Vec::new(),
            bounds: None,
            pinned_host_peak_bytes: None,
            findings: Vec::new(),
            incomplete_at_exit: None,
            dropped_records: None,
            overhead: None,
        }
    }

    #[test]
    fn processes_pair_by_hand_then_by_name_and_number_then_the_last_two() {
        // (before files, after files, by hand, pairs wanted as (program, pid before, pid after,
        // runs before, runs after), alone before, alone after)
        type Case = (
            &'static str,
            Vec<Vec<Report>>,
            Vec<Vec<Report>>,
            Vec<(String, String)>,
            Vec<(&'static str, u32, u32, usize, usize)>,
            Vec<u32>,
            Vec<u32>,
        );
        let cases: Vec<Case> = vec![
            (
                "one each, same name",
                vec![vec![report("app", 1, "a")]],
                vec![vec![report("app", 2, "a")]],
                vec![],
                vec![("app", 1, 2, 1, 1)],
                vec![],
                vec![],
            ),
            (
                "one each, different programs",
                vec![vec![report("app", 1, "a")]],
                vec![vec![report("other", 2, "a")]],
                vec![],
                vec![("app", 1, 2, 1, 1)],
                vec![],
                vec![],
            ),
            (
                "three files before are three runs",
                vec![
                    vec![report("app", 1, "a")],
                    vec![report("app", 3, "b")],
                    vec![report("app", 5, "c")],
                ],
                vec![vec![report("app", 2, "a")], vec![report("app", 4, "b")]],
                vec![],
                vec![("app", 1, 2, 3, 2)],
                vec![],
                vec![],
            ),
            (
                "a forking program: processes by start order",
                vec![vec![report("srv", 11, "b"), report("srv", 10, "a")]],
                vec![vec![report("srv", 20, "a"), report("srv", 21, "b")]],
                vec![],
                vec![("srv", 10, 20, 1, 1), ("srv", 11, 21, 1, 1)],
                vec![],
                vec![],
            ),
            (
                "by hand, and one left alone",
                vec![vec![report("app", 1, "a"), report("tool", 3, "b")]],
                vec![vec![
                    report("app2", 2, "a"),
                    report("x", 4, "b"),
                    report("y", 5, "c"),
                ]],
                vec![("app".into(), "app2".into())],
                vec![("app", 1, 2, 1, 1)],
                vec![3],
                vec![4, 5],
            ),
        ];
        for (what, b, a, hand, want, alone_b, alone_a) in cases {
            let d = diff(&b, &a, &hand);
            let got: Vec<_> = (d.pairs.iter())
                .map(|p| {
                    (
                        p.program.as_str(),
                        p.pid_before,
                        p.pid_after,
                        p.runs_before,
                        p.runs_after,
                    )
                })
                .collect();
            assert_eq!(got, want, "{what}");
            let pids = |v: &[Alone]| v.iter().map(|x| x.pid).collect::<Vec<_>>();
            assert_eq!(pids(&d.only_before), alone_b, "{what}");
            assert_eq!(pids(&d.only_after), alone_a, "{what}");
        }
    }
}
