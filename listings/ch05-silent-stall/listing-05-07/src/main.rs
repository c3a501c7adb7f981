// A reconcile that hangs, under the controller's reconciliation timeout:
// at the deadline the port drops the reconcile's future, reports an error,
// and the switch requeues the key with backoff, as for any error. Its Go
// twin sets ReconciliationTimeout on a real controller-runtime controller,
// once with a reconciler that honours its context and once with one that
// ignores it; it prints its own output, because upstream only puts a
// deadline on the context and the two sides differ there.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use faithful_workqueue::controller::{Controller, Options};
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::PriorityQueue;
use faithful_workqueue::reconcile::ReconcileResult;
use tokio::time::Instant;

type Key = &'static str;

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let start = Instant::now();
    let at = move || format!("{:<7}", GoDuration(start.elapsed()).to_string());
    let attempts = AtomicUsize::new(0);
    println!(
        "a reconciler whose future waits (the port drops it at the deadline):"
    );

    // ANCHOR: timeout
    // The first attempt waits an hour on something that never answers; the
    // second returns at once.
    let reconciler = |key: Key| {
        let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            if attempt == 1 {
                println!("{} reconcile {key:?} #1 starts, then waits 1h", at());
                tokio::time::sleep(Duration::from_secs(3600)).await;
                println!("{} reconcile {key:?} #1 returns", at()); // never printed
            } else {
                println!(
                    "{} reconcile {key:?} #{attempt} starts, returns ok",
                    at()
                );
            }
            Ok(ReconcileResult::done())
        }
    };
    let options = Options {
        reconciliation_timeout: Some(Duration::from_secs(2)),
        error_log: Some(Arc::new(move |err: &anyhow::Error| {
            println!("{} Reconciler error: {err}", at())
        })),
        ..Options::default()
    };
    let queue = PriorityQueue::new();
    let controller =
        Controller::with_options(queue.clone(), reconciler, options);
    queue.add("web");
    // #1: dropped at 2s, requeued with backoff
    controller.process_next_work_item().await;
    controller.process_next_work_item().await; // #2: 5ms later
    // ANCHOR_END: timeout

    println!("{} attempts: {}", at(), attempts.load(Ordering::SeqCst));
}
