//! The events the program holds, and the command (or user event) each stands for. An event is
//! known from the call that made it until the program's last `clReleaseEvent` of it: clxfer
//! counts the program's own references (it takes its own on the driver, never counted here), so a
//! handle the driver reuses for a new event is never taken for the old one. Bounded: past
//! [`LIMIT`] events held at once (a program that never releases its events), the oldest are
//! forgotten and a wait on them counts as unknown.

use super::Id;
use rustc_hash::FxHashMap;

/// The most events remembered at once.
pub const LIMIT: usize = 1 << 20;

#[derive(Clone, Copy, Debug)]
struct Held {
    id: Id,
    /// The program's references: 1 at creation, +1 per retain, -1 per release.
    refs: u32,
    /// When it was made, for forgetting the oldest.
    made: u64,
    /// Its command may read complete before what it waits for (`RuleSet::early_complete`).
    early: bool,
}

#[derive(Default, Debug)]
pub struct Events {
    held: FxHashMap<usize, Held>,
    made: u64,
}

impl Events {
    /// The driver handed the program `event`, standing for `id`.
    pub fn made(&mut self, event: usize, id: Id) {
        if self.held.len() >= LIMIT {
            self.forget_oldest();
        }
        self.made += 1;
        let made = self.made;
        let early = false;
        self.held.insert(
            event,
            Held {
                id,
                refs: 1,
                made,
                early,
            },
        );
    }

    /// `event`'s command may read complete before what it waits for: its status is no wait.
    pub fn completes_early(&mut self, event: usize) {
        if let Some(h) = self.held.get_mut(&event) {
            h.early = true;
        }
    }

    /// The command a status of `event` that reads complete shows completed, with what it waited
    /// for; `None` where clxfer does not know it, or the status says nothing of that.
    pub fn completed_by_status(&self, event: usize) -> Option<Id> {
        self.held.get(&event).filter(|h| !h.early).map(|h| h.id)
    }

    /// The program retained `event` (and the driver accepted it).
    pub fn retained(&mut self, event: usize) {
        if let Some(h) = self.held.get_mut(&event) {
            h.refs = h.refs.saturating_add(1);
        }
    }

    /// The program released `event` (and the driver accepted it): at its last reference it is
    /// forgotten.
    pub fn released(&mut self, event: usize) {
        if let Some(h) = self.held.get_mut(&event) {
            h.refs = h.refs.saturating_sub(1);
            if h.refs == 0 {
                self.held.remove(&event);
            }
        }
    }

    /// The command `event` stands for, if clxfer knows it.
    pub fn command(&self, event: usize) -> Option<Id> {
        self.held.get(&event).map(|h| h.id)
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Forgets the oldest quarter (one pass, so that a program leaking events pays rarely).
    fn forget_oldest(&mut self) {
        let keep_from = self.made - (self.held.len() as u64 * 3 / 4);
        self.held.retain(|_, h| h.made > keep_from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_of_an_event_that_completes_early_shows_nothing_completed() {
        let mut e = Events::default();
        e.made(1, 10);
        e.made(2, 11);
        e.completes_early(2);
        assert_eq!(e.completed_by_status(1), Some(10));
        assert_eq!(e.completed_by_status(2), None);
        // A wait on it still names its command.
        assert_eq!(e.command(2), Some(11));
        // A new event on the handle is not early.
        e.released(2);
        e.made(2, 12);
        assert_eq!(e.completed_by_status(2), Some(12));
    }

    enum Step {
        Made(usize, Id),
        Retained(usize),
        Released(usize),
        /// The event's command now, if known.
        Is(usize, Option<Id>),
    }
    use Step::*;

    #[test]
    fn an_event_is_known_until_the_programs_last_release() {
        let cases: &[(&str, &[Step])] = &[
            ("made, then asked", &[Made(0x10, 1), Is(0x10, Some(1))]),
            ("never made", &[Is(0x10, None)]),
            (
                "released once: gone",
                &[Made(0x10, 1), Released(0x10), Is(0x10, None)],
            ),
            (
                "retained, released once: still known",
                &[
                    Made(0x10, 1),
                    Retained(0x10),
                    Released(0x10),
                    Is(0x10, Some(1)),
                ],
            ),
            (
                "a handle the driver reuses stands for the new command",
                &[
                    Made(0x10, 1),
                    Released(0x10),
                    Made(0x10, 7),
                    Is(0x10, Some(7)),
                ],
            ),
            (
                "a release of an unknown event changes nothing",
                &[Made(0x10, 1), Released(0x20), Is(0x10, Some(1))],
            ),
            (
                "releases past zero do not underflow",
                &[
                    Made(0x10, 1),
                    Released(0x10),
                    Released(0x10),
                    Is(0x10, None),
                ],
            ),
        ];
        for (what, steps) in cases {
            let mut e = Events::default();
            for step in *steps {
                match *step {
                    Made(h, id) => e.made(h, id),
                    Retained(h) => e.retained(h),
                    Released(h) => e.released(h),
                    Is(h, want) => assert_eq!(e.command(h), want, "{what}"),
                }
            }
        }
    }

    #[test]
    fn a_program_that_never_releases_keeps_memory_bounded() {
        let mut e = Events::default();
        for i in 0..(LIMIT + 10) {
            e.made(i * 16, i as Id + 1);
        }
        assert!(e.len() <= LIMIT);
        // The newest are kept, the oldest forgotten.
        assert_eq!(e.command((LIMIT + 9) * 16), Some(LIMIT as Id + 10));
        assert_eq!(e.command(0), None);
    }
}
