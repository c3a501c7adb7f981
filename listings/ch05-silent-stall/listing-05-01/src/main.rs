// A key whose `done` never comes: every later add lands in the dirty set, and
// `get` never hands the key out again.

use std::time::Duration;

use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;

/// How long the demonstration waits before calling the key stalled. The stall
/// itself is permanent; on the paused clock this wait costs no time.
const PATIENCE: Duration = Duration::from_millis(500);

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: healthy
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    println!("healthy: Get -> Forget -> Done");
    queue.add("obj");
    let obj = queue.get().await.expect("obj is queued");
    queue.forget(&obj);
    queue.done(&obj);
    queue.add("obj");
    let again = tokio::time::timeout(PATIENCE, queue.get())
        .await
        .expect("a done key is handed out again");
    println!(
        "   Add(\"obj\") again, then Get() returns {:?}",
        again.expect("not shut down")
    );
    queue.done(&obj);
    // ANCHOR_END: healthy

    // ANCHOR: stall
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    println!();
    println!("stall: Get -> Forget, Done never called");
    queue.add("obj");
    let obj = queue.get().await.expect("obj is queued");
    queue.forget(&obj);
    // ... and no queue.done(&obj).
    for _ in 0..100 {
        queue.add("obj");
    }
    println!("   100 more Add(\"obj\") calls, then Len()={}", queue.len());
    match tokio::time::timeout(PATIENCE, queue.get()).await {
        Err(_elapsed) => {
            println!(
                "   Get() timed out after {}: {obj:?} is never handed out again",
                GoDuration(PATIENCE)
            )
        }
        Ok(item) => println!("   unexpected: Get() returned {item:?}"),
    }
    // ANCHOR_END: stall
}
