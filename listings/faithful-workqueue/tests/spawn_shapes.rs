//! The shapes a reader writes first, with `&'static str` keys, as the docs use
//! them everywhere: each must compile, and each runs once.
//!
//! Before the controller's methods declared their futures `Send`, spawning
//! `process_next_work_item()` with `&'static str` keys failed with
//! "implementation of `PriorityInterface` is not general enough": the compiler
//! proves `Send` for an `async fn`'s future from its body, with the key's
//! lifetime forgotten, and the queue's impls hold for `'static` keys only.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use faithful_workqueue::call_log::CallLog;
use faithful_workqueue::controller::{Controller, Options, Outcome};
use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::priorityqueue::{PriorityInterface, PriorityQueue};
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use faithful_workqueue::reconcile::ReconcileResult;

async fn reconcile(_key: &'static str) -> anyhow::Result<ReconcileResult> {
    tokio::task::yield_now().await;
    Ok(ReconcileResult::done())
}

/// Spawns a worker loop over `c`, adds two keys, shuts the queue down, and
/// returns how many items the worker processed.
async fn run_spawned<Q, R>(c: Arc<Controller<&'static str, Q, R>>) -> usize
where
    Q: PriorityInterface<&'static str> + 'static,
    R: faithful_workqueue::reconcile::Reconciler<&'static str> + 'static,
{
    c.queue().add("a");
    c.queue().add("b");
    let worker = {
        let c = c.clone();
        tokio::spawn(async move {
            let mut n = 0;
            while c.process_next_work_item().await {
                n += 1;
                if n == 2 {
                    c.queue().shut_down();
                }
            }
            n
        })
    };
    worker.await.unwrap()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn spawn_worker_loop_async_fn_priority_queue() {
    let queue = PriorityQueue::new();
    let c = Arc::new(Controller::new(queue.clone(), reconcile));
    queue.add("a");
    let worker = {
        let c = c.clone();
        tokio::spawn(async move { while c.process_next_work_item().await {} })
    };
    tokio::time::sleep(Duration::from_millis(1)).await;
    queue.shut_down();
    worker.await.unwrap();
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn spawn_worker_loop_async_fn_rate_limiting_queue() {
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    let c = Arc::new(Controller::new(queue, reconcile));
    assert_eq!(run_spawned(c).await, 2);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn spawn_worker_loop_closure() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let reconciler = move |key: &'static str| {
        s.lock().unwrap().push(key);
        async { anyhow::Ok(ReconcileResult::done()) }
    };
    let c = Arc::new(Controller::new(PriorityQueue::new(), reconciler));
    assert_eq!(run_spawned(c).await, 2);
    assert_eq!(*seen.lock().unwrap(), ["a", "b"]);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn spawn_worker_loop_call_log() {
    let queue = CallLog::new(PriorityQueue::new(), |_| {});
    let c = Arc::new(Controller::new(queue, reconcile));
    assert_eq!(run_spawned(c).await, 2);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn spawn_worker_loop_default_queue() {
    let c: Controller<&'static str, _, _> =
        Controller::new_typed_unmanaged(reconcile, Options::default());
    assert_eq!(run_spawned(Arc::new(c)).await, 2);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn spawn_reconcile_and_reconcile_handler() {
    let queue = PriorityQueue::new();
    let c = Arc::new(Controller::new(queue.clone(), reconcile));
    let c2 = c.clone();
    let result = tokio::spawn(async move { c2.reconcile("a").await.unwrap() })
        .await
        .unwrap();
    assert_eq!(result, ReconcileResult::done());
    let c2 = c.clone();
    let outcome =
        tokio::spawn(async move { c2.reconcile_handler("a", 0).await })
            .await
            .unwrap();
    assert_eq!(outcome, Outcome::Success);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn spawn_start() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let reconciler = move |key: &'static str| {
        s.lock().unwrap().push(key);
        async { anyhow::Ok(ReconcileResult::done()) }
    };
    let c = Arc::new(Controller::new(PriorityQueue::new(), reconciler));
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    tx.send("a").await.unwrap();
    let running =
        tokio::spawn(c.start(rx, tokio::time::sleep(Duration::from_secs(1))));
    running.await.unwrap();
    assert_eq!(*seen.lock().unwrap(), ["a"]);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn spawn_queue_gets() {
    let pq = PriorityQueue::new();
    pq.add("a");
    let q = pq.clone();
    assert_eq!(
        tokio::spawn(async move { q.get_with_priority().await }).await.unwrap(),
        Some(("a", 0))
    );

    let rl = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    rl.add("a");
    let q = rl.clone();
    assert_eq!(
        tokio::spawn(async move { q.get().await }).await.unwrap(),
        Some("a")
    );
    rl.done(&"a");
    rl.add("b");
    let q = rl.clone();
    let leased =
        tokio::spawn(async move { q.lease().await.map(|lease| *lease.item()) })
            .await
            .unwrap();
    assert_eq!(leased, Some("b"));
}
