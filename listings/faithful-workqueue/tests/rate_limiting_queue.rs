//! Port of client-go v0.37.2 `util/workqueue/rate_limiting_queue_test.go`, with
//! upstream's expected values, on tokio's paused clock.
//!
//! Upstream builds the queue by hand around a fake clock and reads each
//! `waitFor` entry straight off `waitingForAddCh`, checking
//! `readyAt - now`; since it takes the entry off the channel, the entry never
//! reaches the heap. This port has no channel, so each expected delay `d` is
//! checked on the queue itself: the item is not in the FIFO at `d - 1ns` and
//! is at exactly `d`. It is then taken out with `get` + `done`, so that, as
//! upstream, no entry is left behind to dedupe the next `add_rate_limited`.
//!
//! Skipped upstream tests: none.

use std::time::Duration;

use faithful_workqueue::default_rate_limiters::ItemExponentialFailureRateLimiter;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use tokio::time::advance;

const MS: Duration = Duration::from_millis(1);
const NS: Duration = Duration::from_nanos(1);

/// Upstream's `waitEntry := <-waitingForAddCh; readyAt.Sub(now) == want`.
async fn expect_wait_entry(
    q: &RateLimitingQueue<&'static str>,
    item: &'static str,
    want: Duration,
) {
    assert_eq!(q.waiting_len(), 1, "{item}: expected one wait entry");
    assert_eq!(q.len(), 0, "{item}: added before its delay");
    advance(want - NS).await;
    assert_eq!(q.len(), 0, "{item}: ready before {want:?}");
    advance(NS).await;
    assert_eq!(q.len(), 1, "{item}: not ready after {want:?}");
    let got = q.get().await.unwrap();
    assert_eq!(got, item);
    q.done(&got);
}

// upstream: rate_limiting_queue_test.go TestRateLimitingQueue
#[tokio::test(start_paused = true)]
async fn test_rate_limiting_queue() {
    let limiter =
        ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1));
    let queue = RateLimitingQueue::new(limiter);

    queue.add_rate_limited("one");
    expect_wait_entry(&queue, "one", MS).await;
    queue.add_rate_limited("one");
    expect_wait_entry(&queue, "one", 2 * MS).await;
    assert_eq!(queue.num_requeues(&"one"), 2);

    queue.add_rate_limited("two");
    expect_wait_entry(&queue, "two", MS).await;
    queue.add_rate_limited("two");
    expect_wait_entry(&queue, "two", 2 * MS).await;

    queue.forget(&"one");
    assert_eq!(queue.num_requeues(&"one"), 0);
    queue.add_rate_limited("one");
    expect_wait_entry(&queue, "one", MS).await;
}
