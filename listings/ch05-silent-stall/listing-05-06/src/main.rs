// A reconcile that never finishes, cancelled from outside: by a timeout, or
// by aborting its task. Cancelling a future drops it, with the lease it
// holds, and the lease's Drop calls done: the key comes back.

use std::time::Duration;

use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use tokio::time::Instant;

/// How long the demonstration waits for the key to be handed out again. On
/// the paused clock this wait costs no time.
const PATIENCE: Duration = Duration::from_millis(500);

/// A reconcile that takes a key, sees a new event for it, and then hangs on
/// a call that never answers.
// ANCHOR: reconcile
async fn hung_reconcile(queue: RateLimitingQueue<&'static str>) {
    let lease = queue.lease().await.expect("obj is queued");
    queue.add(*lease.item()); // an event arrives while we work
    std::future::pending::<()>().await; // a call that never answers
}
// ANCHOR_END: reconcile

async fn handed_out_again(queue: &RateLimitingQueue<&'static str>) -> String {
    match tokio::time::timeout(PATIENCE, queue.get()).await {
        Ok(Some(item)) => {
            queue.done(&item);
            format!("Get() -> {item:?}")
        }
        Ok(None) => "shut down".to_string(),
        Err(_) => {
            format!("Get() timed out after {}: stalled", GoDuration(PATIENCE))
        }
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: timeout
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    queue.add("obj");
    let start = Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        hung_reconcile(queue.clone()),
    )
    .await;
    // The timeout dropped the future, and the lease inside it.
    println!(
        "timeout: {} after {}, then Len()={}, {}",
        if result.is_err() { "cancelled" } else { "finished" },
        GoDuration(start.elapsed()),
        queue.len(),
        handed_out_again(&queue).await
    );
    // ANCHOR_END: timeout

    // ANCHOR: abort
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    queue.add("obj");
    let task = tokio::spawn(hung_reconcile(queue.clone()));
    tokio::time::sleep(Duration::from_secs(30)).await;
    println!(
        "abort:   before abort(), Len()={} (the new event waits in the dirty set)",
        queue.len()
    );
    task.abort();
    let cancelled = task.await.is_err_and(|e| e.is_cancelled());
    println!(
        "abort:   task cancelled: {cancelled}, then Len()={}, {}",
        queue.len(),
        handed_out_again(&queue).await
    );
    // ANCHOR_END: abort
}
