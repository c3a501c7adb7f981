// A panicking reconcile with RecoverPanic on (upstream's default) and off.
// On: the panic becomes an error and is retried through the rate limiter.
// Off: the panic leaves the worker, and done still runs while it unwinds.
// Its Go twin runs the real controller-runtime controller both ways.

use std::collections::HashMap;
use std::sync::Mutex;

use faithful_workqueue::call_log::CallLog;
use faithful_workqueue::controller::{Controller, Options, panic_message};
use faithful_workqueue::priorityqueue::PriorityQueue;
use faithful_workqueue::rate_limiting_queue::Interface;
use faithful_workqueue::reconcile::ReconcileResult;

type Key = String;

/// The priority queue, printing the calls the controller makes.
fn logging_queue() -> CallLog<PriorityQueue<Key>> {
    CallLog::new(PriorityQueue::new(), |call| println!("  {call}"))
}

/// "boom" panics on its first attempt and succeeds after.
fn reconciler()
-> impl Fn(Key) -> std::future::Ready<anyhow::Result<ReconcileResult>>
+ Send
+ Sync
+ 'static {
    let attempts: Mutex<HashMap<Key, usize>> = Mutex::default();
    move |key| {
        let attempt = {
            let mut attempts = attempts.lock().unwrap();
            let n = attempts.entry(key.clone()).or_insert(0);
            *n += 1;
            *n
        };
        if attempt == 1 {
            println!("reconcile {key:?} #{attempt} -> panic");
            panic!("boom");
        }
        println!("reconcile {key:?} #{attempt} -> success");
        std::future::ready(Ok(ReconcileResult::done()))
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    std::panic::set_hook(Box::new(|_| {})); // the panics are the subject; keep stderr quiet

    // ANCHOR: recovered
    println!("RecoverPanic on (the default):");
    let queue = logging_queue();
    let controller = Controller::new(queue.clone(), reconciler());
    queue.add("boom".to_owned());
    controller.process_next_work_item().await; // panics, recovered: an error
    controller.process_next_work_item().await; // the retry, 5ms later
    // ANCHOR_END: recovered

    // ANCHOR: propagated
    println!();
    println!("RecoverPanic off:");
    let queue = logging_queue();
    let options = Options { recover_panic: false, ..Options::default() };
    let controller =
        Controller::with_options(queue.clone(), reconciler(), options);
    queue.add("boom".to_owned());
    // A worker is a task; its panic comes back as a JoinError.
    let worker =
        tokio::spawn(async move { controller.process_next_work_item().await });
    match worker.await {
        Err(err) if err.is_panic() => println!(
            "the panic left the worker: {}",
            panic_message(&*err.into_panic())
        ),
        other => println!("the worker did not panic: {other:?}"),
    }
    // ANCHOR_END: propagated
}
