//! Port of client-go v0.37.2 `util/workqueue/queue_test.go`, scenario by
//! scenario, with upstream's expected values, on tokio's paused clock.
//!
//! Goroutines become tokio tasks, `sync.WaitGroup.Wait` becomes awaiting the
//! tasks' `JoinHandle`s, and `time.Sleep` becomes `tokio::time::sleep` (which
//! the paused clock auto-advances). Where upstream would hang forever on a bug,
//! the port wraps the wait in `wait_forever_test_timeout` (Go's
//! `wait.ForeverTestTimeout`, 30s), so a regression fails instead of hanging.
//!
//! Skipped or partially ported upstream tests:
//! * `TestCollapse`: partially ported. Its `traceQueue` wraps the pluggable
//!   `Queue[T]` store to record `Touch` calls; this port has no pluggable store
//!   and no `Touch` hook, so the assertion "bar was Touched" is dropped. The
//!   dedup assertions (one `Get`, then `Len()==0`) are kept.
//! * `TestCollapseWhileProcessing`: partially ported, same reason: the
//!   assertion "foo was not Touched" is dropped; everything else is kept.
//! * `TestGarbageCollection`: ported with `Weak` instead of a GC finalizer
//!   (`runtime.SetFinalizer`): the item must be freed once it is `Done` and the
//!   caller drops it, i.e. the queue keeps no clone.
//! * `BenchmarkQueue`: a benchmark, not a test; see `benches/queue.rs`.

use std::sync::{Arc, Weak};
use std::time::Duration;

use faithful_workqueue::queue::Queue;

/// Go's `wait.ForeverTestTimeout`.
const FOREVER_TEST_TIMEOUT: Duration = Duration::from_secs(30);

async fn wait_forever_test_timeout<F: std::future::Future>(
    what: &str,
    fut: F,
) -> F::Output {
    tokio::time::timeout(FOREVER_TEST_TIMEOUT, fut)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {FOREVER_TEST_TIMEOUT:?} (upstream would hang)"))
}

/// Upstream's queues hold `any`: the tests put ints and one string in them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Any {
    Int(usize),
    Str(&'static str),
}

#[derive(Clone, Copy, Debug)]
enum ShutDownKind {
    ShutDown,
    ShutDownWithDrain,
}

async fn shut_down(q: &Queue<Any>, kind: ShutDownKind) {
    match kind {
        ShutDownKind::ShutDown => q.shut_down(),
        ShutDownKind::ShutDownWithDrain => q.shut_down_with_drain().await,
    }
}

// upstream: queue_test.go TestBasic
#[tokio::test(start_paused = true)]
async fn test_basic() {
    for kind in [ShutDownKind::ShutDown, ShutDownKind::ShutDownWithDrain] {
        let q: Queue<Any> = Queue::new();

        // Start producers
        const PRODUCERS: usize = 50;
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|i| {
                let q = q.clone();
                tokio::spawn(async move {
                    for _ in 0..50 {
                        q.add(Any::Int(i));
                        tokio::time::sleep(Duration::from_millis(1)).await;
                    }
                })
            })
            .collect();

        // Start consumers
        const CONSUMERS: usize = 10;
        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move {
                    loop {
                        let item = q.get().await;
                        assert_ne!(
                            item,
                            Some(Any::Str("added after shutdown!")),
                            "Got an item added after shutdown."
                        );
                        let Some(item) = item else { return };
                        tokio::time::sleep(Duration::from_millis(3)).await;
                        q.done(&item);
                    }
                })
            })
            .collect();

        for p in producers {
            p.await.unwrap();
        }
        wait_forever_test_timeout("shut down", shut_down(&q, kind)).await;
        q.add(Any::Str("added after shutdown!"));
        for c in consumers {
            wait_forever_test_timeout("consumer", c).await.unwrap();
        }
        assert_eq!(q.len(), 0, "Expected the queue to be empty ({kind:?})");
    }
}

// upstream: queue_test.go TestAddWhileProcessing
#[tokio::test(start_paused = true)]
async fn test_add_while_processing() {
    for kind in [ShutDownKind::ShutDown, ShutDownKind::ShutDownWithDrain] {
        let q: Queue<Any> = Queue::new();

        // Start producers
        const PRODUCERS: usize = 50;
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|i| {
                let q = q.clone();
                tokio::spawn(async move { q.add(Any::Int(i)) })
            })
            .collect();

        // Start consumers
        const CONSUMERS: usize = 10;
        let consumers: Vec<_> = (0..CONSUMERS)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move {
                    // Every worker will re-add every item up to two times.
                    // This tests the dirty-while-processing case.
                    let mut counters =
                        std::collections::HashMap::<Any, usize>::new();
                    while let Some(item) = q.get().await {
                        let n = counters.entry(item.clone()).or_default();
                        *n += 1;
                        if *n < 2 {
                            q.add(item.clone());
                        }
                        q.done(&item);
                    }
                })
            })
            .collect();

        for p in producers {
            p.await.unwrap();
        }
        wait_forever_test_timeout("shut down", shut_down(&q, kind)).await;
        for c in consumers {
            wait_forever_test_timeout("consumer", c).await.unwrap();
        }
        assert_eq!(q.len(), 0, "Expected the queue to be empty ({kind:?})");
    }
}

// upstream: queue_test.go TestLen
#[tokio::test(start_paused = true)]
async fn test_len() {
    let q = Queue::new();
    q.add("foo");
    assert_eq!(q.len(), 1);
    q.add("bar");
    assert_eq!(q.len(), 2);
    q.add("foo"); // should not increase the queue length.
    assert_eq!(q.len(), 2);
}

// upstream: queue_test.go TestReinsert
#[tokio::test(start_paused = true)]
async fn test_reinsert() {
    let q = Queue::new();
    q.add("foo");

    // Start processing
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");

    // Add it back while processing
    q.add(i);

    // Finish it up
    q.done(&i);

    // It should be back on the queue
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");

    // Finish that one up
    q.done(&i);

    assert_eq!(q.len(), 0, "Expected queue to be empty");
}

// upstream: queue_test.go TestCollapse (without the Touch assertion; see the header)
#[tokio::test(start_paused = true)]
async fn test_collapse() {
    let q = Queue::new();
    // Add a new one twice
    q.add("bar");
    q.add("bar");

    // It should get the new one
    let i = q.get().await.unwrap();
    assert_eq!(i, "bar");

    // Finish that one up
    q.done(&i);

    // There should be no more objects in the queue
    assert_eq!(q.len(), 0, "Expected queue to be empty");
}

// upstream: queue_test.go TestCollapseWhileProcessing (without the Touch assertion; see the header)
#[tokio::test(start_paused = true)]
async fn test_collapse_while_processing() {
    let q = Queue::new();
    q.add("foo");

    // Start processing
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");

    // Add the same one twice
    q.add("foo");
    q.add("foo");

    // simulate another worker consuming the queue
    let worker = tokio::spawn({
        let q = q.clone();
        async move {
            let i = q.get().await.unwrap();
            assert_eq!(i, "foo");
            // Finish that one up
            q.done(&i);
        }
    });

    // give the worker some head start to avoid races
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Finish the first one to unblock the other worker
    assert!(
        !worker.is_finished(),
        "worker should be blocked until we are done"
    );
    q.done(&"foo");

    // wait for the worker to consume the new object
    wait_forever_test_timeout("worker", worker).await.unwrap();
    // There should be no more objects in the queue
    assert_eq!(q.len(), 0, "Expected queue to be empty");
}

// upstream: queue_test.go TestQueueDrainageUsingShutDownWithDrain
#[tokio::test(start_paused = true)]
async fn test_queue_drainage_using_shut_down_with_drain() {
    let q = Queue::new();

    q.add("foo");
    q.add("bar");

    let first_item = q.get().await.unwrap();
    let second_item = q.get().await.unwrap();

    let finished = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });

    // This is done as to simulate a sequence of events where ShutDownWithDrain
    // is called before we start marking all items as done - thus simulating a
    // drain where we wait for all items to finish processing.
    wait_forever_test_timeout("get until shutdown", async {
        while q.get().await.is_some() {}
    })
    .await;

    // ShutDownWithDrain must still be waiting: two items are processing.
    tokio::task::yield_now().await;
    assert!(
        !finished.is_finished(),
        "ShutDownWithDrain returned with items still processing"
    );

    // Mark the first two items as done, as to finish up
    q.done(&first_item);
    q.done(&second_item);

    wait_forever_test_timeout("ShutDownWithDrain", finished).await.unwrap();
}

// upstream: queue_test.go TestNoQueueDrainageUsingShutDown
#[tokio::test(start_paused = true)]
async fn test_no_queue_drainage_using_shut_down() {
    let q = Queue::new();

    q.add("foo");
    q.add("bar");

    let _ = q.get().await;
    let _ = q.get().await;

    let finished = tokio::spawn({
        let q = q.clone();
        // Invoke ShutDown: suspending the execution immediately.
        async move { q.shut_down() }
    });

    // We can now do this and not have the test timeout because we didn't call
    // Done on the first two items before arriving here.
    wait_forever_test_timeout("ShutDown", finished).await.unwrap();
}

// upstream: queue_test.go TestForceQueueShutdownUsingShutDown
#[tokio::test(start_paused = true)]
async fn test_force_queue_shutdown_using_shut_down() {
    let q = Queue::new();

    q.add("foo");
    q.add("bar");

    let _ = q.get().await;
    let _ = q.get().await;

    let finished = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });

    // This is done as to simulate a sequence of events where ShutDownWithDrain
    // is called before ShutDown
    wait_forever_test_timeout("get until shutdown", async {
        while q.get().await.is_some() {}
    })
    .await;

    // Use ShutDown to force the queue to shut down (simulating a caller
    // which can invoke this function on a second SIGTERM/SIGINT)
    q.shut_down();

    // We can now do this and not have the test timeout because we didn't call
    // done on any of the items before arriving here.
    wait_forever_test_timeout("ShutDownWithDrain", finished).await.unwrap();
}

// upstream: queue_test.go TestQueueDrainageUsingShutDownWithDrainWithDirtyItem
#[tokio::test(start_paused = true)]
async fn test_queue_drainage_using_shut_down_with_drain_with_dirty_item() {
    let q = Queue::new();

    q.add("foo");
    let gotten = q.get().await.unwrap();
    q.add("foo");

    let finished = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain().await }
    });

    // Ensure that ShutDownWithDrain has started and is blocked.
    wait_forever_test_timeout("get until shutdown", async {
        while q.get().await.is_some() {}
    })
    .await;

    // Finish "working".
    q.done(&gotten);

    // `shuttingDown` becomes false because Done caused an item to go back into
    // the queue.
    let again = q.get().await.expect("should not have been done");
    q.done(&again);

    // Now we are really done.
    assert_eq!(q.get().await, None, "should have been done");

    wait_forever_test_timeout("ShutDownWithDrain", finished).await.unwrap();
}

// upstream: queue_test.go TestGarbageCollection
#[tokio::test(start_paused = true)]
async fn test_garbage_collection() {
    #[derive(PartialEq, Eq, Hash)]
    struct BigObject {
        data: Vec<u8>,
    }
    let leak_queue: Queue<Arc<BigObject>> = Queue::new();
    let c = Arc::new(BigObject { data: b"hello".to_vec() });
    let must_be_freed: Weak<BigObject> = Arc::downgrade(&c);
    leak_queue.add(c);
    let o = leak_queue.get().await.unwrap();
    leak_queue.done(&o);
    drop(o);
    assert!(
        must_be_freed.upgrade().is_none(),
        "object was not freed: the queue kept a clone"
    );
    // Make sure leak_queue doesn't go out of scope too early
    drop(leak_queue);
}
