// The retry curve after replacing the default rate limiter: the same
// always-failing reconciler as listing 3-2, driven by the controller loop on
// the priority queue, now with an exponential limiter of 100ms base and 30s
// cap. Nothing here computes a delay; it reads the paused clock at each
// attempt.

use std::sync::Mutex;
use std::time::Duration;

use anyhow::anyhow;
use faithful_workqueue::controller::Controller;
use faithful_workqueue::default_rate_limiters::ItemExponentialFailureRateLimiter;
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::PriorityQueue;
use tokio::time::Instant;

const ATTEMPTS: usize = 13; // enough for a row at failure #12

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let attempts: Mutex<Vec<Instant>> = Mutex::default();
    // ANCHOR: limiter
    // The port's counterpart of `Options.RateLimiter`: the limiter goes into
    // the queue the controller is built on.
    let limiter = ItemExponentialFailureRateLimiter::new(
        Duration::from_millis(100),
        Duration::from_secs(30),
    );
    let queue = PriorityQueue::with_rate_limiter(limiter);
    let controller = Controller::new(queue.clone(), |_key: &'static str| {
        attempts.lock().unwrap().push(Instant::now());
        async { Err(anyhow!("connection refused")) }
    });
    // ANCHOR_END: limiter

    queue.add("default/web");
    while attempts.lock().unwrap().len() < ATTEMPTS {
        controller.process_next_work_item().await;
    }

    let attempts = attempts.into_inner().unwrap();
    println!("{:<10}{:>15}{:>22}", "failure", "waited", "reconciled again at");
    for failure in 1..ATTEMPTS {
        let waited = attempts[failure] - attempts[failure - 1];
        let again_at = attempts[failure] - attempts[0];
        println!(
            "{failure:<10}{:>15}{:>22}",
            GoDuration(waited),
            GoDuration(again_at)
        );
    }
    println!();
    println!("attempts observed: {}", attempts.len());
}
