// What `forget` changes, and what it leaves alone.

use faithful_workqueue::default_rate_limiters::{
    RateLimiter, priority_queue_default_rate_limiter,
};
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use std::sync::Arc;

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: membership
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    println!("1. Forget does not remove anything from the queue");
    queue.add("a");
    println!("   {:<26}Len()={}", "after Add(\"a\")", queue.len());
    queue.forget(&"a");
    println!(
        "   {:<26}Len()={}   <- still queued",
        "after Forget(\"a\")",
        queue.len()
    );
    let item = queue.get().await.expect("a is queued");
    queue.done(&item);
    println!("   {:<26}Len()={}", "after Get()+Done()", queue.len());
    // ANCHOR_END: membership

    // ANCHOR: backoff
    // The queue and this code share one limiter, so the delays printed are
    // the ones add_rate_limited would use.
    let limiter = Arc::new(priority_queue_default_rate_limiter());
    let queue = RateLimitingQueue::new(limiter.clone());
    println!();
    println!("2. Forget resets the backoff");
    let delays: Vec<String> =
        (0..3).map(|_| GoDuration(limiter.when(&"a")).to_string()).collect();
    println!(
        "   {:<26}{}   NumRequeues={}",
        "When(\"a\") x3",
        delays.join(", "),
        queue.num_requeues(&"a")
    );
    queue.forget(&"a");
    println!(
        "   {:<26}NumRequeues={}",
        "after Forget(\"a\")",
        queue.num_requeues(&"a")
    );
    println!(
        "   {:<26}{}   <- the base delay again",
        "When(\"a\")",
        GoDuration(limiter.when(&"a"))
    );
    // ANCHOR_END: backoff
}
