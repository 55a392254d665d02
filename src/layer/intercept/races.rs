//! Feeding the race check (`crate::graph::clock`, `crate::graph::race`): each command's place in
//! happens-before and the memory it touches, as it is enqueued; host synchronisation points and
//! user events as they happen. A race found is said once on stderr per pair of (entry point,
//! queue) it joins: a race between known uses, or with a kernel argument the program declared
//! writable (with how to say it is only read); not one with a use clxfer had to assume (a
//! kernel argument of a driver that keeps no argument information), which could as well be two
//! reads: those go to the report only, as what clxfer could not judge.

use super::state::QueueInfo;
use crate::graph::clock::{Clocks, WINDOW};
use crate::graph::race::{Access, Certainty, Race, Races, Use};
use crate::graph::{Deps, Id, Kind};
use crate::report::{On, RaceFact, RaceSide};
use crate::sink::record;
use crate::sync::Mutex;
use crate::vocab::Api;
use rustc_hash::FxHashSet;
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, Ordering};

/// A command's access to bytes `range` of memory object `object`, and how clxfer knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    pub object: usize,
    pub range: (u64, u64),
    pub use_: Use,
    pub how: Certainty,
}

pub type Touches = SmallVec<[Touch; 2]>;

/// Where a command was enqueued: its entry point, and its queue's device and number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Site {
    api: Option<Api>,
    device: u32,
    queue: u32,
}

/// Pairs of sites said at most (races between later pairs are not said).
const SAID: usize = 1 << 10;

/// Where a command was enqueued from, beside its site: the thread, the call's start (monotonic
/// ns) and whether it is timed (what its host slice in the trace is).
#[derive(Clone, Copy, Debug, Default)]
struct From {
    thread: u32,
    begin: u64,
    timed: bool,
}

#[derive(Default)]
struct State {
    clocks: Clocks,
    races: Races,
    /// By command number modulo the clocks' window: (number, site, caller).
    sites: Vec<(Id, Site, From)>,
    /// Pairs of call sites said, and whether the race was a sure one (known or declared).
    said: FxHashSet<(Site, Site, bool)>,
    found: Vec<Race>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The state's lock, held across a fork (`fork.rs`).
pub fn hold() -> impl std::any::Any {
    STATE.lock()
}

/// Runs `f` on the state, unless `CLXFER_RACES=off` (then `R::default()`).
fn with<R: Default>(f: impl FnOnce(&mut State) -> R) -> R {
    if !crate::config::global().races {
        return R::default();
    }
    let mut s = STATE.lock();
    f(s.get_or_insert_with(State::default))
}

/// A command for the race check: `id`, enqueued by `api` on `q` with `deps` (its queue's order
/// added), touching `touches`.
pub struct NewCommand<'a> {
    pub id: Id,
    pub api: Api,
    pub q: &'a QueueInfo,
    pub kind: Kind,
    pub deps: &'a Deps,
    pub touches: &'a [Touch],
    /// The program holds its event.
    pub named: bool,
    /// The call returned once it completed.
    pub blocking: bool,
    /// Its call's thread and start (monotonic ns).
    pub thread: u32,
    pub begin: u64,
    /// A device slice comes for it.
    pub timed: bool,
}

/// Places command `c` in happens-before and judges its accesses. The races it makes, said on
/// stderr here, are returned for the report and the trace (to be sent after the call's own
/// record).
pub fn command(c: &NewCommand) -> Vec<record::Race> {
    let &NewCommand {
        id,
        api,
        q,
        kind,
        deps,
        touches,
        named,
        blocking,
        thread,
        begin,
        timed,
    } = c;
    let site = Site {
        api: Some(api),
        device: q.r.device,
        queue: q.r.queue,
    };
    let said = with(|s| {
        let from = From {
            thread,
            begin,
            timed,
        };
        // Borrowed apart: the placed command stays in the clocks' ring while the accesses are
        // judged.
        let State {
            clocks,
            races,
            sites,
            found,
            ..
        } = s;
        let queue = (q.r.queue, !q.in_order);
        let placed = clocks.command(id, queue, kind, deps, named || blocking);
        let mut said = Vec::new();
        // Judged only if it touches memory (markers and USM copies do not) and its order is
        // known (no wait for an event clxfer knows nothing of). Only such a command's site is
        // kept: a race names the sites of two commands that touched memory.
        if !touches.is_empty() && deps.unknown == 0 {
            if sites.is_empty() {
                sites.resize(WINDOW, (0, Site::default(), From::default()));
            }
            sites[id as usize % WINDOW] = (id, site, from);
            let mut found = std::mem::take(found);
            for t in touches {
                let how = (t.use_, t.how);
                races.access(t.object, (id, placed), t.range, how, &mut found);
            }
            for r in found.drain(..) {
                let (first, first_from) = match s.sites.get(r.first.id as usize % WINDOW) {
                    Some(&(n, site, from)) if n == r.first.id => (site, from),
                    _ => (Site::default(), From::default()),
                };
                let sure = r.certainty >= Certainty::Declared;
                if s.said.len() < SAID && s.said.insert((first, site, sure)) {
                    said.push(record::Race {
                        fact: fact(&r, (first, first_from), (site, from)),
                        calls: [(first_from.begin, first_from.timed), (begin, timed)],
                    });
                }
            }
            s.found = found;
        }
        if blocking {
            s.clocks.host_waited(&[id]);
        }
        said
    });
    // Said on stderr only where both sides are known: a race that rests on an argument clxfer
    // could only read the declaration of (`declared`) or had to assume is the report's, ranked
    // as such, never said as certain.
    for r in said.iter().filter(|r| r.fact.confidence == "known") {
        let f = &r.fact;
        crate::warn!(
            "possible data race on memory object {:#x}: {}, {}, and no event, queue order or host wait orders them",
            f.object,
            f.first.said(),
            f.second.said(),
        );
    }
    said
}

/// The report's fact of race `r` between commands from `first` and `second`.
fn fact(r: &Race, first: (Site, From), second: (Site, From)) -> RaceFact {
    let side = |a: &Access, (site, from): (Site, From)| RaceSide {
        command: a.id,
        api: site.api.map_or("an earlier command", |a| a.name()).into(),
        device: site.device,
        queue: site.queue,
        thread: from.thread,
        access: a.how.label(a.use_).into(),
        bytes: a.range,
    };
    RaceFact {
        object: r.object as u64,
        confidence: match r.certainty {
            Certainty::Known => "known",
            Certainty::Declared => "declared",
            Certainty::Assumed => "assumed",
        }
        .into(),
        first: side(&r.first, first),
        second: side(&r.second, second),
    }
}

/// Whether the program made a sub-buffer: only then are touches put in their parents' bytes.
static SUB_BUFFERS: AtomicBool = AtomicBool::new(false);

/// The program made a sub-buffer.
pub fn sub_buffer_made() {
    SUB_BUFFERS.store(true, Ordering::Relaxed);
}

/// Touches of sub-buffers become touches of their parents' bytes, so that a sub-buffer races
/// with its parent and with overlapping sub-buffers, and sub-buffers apart do not.
pub fn in_parents(touches: &mut [Touch]) {
    if touches.is_empty() || !SUB_BUFFERS.load(Ordering::Relaxed) {
        return;
    }
    let memory = super::state::WORLD.memory.lock();
    for t in touches {
        let Some(o) = memory.object(t.object) else {
            continue;
        };
        if let Some((parent, offset)) = o.parent {
            let end = t.range.1.min(o.size);
            t.object = parent;
            t.range = (
                offset.saturating_add(t.range.0.min(end)),
                offset.saturating_add(end),
            );
        }
    }
}

/// The host learnt that what `on` names completed.
pub fn synced(on: &On) {
    with(|s| match on {
        On::Commands(ids) => s.clocks.host_waited(ids),
        On::Queue { queue, .. } => s.clocks.host_finished(queue.1),
    });
}

pub fn user_event(id: Id) {
    with(|s| s.clocks.user_event(id));
}

pub fn user_event_set(id: Id) {
    with(|s| s.clocks.user_event_set(id));
}

/// The program released memory object `object` for good.
pub fn released(object: usize) {
    with(|s| s.races.released(object));
}
