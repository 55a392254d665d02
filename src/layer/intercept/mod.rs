//! The hooks that feed the memory model: object creation and destruction, queues, kernel
//! arguments, SVM/USM allocations (`objects.rs`), and every transfer-like command
//! (`commands.rs`, `map.rs`). Each classified command is reported here.
//!
//! Its shared state is `state.rs`, below the hooks; this file is the room's door only.

mod collect;
mod commands;
mod completion;
mod devices;
mod enqueue;
mod events;
mod exit;
mod finish;
pub mod fork;
mod graph;
mod hidden;
mod map;
mod objects;
mod pending;
mod programs;
mod queues;
mod races;
mod state;
mod waits;

/// A host synchronisation point: the race check's clocks learn what completed.
pub use races::synced as host_synced;

pub use commands::*;
pub use enqueue::{Command, Enqueue, Marker, Timed};
pub use events::forget_after_fork;
pub use graph::{CallbackSet, EventAsked, EventHeld, UserEventCreated, UserEventSet};
pub use hidden::{
    ContextQueried, EventQueried, MemQueried, ProfilingQueried, QueuePropertySet, QueueQueried,
};
pub use map::*;
pub use objects::*;
pub use programs::{ProgramBuilt, ProgramLinked, ProgramSource};
pub use queues::QueueCreated;
pub use waits::{Finished, Ordered, Released, WaitedFor};

pub use exit::{end, report_memory};
