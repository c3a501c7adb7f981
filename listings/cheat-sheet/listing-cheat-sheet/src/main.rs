// The cheat sheet's two tables, measured: each arm of the switch run through
// the controller on a queue that records the calls, and each Forget/Done rule
// run on client-go's queue. Nothing in the tables is typed in.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use faithful_workqueue::call_log::CallLog;
use faithful_workqueue::controller::Controller;
use faithful_workqueue::default_rate_limiters::{
    ItemExponentialFailureRateLimiter, RateLimiter,
};
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::PriorityQueue;
use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingQueue};
use faithful_workqueue::reconcile::{ReconcileResult, terminal_error};

type Key = &'static str;
type Outcome = fn() -> anyhow::Result<ReconcileResult>;

const KEY: Key = "default/web";
const PATIENCE: Duration = Duration::from_millis(500);

fn limiter() -> Arc<ItemExponentialFailureRateLimiter<Key>> {
    Arc::new(ItemExponentialFailureRateLimiter::new(
        Duration::from_millis(5),
        Duration::from_secs(1000),
    ))
}

/// Runs one reconcile returning `outcome` through the switch, for a key that
/// has failed twice already, and reports the calls and the failure count after.
async fn arm(outcome: Outcome) -> (Vec<String>, usize) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let sink = calls.clone();
    // ANCHOR: arm
    let limiter = limiter();
    limiter.when(&KEY);
    limiter.when(&KEY);
    let queue = CallLog::new(
        PriorityQueue::with_rate_limiter(limiter.clone()),
        move |call| {
            sink.lock().unwrap().push(call.replace(&format!(" {KEY:?}"), ""))
        },
    );
    let controller = Controller::new(
        queue.clone(),
        move |_key: Key| async move { outcome() },
    );
    queue.add(KEY);
    controller.process_next_work_item().await;
    // ANCHOR_END: arm
    let calls = calls.lock().unwrap().clone();
    (calls, limiter.num_requeues(&KEY))
}

/// A recorded call as a Go reader writes it: `add_after 30s` is
/// `AddAfter 30s`. The table speaks Go, the language of the reconciler.
fn go_name(call: &str) -> String {
    let (name, rest) = call.split_once(' ').map_or((call, ""), |(n, r)| (n, r));
    let camel: String = name
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        })
        .collect();
    if rest.is_empty() { camel } else { format!("{camel} {rest}") }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    std::panic::set_hook(Box::new(|_| {})); // the panicking arm is recovered; keep stderr quiet

    // ANCHOR: switch
    let arms: [(&str, Outcome); 6] = [
        ("Result{}, nil", || Ok(ReconcileResult::done())),
        ("{RequeueAfter: 30s}, nil", || {
            Ok(ReconcileResult::requeue_after(Duration::from_secs(30)))
        }),
        ("{Requeue: true}, nil", || {
            Ok(ReconcileResult { requeue: true, ..ReconcileResult::default() })
        }),
        ("{}, err", || Err(anyhow!("connection refused"))),
        ("{}, TerminalError(err)", || {
            Err(terminal_error(anyhow!("spec.replicas must be >= 0")))
        }),
        ("panic, RecoverPanic on", || panic!("nil map")),
    ];
    println!(
        "THE SWITCH: what happens after Reconcile returns (the key had failed twice)"
    );
    println!(
        "{:<26}{:<38}failures after",
        "reconcile returned", "queue calls, in order"
    );
    for (name, outcome) in arms {
        let (calls, failures) = arm(outcome).await;
        let calls: Vec<String> = calls.iter().map(|c| go_name(c)).collect();
        println!("{name:<26}{:<38}{failures}", calls.join(", "));
    }
    // ANCHOR_END: switch

    // ANCHOR: rules
    println!();
    println!("FORGET AND DONE: on client-go's queue");
    println!("{:<26}{:<40}failure count", "call", "the queue");
    let limiter = limiter();
    let queue = RateLimitingQueue::new(limiter.clone());
    queue.add(KEY);
    limiter.when(&KEY);
    limiter.when(&KEY);
    let (len, count) = (queue.len(), queue.num_requeues(&KEY));
    queue.forget(&KEY);
    let forgot = format!("Len {len} -> {}", queue.len());
    println!(
        "{:<26}{forgot:<40}{count} -> {}",
        "Forget(key)",
        queue.num_requeues(&KEY)
    );

    let key = queue.get().await.expect("queued");
    queue.add(key); // an event while processing: dirty only
    let before = queue.len();
    queue.done(&key);
    let done = format!("Len {before} -> {}: back in the FIFO", queue.len());
    println!("{:<26}{done:<40}untouched", "Done(key) after a re-add");

    let key = queue.get().await.expect("queued");
    for _ in 0..100 {
        queue.add(key);
    }
    let stalled = tokio::time::timeout(PATIENCE, queue.get()).await.is_err();
    let never = format!(
        "Len {}, Get timed out after {}: {stalled}",
        queue.len(),
        GoDuration(PATIENCE)
    );
    println!("{:<26}{never:<40}untouched", "no Done, then 100 adds");
    // ANCHOR_END: rules
}
