//! The command graph: what the program asked the devices to do, and in which order they had to
//! do it. Pure and safe, fed by the layer as the memory model is: every command gets a number, the
//! events the program holds are resolved to the commands they stand for ([`events`]), and each
//! queue adds the order its kind implies ([`order`]): an in-order queue runs its commands one
//! after another; on an out-of-order queue only wait lists, barriers and markers order them.

pub mod clock;
pub mod events;
pub mod order;
pub mod race;

use smallvec::SmallVec;

/// A command's number in its process (1, 2, …; user events are numbered in the same series).
pub type Id = u64;

/// What a command is, as far as ordering goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A transfer, kernel or any other command that does work.
    Work,
    /// `clEnqueueMarker(WithWaitList)`: completes when what it waits for has.
    Marker,
    /// `clEnqueueBarrier(WithWaitList)`: also holds back every later command of its queue.
    Barrier,
}

/// The commands a new command waits for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deps {
    /// Those named in its wait list (commands or user events), in the list's order.
    pub waits: SmallVec<[Id; 4]>,
    /// Events of its wait list clxfer knows nothing of (made before it was loaded, or by
    /// another layer): their commands cannot be named.
    pub unknown: u32,
    /// The command its queue orders it after: the previous one of an in-order queue, the last
    /// barrier of an out-of-order one.
    pub after: Option<Id>,
    /// It waits for every earlier command of its queue (a marker or barrier without a wait list
    /// on an out-of-order queue): said once, not listed.
    pub all_before: bool,
}
