// The controller loop on five scripted keys, printing each decision it makes
// on the queue (forget, rate-limited or delayed add, done; not the gets and
// plain adds). Its Go twin runs the real controller-runtime controller on
// the same script and prints the same lines.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use faithful_workqueue::call_log::CallLog;
use faithful_workqueue::controller::{Controller, Options};
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::PriorityQueue;
use faithful_workqueue::rate_limiting_queue::Interface;
use faithful_workqueue::reconcile::{ReconcileResult, terminal_error};

type Key = &'static str;

// ANCHOR: script
/// Each key misbehaves in its own way on the first attempt.
async fn reconcile(
    key: Key,
    attempt: usize,
) -> anyhow::Result<ReconcileResult> {
    let first = attempt == 1;
    let outcome = match key {
        "fail" if first => Err(anyhow!("connection refused")),
        "terminal" => {
            Err(terminal_error(anyhow!("spec.replicas must be >= 0")))
        }
        "later" if first => {
            Ok(ReconcileResult::requeue_after(Duration::from_millis(30)))
        }
        "boom" if first => {
            println!("reconcile {key:?} #{attempt} -> panic");
            // The message of the runtime error that the twin's nil-map
            // write raises.
            panic!("assignment to entry in nil map");
        }
        _ => Ok(ReconcileResult::done()),
    };
    let shown = match &outcome {
        Ok(r) if !r.requeue_after.is_zero() => {
            format!("requeue after {}", GoDuration(r.requeue_after))
        }
        Ok(_) => "success".to_owned(),
        Err(err) => format!("error: {err}")
            .replace("error: terminal error", "terminal error"),
    };
    println!("reconcile {key:?} #{attempt} -> {shown}");
    outcome
}
// ANCHOR_END: script

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // A recovered panic still runs the panic hook; keep stderr quiet.
    std::panic::set_hook(Box::new(|_| {}));

    // controller-runtime's default queue, the priority queue, printing each
    // decision the controller makes on it.
    let done_calls = Arc::new(AtomicUsize::new(0));
    let counted = done_calls.clone();
    let queue = CallLog::new(PriorityQueue::new(), move |call| {
        if call.starts_with("done ") {
            counted.fetch_add(1, Ordering::SeqCst);
        }
        println!("  {call}");
    });
    let attempts: Mutex<HashMap<Key, usize>> = Mutex::default();
    let reconciles = AtomicUsize::new(0);
    let reconciler = |key: Key| {
        let attempt = {
            let mut attempts = attempts.lock().unwrap();
            let n = attempts.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        reconciles.fetch_add(1, Ordering::SeqCst);
        reconcile(key, attempt)
    };
    for key in ["ok", "fail", "terminal", "later", "boom"] {
        queue.add(key);
    }

    // ANCHOR: loop
    // Print the error of each failed reconcile where upstream logs it.
    let log = |err: &anyhow::Error| println!("  log: Reconciler error: {err}");
    let options =
        Options { error_log: Some(Arc::new(log)), ..Options::default() };
    let controller = Controller::with_options(queue, reconciler, options);
    // One worker: take an item, reconcile, switch, done. Eight reconciles in
    // all: five first attempts, then the retries of fail, boom and later.
    while reconciles.load(Ordering::SeqCst) < 8 {
        controller.process_next_work_item().await;
    }
    // ANCHOR_END: loop

    let done = done_calls.load(Ordering::SeqCst);
    println!();
    println!(
        "reconciles: {}, done calls: {done}",
        reconciles.load(Ordering::SeqCst)
    );
}
