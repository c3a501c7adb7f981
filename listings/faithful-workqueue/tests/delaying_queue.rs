//! Port of client-go v0.37.2 `util/workqueue/delaying_queue_test.go`, scenario
//! by scenario, with upstream's expected values, on tokio's paused clock.
//!
//! Upstream's `fakeClock.Step(d)` is `tokio::time::advance(d)`.
//! `waitForWaitingQueueToFill` (wait until the `AddAfter` channel is drained
//! into the heap) becomes a check of `waiting_len()`: this port has no
//! channel, `add_after` inserts into the waiting heap synchronously.
//! `waitForAdded(q, n)` (poll `Len()` until it equals n) becomes
//! `assert_eq!(q.len(), n)`: this port moves due entries into the FIFO on
//! every call, so `len()` is already exact right after the step.
//!
//! Skipped upstream tests:
//! * `BenchmarkDelayingQueue_AddAfter`: a benchmark, not a test.

use std::time::Duration;

use faithful_workqueue::delaying_queue::DelayingQueue;
use tokio::time::advance;

const MS: Duration = Duration::from_millis(1);
const S: Duration = Duration::from_secs(1);

// upstream: delaying_queue_test.go TestSimpleQueue
#[tokio::test(start_paused = true)]
async fn test_simple_queue() {
    let q = DelayingQueue::new();

    let first = "foo";

    q.add_after(first, 50 * MS);
    assert_eq!(q.waiting_len(), 1);

    assert_eq!(q.len(), 0, "should not have added");

    advance(60 * MS).await;

    assert_eq!(q.len(), 1, "should have added");
    let item = q.get().await.unwrap();
    q.done(&item);

    // step past the next heartbeat
    advance(10 * S).await;

    // upstream polls Len() every 1ms for 30ms and expects it to stay 0
    for _ in 0..30 {
        assert_eq!(q.len(), 0, "added to queue");
        tokio::time::sleep(MS).await;
    }

    assert_eq!(q.len(), 0, "should not have added");
}

// upstream: delaying_queue_test.go TestDeduping
#[tokio::test(start_paused = true)]
async fn test_deduping() {
    let q = DelayingQueue::new();

    let first = "foo";

    q.add_after(first, 50 * MS);
    assert_eq!(q.waiting_len(), 1);
    q.add_after(first, 70 * MS);
    assert_eq!(q.waiting_len(), 1);
    assert_eq!(q.len(), 0, "should not have added");

    // step past the first block, we should receive now
    advance(60 * MS).await;
    assert_eq!(q.len(), 1, "should have added");
    let item = q.get().await.unwrap();
    q.done(&item);

    // step past the second add
    advance(20 * MS).await;
    assert_eq!(q.len(), 0, "should not have added");

    // test again, but this time the earlier should override
    q.add_after(first, 50 * MS);
    q.add_after(first, 30 * MS);
    assert_eq!(q.waiting_len(), 1);
    assert_eq!(q.len(), 0, "should not have added");

    advance(40 * MS).await;
    assert_eq!(q.len(), 1, "should have added");
    let item = q.get().await.unwrap();
    q.done(&item);

    // step past the second add
    advance(20 * MS).await;
    assert_eq!(q.len(), 0, "should not have added");
}

// upstream: delaying_queue_test.go TestAddTwoFireEarly
#[tokio::test(start_paused = true)]
async fn test_add_two_fire_early() {
    let q = DelayingQueue::new();

    let first = "foo";
    let second = "bar";
    let third = "baz";

    q.add_after(first, S);
    q.add_after(second, 50 * MS);
    assert_eq!(q.waiting_len(), 2);

    assert_eq!(q.len(), 0, "should not have added");

    advance(60 * MS).await;

    assert_eq!(q.len(), 1);
    let item = q.get().await.unwrap();
    assert_eq!(item, second);

    q.add_after(third, 2 * S);

    advance(S).await;
    assert_eq!(q.len(), 1);
    let item = q.get().await.unwrap();
    assert_eq!(item, first);

    advance(2 * S).await;
    assert_eq!(q.len(), 1);
    let item = q.get().await.unwrap();
    assert_eq!(item, third);
}

// upstream: delaying_queue_test.go TestCopyShifting
#[tokio::test(start_paused = true)]
async fn test_copy_shifting() {
    let q = DelayingQueue::new();

    let first = "foo";
    let second = "bar";
    let third = "baz";

    q.add_after(first, S);
    q.add_after(second, 500 * MS);
    q.add_after(third, 250 * MS);
    assert_eq!(q.waiting_len(), 3);

    assert_eq!(q.len(), 0, "should not have added");

    advance(2 * S).await;

    assert_eq!(q.len(), 3);
    let actual_first = q.get().await.unwrap();
    assert_eq!(actual_first, third);
    let actual_second = q.get().await.unwrap();
    assert_eq!(actual_second, second);
    let actual_third = q.get().await.unwrap();
    assert_eq!(actual_third, first);
}

// not upstream: a get already waiting sees a later add_after (found by a
// doctest; upstream's AddAfter wakes its waiting loop the same way).
#[tokio::test(start_paused = true)]
async fn a_waiting_get_sees_a_later_add_after() {
    let q: DelayingQueue<&'static str> = DelayingQueue::new();
    q.add_after("late", Duration::from_secs(10));
    let getter = tokio::spawn({
        let q = q.clone();
        async move { (q.get().await, tokio::time::Instant::now()) }
    });
    tokio::task::yield_now().await;
    let start = tokio::time::Instant::now();
    q.add_after("early", Duration::from_secs(1));
    let (item, at) = getter.await.unwrap();
    assert_eq!(item, Some("early"));
    assert_eq!(at - start, Duration::from_secs(1));

    // And on an empty queue.
    let q: DelayingQueue<&'static str> = DelayingQueue::new();
    let getter = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    tokio::task::yield_now().await;
    q.add_after("a", Duration::from_secs(1));
    let got = tokio::time::timeout(Duration::from_secs(2), getter).await;
    assert_eq!(got.expect("woken by the add_after").unwrap(), Some("a"));
}
