// The same two stories with a lease: `done` is the lease's `Drop`, so the
// healthy path needs no call at all, and the stall needs a deliberate leak.

use std::time::Duration;

use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;

const PATIENCE: Duration = Duration::from_millis(500);

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    queue.add("obj");

    // ANCHOR: lease
    {
        let lease = queue.lease().await.expect("obj is queued");
        queue.forget(lease.item());
        queue.add(*lease.item()); // an event arrives while we work
        println!(
            "while leased:   Len()={}   (the new event waits in the dirty set)",
            queue.len()
        );
    } // <- the lease drops here, and its Drop calls done
    println!(
        "lease dropped:  Len()={}   (done moved the dirty key back)",
        queue.len()
    );
    // ANCHOR_END: lease

    // ANCHOR: early_return
    async fn reconcile_with_early_return(
        queue: &RateLimitingQueue<&'static str>,
    ) -> anyhow::Result<()> {
        let lease = queue.lease().await.expect("obj is queued");
        queue.add(*lease.item());
        anyhow::ensure!(lease.item().is_empty(), "status update conflict");
        Ok(())
    }
    let err = reconcile_with_early_return(&queue).await.unwrap_err();
    println!(
        "after `?`:      Len()={}   (error \"{err}\"; done ran anyway)",
        queue.len()
    );
    // ANCHOR_END: early_return

    // ANCHOR: leak
    let lease = queue.lease().await.expect("obj is queued");
    std::mem::forget(lease); // the only way to skip done: leak the lease
    for _ in 0..100 {
        queue.add("obj");
    }
    let stalled = tokio::time::timeout(PATIENCE, queue.get()).await.is_err();
    println!(
        "mem::forget:    Len()={} after 100 adds; \
         Get() timed out after {}: {stalled}",
        queue.len(),
        GoDuration(PATIENCE)
    );
    // ANCHOR_END: leak
}
