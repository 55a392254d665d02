//! How a device's queues order its commands: commands an in-order queue held behind one that
//! waits for another queue (the ported pipeline's "does it overlap?", question 2 of the brief).

use super::super::replay::Fix;
use super::judge::*;
use crate::units::duration;

/// Per queue: its commands held only by its order (`bounds::OrderHeld`), with what the replay
/// says moving the waiting ones to a queue of their own would save.
pub fn held_by_order(j: &mut Judge) {
    // Where the replay moves nothing sooner, the order cost nothing: no finding (what the
    // title says would not be so).
    let Some(saved) = j.graph.saved(j.dev, Fix::Reordered).filter(|&ns| ns > 0) else {
        return;
    };
    let held: Vec<_> = j.graph.held_by_order_on(j.dev).cloned().collect();
    // The queues apart, one saving: the replay moves every such command of the device at once.
    let Some(first) = held.first() else { return };
    let commands: u64 = held.iter().map(|h| h.commands).sum();
    let queues: Vec<String> = held.iter().map(|h| format!("#{}", h.queue.1)).collect();
    let [command, after, awaited] = &first.first;
    let title = format!(
        "{} on in-order queue {} of {} waited behind transfers that wait for another queue: the \
         queue's order, not their wait lists, kept them from overlapping",
        counted(commands, "transfer"),
        queues.join(", "),
        j.on,
    );
    let evidence = vec![
        format!(
            "the first held: {command}, queued after {after} on queue #{}, which waited for \
             {awaited} on queue #{}; nothing in its own wait list waits for that",
            first.queue.1, first.behind.1
        ),
        "a queue made without CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE runs each command only \
         after the one before it has completed, whatever their wait lists say"
            .into(),
    ];
    let fix = "Enqueue the commands that wait for the other queue (here the {after} ones) on \
               a queue of their own (in CUDA terms, a stream of their own), keeping their wait \
               lists; then the held transfers run while what those wait for runs. Where a held \
               one overwrites a buffer that a command it would overtake still reads, give it \
               that command's event in its wait list (clxfer's race check names any that lacks \
               one)."
        .replace("{after}", after);
    let how = format!(
        "replayed: the run's command graph, with each of them following the last command \
         before it on its queue that waits for no other queue, ends {} sooner",
        duration(saved)
    );
    j.push(FindingKind::QueueOrder, title, evidence, fix, (saved, how));
}
