// One object through the loop, each step printed with the time on tokio's
// paused clock: the event that adds it, the worker's get, the reconcile and
// what it returns, the requeue or forget the switch picks, the forget the
// queue passes on to the rate limiter, and done. Its Go twin prints the
// same bytes against controller-runtime; `cargo xtask bless` draws the
// chapter's sequence diagram (diagram.svg) from this output.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::anyhow;
use faithful_workqueue::call_log::CallLog;
use faithful_workqueue::controller::Controller;
use faithful_workqueue::default_rate_limiters::{
    RateLimiter, default_typed_controller_rate_limiter,
};
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::PriorityQueue;
use faithful_workqueue::rate_limiting_queue::Interface;
use faithful_workqueue::reconcile::ReconcileResult;
use tokio::time::Instant;

type Key = &'static str;

static START: OnceLock<Instant> = OnceLock::new();

/// One step of the sequence: when, from which participant, to which, what.
fn step(from: &str, to: &str, what: impl std::fmt::Display) {
    let at = START.get().expect("set in main").elapsed();
    println!(
        "{:<6} {:<10} {:<10} {what}",
        GoDuration(at).to_string(),
        from,
        to
    );
}

// ANCHOR: limiter
/// A limiter (here the port of `DefaultTypedControllerRateLimiter`, not the
/// default controller's plain exponential one), reporting each `forget` the
/// queue passes on to it. (Its `when` is not reported: upstream's priority
/// queue asks for the delay on a goroutine of its own, after the add
/// returns, so the line would fall at a different place on each side.)
struct Reporting<L>(L);

impl<L: RateLimiter<Key>> RateLimiter<Key> for Reporting<L> {
    fn when(&self, key: &Key) -> Duration {
        self.0.when(key)
    }
    fn forget(&self, key: &Key) {
        step("queue", "limiter", format!("forget {key:?}"));
        self.0.forget(key)
    }
    fn num_requeues(&self, key: &Key) -> usize {
        self.0.num_requeues(key)
    }
}
// ANCHOR_END: limiter

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    START.set(Instant::now()).expect("set once");
    println!("{:<6} {:<10} {:<10} call", "time", "from", "to");

    // The default queue with `DefaultTypedControllerRateLimiter` (the limiter
    // a controller picks with `UsePriorityQueue` set to false; for this key it
    // gives the same 5ms as the default's), with every call on the queue
    // reported: the event source's adds, and the worker's gets and decisions.
    let limiter = Reporting(default_typed_controller_rate_limiter());
    let queue =
        CallLog::new(PriorityQueue::with_rate_limiter(limiter), |call| {
            let from =
                if call.starts_with("add ") { "source" } else { "worker" };
            step(from, "queue", call)
        })
        .reporting_traffic();

    // ANCHOR: reconcile
    // The first attempt fails; during the second, an update to the object
    // arrives (the source adds it while the worker holds it); every later
    // attempt succeeds.
    let attempts = AtomicUsize::new(0);
    let source = queue.clone();
    let reconciler = |key: Key| {
        let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
        let source = source.clone();
        async move {
            step(
                "worker",
                "Reconcile",
                format!("reconcile {key:?} #{attempt}"),
            );
            if attempt == 2 {
                source.add(key);
            }
            let result = if attempt == 1 {
                Err(anyhow!("connection refused"))
            } else {
                Ok(ReconcileResult::done())
            };
            match &result {
                Ok(_) => step("Reconcile", "worker", "ok"),
                Err(err) => {
                    step("Reconcile", "worker", format!("error: {err}"))
                }
            }
            result
        }
    };
    // ANCHOR_END: reconcile

    let controller = Controller::new(queue.clone(), reconciler);
    queue.add("web");
    while attempts.load(Ordering::SeqCst) < 3 {
        controller.process_next_work_item().await;
    }
    // The third reconcile found nothing queued behind it.
    assert_eq!(queue.len(), 0);
}
