// The retry curve as a failing object lives it: a reconciler that always
// fails, driven by the controller loop through the rate-limiting queue, on
// tokio's paused clock. Nothing here computes a delay; it reads the clock at
// each attempt.

use std::sync::Mutex;

use anyhow::anyhow;
use faithful_workqueue::controller::Controller;
use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use tokio::time::Instant;

const SHOWN: [usize; 12] = [1, 2, 4, 8, 10, 12, 14, 16, 18, 19, 20, 22];
const ATTEMPTS: usize = 23;

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: measure
    let attempts: Mutex<Vec<Instant>> = Mutex::default();
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    let controller = Controller::new(queue.clone(), |_key: &'static str| {
        attempts.lock().unwrap().push(Instant::now());
        async { Err(anyhow!("connection refused")) }
    });

    queue.add("default/web");
    // The paused clock jumps straight to each retry: an hour and a half of
    // backoff runs in microseconds.
    while attempts.lock().unwrap().len() < ATTEMPTS {
        controller.process_next_work_item().await;
    }
    // ANCHOR_END: measure

    let attempts = attempts.into_inner().unwrap();
    println!("{:<10}{:>15}{:>22}", "failure", "waited", "reconciled again at");
    for failure in SHOWN {
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
