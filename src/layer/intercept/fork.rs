//! `fork` from a threaded program: the child has one thread, and any lock another thread held at
//! the fork would stay held forever, with the data behind it half changed. So, from
//! `pthread_atfork`'s prepare handler, the forking thread takes every lock of clxfer's that
//! lives as long as the process (read-write locks for writing: a reader another thread still
//! counts in would keep a lock taken in the child), in the one order every other path takes them (each holds at
//! most the ones before it: the timer's `BUSY`, then `DEFERRED`, then the world's maps in the
//! order of their fields, then the race check's), and lets them go on both sides of the fork. The locks of single queues
//! and devices are not taken there (a completion callback holds a queue's while it reports): in
//! the child, every queue gets a fresh list of waiting commands (the parent's commands are the
//! parent's to report). A device's clock mapping is lock-free (`timing::mapping`).

use super::completion;
use super::state::QueueInfo;
use super::state::WORLD;
use std::any::Any;
use std::sync::Arc;

/// The locks held across a fork, in the order taken (dropped in reverse).
pub fn hold() -> Vec<Box<dyn Any>> {
    let mut held: Vec<Box<dyn Any>> = completion::hold_for_fork();
    held.push(Box::new(WORLD.memory.lock()));
    held.push(Box::new(WORLD.devices.write()));
    held.push(Box::new(WORLD.queues.write()));
    held.push(Box::new(WORLD.contexts.write()));
    held.push(Box::new(WORLD.kernels.lock()));
    held.push(Box::new(WORLD.kernel_names.lock()));
    held.push(Box::new(WORLD.programs.lock()));
    held.push(Box::new(WORLD.events.lock()));
    // Taken after the events' (a user event's status is set holding both).
    held.push(Box::new(super::races::hold()));
    held
}

/// Lets the locks go, last taken first.
pub fn release(mut held: Vec<Box<dyn Any>>) {
    while let Some(guard) = held.pop() {
        drop(guard);
    }
}

/// In the child, once the locks are free: fresh per-queue locks (see above). The old ones are
/// leaked, never dropped: a parent thread may have been changing them.
pub fn renew_in_child() {
    let devices = WORLD.devices.read();
    let mut queues = WORLD.queues.write();
    for queue in queues.values_mut() {
        let dev = devices
            .get(&queue.device_handle)
            .cloned()
            .unwrap_or_else(|| queue.device.clone());
        let fresh = Arc::new(QueueInfo::fresh_copy(queue, dev));
        std::mem::forget(std::mem::replace(queue, fresh));
    }
    drop(queues);
    drop(devices);
    super::queues::forget_cached();
}
