// The retry curve as a failing object lives it: a reconciler that always
// fails, driven by the controller loop through the rate-limiting queue, on
// tokio's paused clock. Nothing here computes a delay: the waits are read off
// the clock at each attempt, and set beside what a limiter of the same kind,
// asked on its own, answers for the same failure.

use std::sync::Mutex;
use std::time::Duration;

use anyhow::anyhow;
use faithful_workqueue::controller::Controller;
use faithful_workqueue::default_rate_limiters::{
    RateLimiter, priority_queue_default_rate_limiter,
};
use faithful_workqueue::go_duration::{GoDuration, round};
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
    // ANCHOR: table
    // The limiter's own answers, from a fresh one of the same kind: the
    // n-th call is what it says for failure n. Their running total is shown
    // to the second; the measured columns are exact.
    let limiter = priority_queue_default_rate_limiter();
    let says: Vec<_> =
        (0..ATTEMPTS).map(|_| limiter.when(&"default/web")).collect();
    println!(
        "{:<10}{:>15}{:>17}{:>15}{:>22}",
        "failure", "delay", "cumulative", "waited", "reconciled again at"
    );
    for failure in SHOWN {
        let cumulative: Duration = says[..failure].iter().sum();
        let waited = attempts[failure] - attempts[failure - 1];
        let again_at = attempts[failure] - attempts[0];
        println!(
            "{failure:<10}{:>15}{:>17}{:>15}{:>22}",
            GoDuration(says[failure - 1]),
            GoDuration(round(cumulative, Duration::from_secs(1))),
            GoDuration(waited),
            GoDuration(again_at)
        );
    }
    // ANCHOR_END: table
    println!();
    println!("attempts observed: {}", attempts.len());
}
