//! Feeding the race check (`crate::graph::clock`, `crate::graph::race`): each command's place in
//! happens-before and the memory it touches, as it is enqueued; host synchronisation points and
//! user events as they happen. A race found is said once on stderr per pair of (entry point,
//! queue) it joins. Only races between known uses are said: a kernel argument without access
//! qualifiers is assumed written, and until kernels' argument information is read, such a race
//! could as well be two reads.

use super::queues::QueueInfo;
use crate::graph::clock::{Clocks, WINDOW};
use crate::graph::race::{Confidence, Race, Races, Use};
use crate::graph::{Deps, Id, Kind};
use crate::report::On;
use crate::sync::Mutex;
use crate::vocab::Api;
use rustc_hash::FxHashSet;
use smallvec::SmallVec;

/// A command's access to bytes `range` of memory object `object`; `sure`: the use is known, not
/// assumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    pub object: usize,
    pub range: (u64, u64),
    pub use_: Use,
    pub sure: bool,
}

pub type Touches = SmallVec<[Touch; 2]>;

/// Where a command was enqueued: its entry point, and its queue's device and number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Site {
    api: Option<Api>,
    device: u32,
    queue: u32,
}

/// Pairs of sites said at most (later races are counted only).
const SAID: usize = 1 << 10;

#[derive(Default)]
struct State {
    clocks: Clocks,
    races: Races,
    /// By command number modulo the clocks' window: (number, site).
    sites: Vec<(Id, Site)>,
    said: FxHashSet<(Site, Site)>,
    found: Vec<Race>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut s = STATE.lock();
    f(s.get_or_insert_with(State::default))
}

/// Command `id`, enqueued by `api` on `q` with `deps` (its queue's order added), touches
/// `touches`; `blocking`: the call returned once it completed.
pub fn command(
    id: Id,
    api: Api,
    q: &QueueInfo,
    kind: Kind,
    deps: &Deps,
    touches: &[Touch],
    blocking: bool,
) {
    let site = Site {
        api: Some(api),
        device: q.r.device,
        queue: q.r.queue,
    };
    let said = with(|s| {
        let placed = s.clocks.command(id, q.r.queue, !q.in_order, kind, deps);
        // Judged only if it touches memory (markers and USM copies do not) and its order is
        // known (no wait for an event clxfer knows nothing of).
        let placed = (!touches.is_empty() && deps.unknown == 0).then(|| placed.clone());
        if s.sites.is_empty() {
            s.sites.resize(WINDOW, (0, Site::default()));
        }
        s.sites[id as usize % WINDOW] = (id, site);
        let mut said = Vec::new();
        if let Some(placed) = placed {
            let mut found = std::mem::take(&mut s.found);
            for t in touches {
                let how = (t.use_, t.sure);
                s.races
                    .access(t.object, (id, &placed), t.range, how, &mut found);
            }
            for r in found.drain(..) {
                let first = match s.sites.get(r.first.id as usize % WINDOW) {
                    Some(&(n, site)) if n == r.first.id => site,
                    _ => Site::default(),
                };
                let known = r.confidence == Confidence::Known;
                if known && s.said.len() < SAID && s.said.insert((first, site)) {
                    said.push((r, first));
                }
            }
            s.found = found;
        }
        if blocking {
            s.clocks.host_waited(&[id]);
        }
        said
    });
    for (r, first) in said {
        warn(&r, first, site);
    }
}

fn warn(r: &Race, first: Site, second: Site) {
    let name = |s: Site| s.api.map_or("an earlier command", |a| a.name());
    let how = |u: Use| match u {
        Use::Read => "reads",
        Use::Write => "writes",
    };
    crate::warn!(
        "possible data race on memory object {:#x}: command #{} ({} on device #{} queue #{}) {} bytes {}..{}, command #{} ({} on device #{} queue #{}) {} bytes {}..{}, and no event, queue order or host wait orders them",
        r.object,
        r.first.id,
        name(first),
        first.device,
        first.queue,
        how(r.first.use_),
        r.first.range.0,
        r.first.range.1,
        r.second.id,
        name(second),
        second.device,
        second.queue,
        how(r.second.use_),
        r.second.range.0,
        r.second.range.1,
    );
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
