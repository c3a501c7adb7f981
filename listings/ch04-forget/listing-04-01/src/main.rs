// What `forget` changes, and what it leaves alone.

use faithful_workqueue::default_rate_limiters::{
    RateLimiter, priority_queue_default_rate_limiter,
};
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use std::sync::Arc;
use std::time::Duration;

/// The first delay of the default limiter's curve.
const BASE_DELAY: Duration = Duration::from_millis(5);

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: membership
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    println!("1. Forget does not remove anything from the queue");
    queue.add("a");
    row("after Add(\"a\")", format!("Len()={}", queue.len()));

    queue.forget(&"a");
    let n = queue.len();
    row(
        "after Forget(\"a\")",
        format!("Len()={n}{}", note(n == 1, "still queued")),
    );

    // Only handing the item out and finishing it empties the queue.
    let item = queue.get().await.expect("a is queued");
    queue.done(&item);
    row("after Get()+Done()", format!("Len()={}", queue.len()));
    // ANCHOR_END: membership

    // ANCHOR: backoff
    // The queue and this code share one limiter, so the delays printed are
    // the ones add_rate_limited would use.
    let limiter = Arc::new(priority_queue_default_rate_limiter());
    let queue = RateLimitingQueue::new(limiter.clone());
    println!();
    println!("2. Forget resets the backoff");
    // Three failures in a row: the delays add_rate_limited would wait.
    let delays: Vec<String> =
        (0..3).map(|_| GoDuration(limiter.when(&"a")).to_string()).collect();
    let count = queue.num_requeues(&"a");
    row(
        "When(\"a\") x3",
        format!("{}   NumRequeues={count}", delays.join(", ")),
    );

    queue.forget(&"a");
    row(
        "after Forget(\"a\")",
        format!("NumRequeues={}", queue.num_requeues(&"a")),
    );

    let d = limiter.when(&"a");
    let again = note(d == BASE_DELAY, "the base delay again");
    row("When(\"a\")", format!("{}{again}", GoDuration(d)));
    // ANCHOR_END: backoff
}

/// One line of the table: what was done, then what the queue says.
fn row(label: &str, value: String) {
    println!("   {label:<26}{value}");
}

/// An arrow comment, printed only if what it claims was observed.
fn note(observed: bool, text: &str) -> String {
    if observed { format!("   <- {text}") } else { String::new() }
}
