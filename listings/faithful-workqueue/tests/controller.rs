//! The reconcile switch of controller-runtime v0.25.3
//! (`pkg/internal/controller/controller.go`, `reconcileHandler` and
//! `processNextWorkItem`), tested against this port's `Controller`, on tokio's
//! paused clock.
//!
//! Upstream's switch tests live in `pkg/internal/controller/controller_test.go`
//! (Ginkgo, run under envtest) and `pkg/reconcile/reconcile_test.go`. The tests
//! below port the ones that exercise the switch, `done` and panics; each names
//! its upstream `It(...)`. Their queue is a `Recorder` that wraps a real
//! `RateLimitingQueue` and logs every call the controller makes (upstream's
//! `DelegatingQueue` counts them the same way).
//!
//! Tests marked `// not upstream:` check behaviour the brief asks for that no
//! upstream test asserts (the notes mark it *derived*).
//!
//! A result returned together with an error (Go's `return result, err`) is
//! written with `reconcile::with_result`. The six priority tests ("should
//! retain the priority ..." / "should use the priority from Result ...") run
//! on the port's `PriorityQueue` and check the priority the requeued request
//! is handed out with, where upstream records the `AddOpts` of the requeue.
//!
//! Skipped upstream tests:
//! * "should time out if ReconciliationTimeout is set" and the
//!   `reconcile_timeouts` metric tests that need a context: upstream cancels a
//!   `context.Context` and expects the reconciler's own
//!   `context.DeadlineExceeded`; this port has no context (it drops the future
//!   and reports its own error, as its docs say).
//! * Everything needing envtest, informers, sources, warm-up or
//!   `MaxConcurrentReconciles` goroutine counting.

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, anyhow};
use faithful_workqueue::call_log::CallLog;
use faithful_workqueue::controller::{
    Controller, Options, Outcome, panic_message,
};
use faithful_workqueue::default_rate_limiters::{
    ItemExponentialFailureRateLimiter, RateLimiter,
};
use faithful_workqueue::priorityqueue::{
    AddOpts, PriorityInterface, PriorityQueue, client_go_add_with_opts,
    client_go_get_with_priority,
};
use faithful_workqueue::rate_limiting_queue::{
    DelayingInterface, Interface, RateLimitingInterface, RateLimitingQueue,
};
use faithful_workqueue::reconcile::{
    ReconcileResult, TerminalError, is_terminal, terminal_error, with_result,
};
use tokio::time::advance;

const MS: Duration = Duration::from_millis(1);
const NS: Duration = Duration::from_nanos(1);
const REQUEST: &str = "foo/bar";

type Limiter = Arc<ItemExponentialFailureRateLimiter<&'static str>>;

/// A real rate-limiting queue that logs each call the controller makes.
#[derive(Clone)]
struct Recorder {
    q: RateLimitingQueue<&'static str>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    /// A recorder over controller-runtime's priority-queue default limiter,
    /// exponential 5ms..1000s; the limiter is returned too so a test can set up
    /// earlier failures.
    fn new() -> (Self, Limiter) {
        let limiter: Limiter =
            Arc::new(ItemExponentialFailureRateLimiter::new(
                5 * MS,
                Duration::from_secs(1000),
            ));
        let q = RateLimitingQueue::new(limiter.clone());
        (Self { q, log: Arc::default() }, limiter)
    }

    fn push(&self, call: impl Into<String>) {
        self.log.lock().unwrap().push(call.into());
    }

    /// The calls logged so far; clears the log.
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    fn processing(&self) -> Vec<&'static str> {
        self.q.queue().debug_state().processing
    }
}

impl Interface<&'static str> for Recorder {
    fn add(&self, item: &'static str) {
        self.push("add");
        self.q.add(item)
    }
    fn len(&self) -> usize {
        self.q.len()
    }
    fn get(&self) -> impl Future<Output = Option<&'static str>> + Send {
        let this = self.clone();
        async move {
            let item = this.q.get().await;
            if item.is_some() {
                this.push("get");
            }
            item
        }
    }
    fn done(&self, item: &&'static str) {
        self.push("done");
        self.q.done(item)
    }
    fn shut_down(&self) {
        self.q.shut_down()
    }
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send {
        let q = self.q.clone();
        async move { q.shut_down_with_drain().await }
    }
    fn shutting_down(&self) -> bool {
        self.q.shutting_down()
    }
}

// The controller drives its queue through `PriorityInterface`; mapped to the
// calls above, as upstream's wrapper does.
impl PriorityInterface<&'static str> for Recorder {
    fn add_with_opts(
        &self,
        opts: AddOpts,
        items: impl IntoIterator<Item = &'static str>,
    ) {
        client_go_add_with_opts(self, opts, items)
    }
    fn get_with_priority(
        &self,
    ) -> impl Future<Output = Option<(&'static str, i32)>> + Send {
        client_go_get_with_priority(self)
    }
}

impl DelayingInterface<&'static str> for Recorder {
    fn add_after(&self, item: &'static str, delay: Duration) {
        self.push(format!("add_after({delay:?})"));
        self.q.add_after(item, delay)
    }
}

impl RateLimitingInterface<&'static str> for Recorder {
    fn add_rate_limited(&self, item: &'static str) {
        self.push("add_rate_limited");
        self.q.add_rate_limited(item)
    }
    fn forget(&self, item: &&'static str) {
        self.push("forget");
        self.q.forget(item)
    }
    fn num_requeues(&self, item: &&'static str) -> usize {
        self.q.num_requeues(item)
    }
}

/// A reconciler that returns the scripted results in order (upstream's
/// `fakeReconcile.AddResult`), or panics when the script says so.
#[derive(Clone, Default)]
struct Script(Arc<Mutex<std::collections::VecDeque<Step>>>);

enum Step {
    Return(anyhow::Result<ReconcileResult>),
    Panic(&'static str),
}

impl Script {
    fn then(&self, step: Step) -> &Self {
        self.0.lock().unwrap().push_back(step);
        self
    }
    fn ok(&self, result: ReconcileResult) -> &Self {
        self.then(Step::Return(Ok(result)))
    }
    fn err(&self, err: anyhow::Error) -> &Self {
        self.then(Step::Return(Err(err)))
    }
    fn reconciler(
        &self,
    ) -> impl Fn(
        &'static str,
    ) -> std::pin::Pin<
        Box<dyn Future<Output = anyhow::Result<ReconcileResult>> + Send>,
    > + Send
    + Sync
    + 'static {
        let script = self.clone();
        move |_req| {
            let step = script
                .0
                .lock()
                .unwrap()
                .pop_front()
                .expect("reconcile called more often than scripted");
            Box::pin(async move {
                match step {
                    Step::Return(result) => result,
                    Step::Panic(msg) => panic!("{msg}"),
                }
            })
        }
    }
}

fn controller(
    queue: &Recorder,
    script: &Script,
    options: Options,
) -> Controller<
    &'static str,
    Recorder,
    impl faithful_workqueue::reconcile::Reconciler<&'static str> + 'static,
> {
    Controller::with_options(queue.clone(), script.reconciler(), options)
}

/// Asserts that `item` is waiting and becomes ready exactly `delay` from now,
/// then takes it out of the FIFO again with the queue's own get (not logged).
async fn expect_requeued_after(
    q: &Recorder,
    item: &'static str,
    delay: Duration,
) {
    assert_eq!(q.q.waiting_len(), 1, "expected one waiting entry");
    assert_eq!(q.q.len(), 0);
    advance(delay - NS).await;
    assert_eq!(q.q.len(), 0, "ready before {delay:?}");
    advance(NS).await;
    assert_eq!(q.q.len(), 1, "not ready after {delay:?}");
    let _ = item;
}

// ---------------------------------------------------------------------------
// the switch, arm by arm

// upstream: controller_test.go "should call Reconciler if an item is enqueued"
// (success arm: forget, then done)
#[tokio::test(start_paused = true)]
async fn should_call_reconciler_if_an_item_is_enqueued() {
    let (q, limiter) = Recorder::new();
    let script = Script::default();
    script.ok(ReconcileResult::done());
    let c = controller(&q, &script, Options::default());
    limiter.when(&REQUEST);
    limiter.when(&REQUEST);

    q.q.add(REQUEST);
    assert!(c.process_next_work_item().await);

    assert_eq!(q.take(), ["get", "forget", "done"]);
    assert_eq!(q.num_requeues(&REQUEST), 0, "success forgets the failures");
    assert_eq!(
        (q.len(), q.q.waiting_len()),
        (0, 0),
        "success does not requeue"
    );
    assert!(q.processing().is_empty(), "done ran");
}

// upstream: controller_test.go "should requeue a Request if there is an error and continue processing items"
#[tokio::test(start_paused = true)]
async fn should_requeue_a_request_if_there_is_an_error_and_continue_processing_items()
 {
    let (q, _) = Recorder::new();
    let script = Script::default();
    let c = controller(&q, &script, Options::default());

    q.q.add(REQUEST);

    // Invoking Reconciler which will give an error
    script.err(anyhow!("expected error: reconcile"));
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "add_rate_limited", "done"]);
    assert_eq!(q.num_requeues(&REQUEST), 1);
    assert!(q.processing().is_empty(), "done ran");
    expect_requeued_after(&q, REQUEST, 5 * MS).await;

    // Invoking Reconciler a second time without error
    script.ok(ReconcileResult::done());
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "forget", "done"]);

    // Removing the item from the queue
    assert_eq!(q.len(), 0);
    assert_eq!(q.num_requeues(&REQUEST), 0);
}

// upstream: controller_test.go "should not requeue a Request if there is a terminal error"
// (also: the failure count is kept, not forgotten)
#[tokio::test(start_paused = true)]
async fn should_not_requeue_a_request_if_there_is_a_terminal_error() {
    let (q, limiter) = Recorder::new();
    let script = Script::default();
    let c = controller(&q, &script, Options::default());
    limiter.when(&REQUEST);
    limiter.when(&REQUEST);

    q.q.add(REQUEST);

    script.err(terminal_error(anyhow!("expected error: reconcile")));
    assert!(c.process_next_work_item().await);

    assert_eq!(q.take(), ["get", "done"], "no add_rate_limited, no forget");
    assert_eq!(q.len(), 0);
    assert_eq!(q.q.waiting_len(), 0);
    assert_eq!(
        q.num_requeues(&REQUEST),
        2,
        "a terminal error keeps num_requeues"
    );
    assert!(q.processing().is_empty(), "done ran");
    advance(Duration::from_secs(2000)).await;
    assert_eq!(q.len(), 0, "never requeued");
}

// upstream: controller_test.go "should not reset backoff until there's a non-error result"
#[tokio::test(start_paused = true)]
async fn should_not_reset_backoff_until_theres_a_non_error_result() {
    let (q, _) = Recorder::new();
    let script = Script::default();
    let c = controller(&q, &script, Options::default());

    q.q.add(REQUEST);

    // Invoking Reconciler which returns an error
    script.err(anyhow!("something's wrong"));
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "add_rate_limited", "done"]);
    assert_eq!(q.num_requeues(&REQUEST), 1);
    expect_requeued_after(&q, REQUEST, 5 * MS).await;

    // Invoking Reconciler a second time with an error
    script.err(anyhow!("another thing's wrong"));
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "add_rate_limited", "done"]);
    assert_eq!(q.num_requeues(&REQUEST), 2);
    expect_requeued_after(&q, REQUEST, 10 * MS).await;

    // Invoking Reconciler a third time, where it finally does not return an error
    script.ok(ReconcileResult::done());
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "forget", "done"]);

    // Removing the item from the queue
    assert_eq!(q.len(), 0);
    assert_eq!(q.num_requeues(&REQUEST), 0);
}

// upstream: controller_test.go "should requeue a Request with rate limiting if the Result sets Requeue:true and continue processing items"
#[tokio::test(start_paused = true)]
async fn should_requeue_a_request_with_rate_limiting_if_the_result_sets_requeue_true()
 {
    let (q, _) = Recorder::new();
    let script = Script::default();
    let c = controller(&q, &script, Options::default());

    q.q.add(REQUEST);

    // Invoking Reconciler which will ask for requeue
    script.ok(ReconcileResult { requeue: true, ..Default::default() });
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "add_rate_limited", "done"]);
    assert_eq!(q.num_requeues(&REQUEST), 1);
    assert!(q.processing().is_empty(), "done ran");
    expect_requeued_after(&q, REQUEST, 5 * MS).await;

    // Invoking Reconciler a second time without asking for requeue
    script.ok(ReconcileResult { requeue: false, ..Default::default() });
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "forget", "done"]);

    // Removing the item from the queue
    assert_eq!(q.len(), 0);
    assert_eq!(q.num_requeues(&REQUEST), 0);
}

// upstream: controller_test.go "should requeue a Request after a duration (but not rate-limited) if the Result sets RequeueAfter (regardless of Requeue)"
#[tokio::test(start_paused = true)]
async fn should_requeue_a_request_after_a_duration_if_the_result_sets_requeue_after_regardless_of_requeue()
 {
    let (q, limiter) = Recorder::new();
    let script = Script::default();
    let c = controller(&q, &script, Options::default());
    limiter.when(&REQUEST); // an earlier failure, to see forget reset it

    q.q.add(REQUEST);

    // Invoking Reconciler which will ask for requeue & requeueafter
    script.ok(ReconcileResult {
        requeue: true,
        requeue_after: 100 * MS,
        ..Default::default()
    });
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "forget", "add_after(100ms)", "done"]);
    assert_eq!(q.num_requeues(&REQUEST), 0, "requeue_after forgets");
    assert!(q.processing().is_empty(), "done ran");
    expect_requeued_after(&q, REQUEST, 100 * MS).await;

    // Invoking Reconciler a second time asking for a requeueafter only
    script.ok(ReconcileResult::requeue_after(100 * MS));
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "forget", "add_after(100ms)", "done"]);
    expect_requeued_after(&q, REQUEST, 100 * MS).await;

    // Removing the item from the queue
    let item = q.q.get().await.unwrap();
    q.q.done(&item);
    assert_eq!(q.len(), 0);
    assert_eq!(q.num_requeues(&REQUEST), 0);
}

// upstream: controller_test.go "should perform error behavior if error is not nil, regardless of RequeueAfter"
#[tokio::test(start_paused = true)]
async fn should_perform_error_behavior_if_error_is_not_nil_regardless_of_requeue_after()
 {
    let (q, _limiter) = Recorder::new();
    let script = Script::default();
    let c = controller(&q, &script, Options::default());
    q.q.add(REQUEST);

    // Invoking Reconciler which will ask for requeueafter with an error
    let asked = ReconcileResult::requeue_after(100 * MS);
    script.err(with_result(asked, anyhow!("expected error: reconcile")));
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "add_rate_limited", "done"]);
    advance(5 * MS).await; // the limiter's delay, not the 100ms asked for

    // Invoking Reconciler a second time asking for requeueafter without errors
    script.ok(asked);
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "forget", "add_after(100ms)", "done"]);
    expect_requeued_after(&q, REQUEST, 100 * MS).await;

    // Removing the item from the queue
    let item = q.q.get().await.unwrap();
    q.q.done(&item);
    assert_eq!(q.len(), 0);
    assert_eq!(q.num_requeues(&REQUEST), 0);
}

/// Runs one reconcile of a request queued at priority 10 on a priority queue,
/// with `result` from the reconciler, and returns the priority the requeued
/// request is handed out with (after up to a second).
async fn requeued_priority(
    result: anyhow::Result<ReconcileResult>,
) -> Option<i32> {
    let q = PriorityQueue::new();
    let script = Script::default();
    script.then(Step::Return(result));
    let c = Controller::new(q.clone(), script.reconciler());
    q.add_with_opts(
        AddOpts { priority: Some(10), ..AddOpts::default() },
        [REQUEST],
    );
    assert!(c.process_next_work_item().await);
    tokio::time::timeout(Duration::from_secs(1), q.get_with_priority())
        .await
        .ok()
        .flatten()
        .map(|(_, p)| p)
}

// upstream: controller_test.go "should retain the priority when the reconciler
// requests a requeue", "... with RequeueAfter", "... when there was an error"
#[tokio::test(start_paused = true)]
async fn should_retain_the_priority() {
    let requeue =
        ReconcileResult { requeue: true, ..ReconcileResult::default() };
    assert_eq!(requeued_priority(Ok(requeue)).await, Some(10));
    assert_eq!(
        requeued_priority(Ok(ReconcileResult::requeue_after(100 * MS))).await,
        Some(10)
    );
    assert_eq!(
        requeued_priority(Err(anyhow!("oups, I did it again"))).await,
        Some(10)
    );
}

// upstream: controller_test.go "should use the priority from Result when the
// reconciler requests a requeue", "... with RequeueAfter", "... when there was
// an error"
#[tokio::test(start_paused = true)]
async fn should_use_the_priority_from_result() {
    let p99 =
        ReconcileResult { priority: Some(99), ..ReconcileResult::default() };
    assert_eq!(
        requeued_priority(Ok(ReconcileResult { requeue: true, ..p99 })).await,
        Some(99)
    );
    assert_eq!(
        requeued_priority(Ok(ReconcileResult {
            requeue_after: 100 * MS,
            ..p99
        }))
        .await,
        Some(99)
    );
    assert_eq!(
        requeued_priority(Err(with_result(
            p99,
            anyhow!("oups, I did it again")
        )))
        .await,
        Some(99)
    );
}

// not upstream (derived from reconcileHandler): a terminal error returned with
// a result is still terminal, and nothing is requeued at the result's priority
#[tokio::test(start_paused = true)]
async fn a_terminal_error_with_a_result_requeues_nothing() {
    let p99 = ReconcileResult {
        priority: Some(99),
        requeue_after: 100 * MS,
        ..ReconcileResult::default()
    };
    let err = with_result(p99, terminal_error(anyhow!("bad spec")));
    assert!(is_terminal(&err));
    assert_eq!(
        err.to_string(),
        "terminal error: bad spec",
        "with_result is transparent"
    );
    assert_eq!(requeued_priority(Err(err)).await, None);
}

// not upstream: a wrapper around the priority queue (here CallLog) passes the
// priority of every requeue through; PriorityInterface has no default that
// could drop it (the trait's compile_fail doc test shows a wrapper must write
// both methods)
#[tokio::test(start_paused = true)]
async fn a_wrapper_around_the_priority_queue_keeps_priorities() {
    let pq = PriorityQueue::new();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let sink = calls.clone();
    let q =
        CallLog::new(pq.clone(), move |call| sink.lock().unwrap().push(call));
    let script = Script::default();
    script.err(anyhow!("conflict"));
    let c = Controller::new(q.clone(), script.reconciler());
    q.add_with_opts(
        AddOpts { priority: Some(7), ..AddOpts::default() },
        [REQUEST],
    );
    assert!(c.process_next_work_item().await);
    assert_eq!(
        *calls.lock().unwrap(),
        [r#"add_rate_limited "foo/bar""#, r#"done "foo/bar""#]
    );
    advance(5 * MS).await;
    assert_eq!(q.get_with_priority().await, Some((REQUEST, 7)));
}

// not upstream: reconcile_handler returns the arm it took, one test per arm
#[tokio::test(start_paused = true)]
async fn reconcile_handler_reports_each_arm() {
    let cases: Vec<(anyhow::Result<ReconcileResult>, Outcome, &[&str])> = vec![
        (Err(terminal_error(anyhow!("bad spec"))), Outcome::TerminalError, &[]),
        (Err(anyhow!("conflict")), Outcome::Error, &["add_rate_limited"]),
        (
            Ok(ReconcileResult::requeue_after(2 * MS)),
            Outcome::RequeueAfter(2 * MS),
            &["forget", "add_after(2ms)"],
        ),
        (
            Ok(ReconcileResult { requeue: true, ..Default::default() }),
            Outcome::Requeue,
            &["add_rate_limited"],
        ),
        (Ok(ReconcileResult::done()), Outcome::Success, &["forget"]),
    ];
    for (result, want, calls) in cases {
        let (q, _) = Recorder::new();
        let script = Script::default();
        script.then(Step::Return(result));
        let c = controller(&q, &script, Options::default());
        assert_eq!(c.reconcile_handler(REQUEST, 0).await, want);
        assert_eq!(q.take(), calls, "{want}");
    }
}

// ---------------------------------------------------------------------------
// panics

/// Catches a panic raised while polling the inner future (`tokio::spawn` would
/// do it too, but needs the future to be `Send` for every lifetime of the
/// `&str` item, which the compiler cannot prove here).
struct CatchUnwind<F>(std::pin::Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn std::any::Any + Send>>;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            inner.poll(cx)
        })) {
            Ok(std::task::Poll::Ready(out)) => std::task::Poll::Ready(Ok(out)),
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Err(payload) => std::task::Poll::Ready(Err(payload)),
        }
    }
}

// upstream: controller_test.go "should not recover panic if RecoverPanic is false"
// (through process_next_work_item: the panic propagates and done still ran)
#[tokio::test(start_paused = true)]
async fn should_not_recover_panic_if_recover_panic_is_false() {
    let (q, _) = Recorder::new();
    let script = Script::default();
    script.then(Step::Panic("nil pointer dereference"));
    let c = controller(
        &q,
        &script,
        Options { recover_panic: false, ..Default::default() },
    );

    q.q.add(REQUEST);
    let payload = CatchUnwind(Box::pin(c.process_next_work_item()))
        .await
        .expect_err("the panic must propagate out of process_next_work_item");
    assert_eq!(panic_message(&*payload), "nil pointer dereference");

    assert_eq!(
        q.take(),
        ["get", "done"],
        "done ran while unwinding; no switch arm ran"
    );
    assert!(q.processing().is_empty(), "done ran");
    assert_eq!(
        (q.len(), q.q.waiting_len(), q.num_requeues(&REQUEST)),
        (0, 0, 0)
    );
}

// upstream: controller_test.go "should recover panic if RecoverPanic is true by default"
#[tokio::test(start_paused = true)]
async fn should_recover_panic_if_recover_panic_is_true_by_default() {
    let (q, _) = Recorder::new();
    let script = Script::default();
    let c = controller(&q, &script, Options::default());
    assert!(Options::default().recover_panic, "RecoverPanic defaults to true");

    script.then(Step::Panic("nil pointer dereference"));
    let err =
        c.reconcile(REQUEST).await.expect_err("a recovered panic is an error");
    assert!(err.to_string().contains("[recovered]"), "{err}");

    // And through the loop: the error arm (rate-limited requeue), then done.
    script.then(Step::Panic("nil pointer dereference"));
    q.q.add(REQUEST);
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "add_rate_limited", "done"]);
    assert_eq!(q.num_requeues(&REQUEST), 1);
    assert!(q.processing().is_empty(), "done ran");
}

// upstream: controller_test.go "should recover panic if RecoverPanic is true"
#[tokio::test(start_paused = true)]
async fn should_recover_panic_if_recover_panic_is_true() {
    let (q, _) = Recorder::new();
    let script = Script::default();
    let c = controller(
        &q,
        &script,
        Options { recover_panic: true, ..Default::default() },
    );

    script.then(Step::Panic("nil pointer dereference"));
    let err =
        c.reconcile(REQUEST).await.expect_err("a recovered panic is an error");
    assert!(err.to_string().contains("[recovered]"), "{err}");
    assert_eq!(err.to_string(), "panic: nil pointer dereference [recovered]");
}

// upstream: controller_test.go "should call the Reconciler function"
#[tokio::test(start_paused = true)]
async fn should_call_the_reconciler_function() {
    let (q, _) = Recorder::new();
    let script = Script::default();
    script.ok(ReconcileResult { requeue: true, ..Default::default() });
    let c = controller(&q, &script, Options::default());
    let result = c.reconcile(REQUEST).await.unwrap();
    assert_eq!(result, ReconcileResult { requeue: true, ..Default::default() });
}

// ---------------------------------------------------------------------------
// is_terminal

// upstream: reconcile_test.go "should allow unwrapping inner error from terminal error"
#[test]
fn should_allow_unwrapping_inner_error_from_terminal_error() {
    #[derive(Debug)]
    struct ResourceExpired;
    impl fmt::Display for ResourceExpired {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("resource expired")
        }
    }
    impl StdError for ResourceExpired {}

    let err = terminal_error(ResourceExpired);
    // apierrors.IsResourceExpired(terminalError): the inner error is reachable.
    assert!(err.chain().any(|e| e.is::<ResourceExpired>()));
    let te = err.downcast_ref::<TerminalError>().unwrap();
    assert!(te.inner().unwrap().is::<ResourceExpired>());
    assert_eq!(err.to_string(), "terminal error: resource expired");
}

// not upstream (notes §5, derived): a TerminalError wrapped with anyhow's
// .context() (Go: fmt.Errorf("...: %w", ...)) is still terminal, and the
// controller treats it so
#[tokio::test(start_paused = true)]
async fn is_terminal_through_anyhow_context() {
    let err =
        Err::<(), _>(terminal_error(anyhow!("spec.replicas must be >= 0")))
            .context("reconciling web-1")
            .context("worker 3")
            .unwrap_err();
    assert!(is_terminal(&err));
    assert!(!is_terminal(
        &anyhow!("connection refused").context("reconciling web-1")
    ));

    let (q, limiter) = Recorder::new();
    let script = Script::default();
    script.err(err);
    let c = controller(&q, &script, Options::default());
    limiter.when(&REQUEST);
    q.q.add(REQUEST);
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "done"]);
    assert_eq!(q.num_requeues(&REQUEST), 1);
}

/// An error type of the user's whose `source()` is the terminal error.
#[derive(Debug)]
struct ReconcileFailed {
    source: TerminalError,
}

impl fmt::Display for ReconcileFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("reconcile failed")
    }
}

impl StdError for ReconcileFailed {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&self.source)
    }
}

// not upstream (notes §5, derived): a custom error whose source() is the
// TerminalError is terminal (errors.Is walks Unwrap; is_terminal walks source)
#[tokio::test(start_paused = true)]
async fn is_terminal_through_a_custom_error_source() {
    let err = anyhow::Error::new(ReconcileFailed {
        source: TerminalError::new(anyhow!("immutable field")),
    });
    assert!(
        err.downcast_ref::<TerminalError>().is_none(),
        "downcast alone does not see it"
    );
    assert!(is_terminal(&err));
    // ... and one more level of context on top
    let err = Err::<(), _>(err).context("reconciling web-1").unwrap_err();
    assert!(is_terminal(&err));

    let (q, limiter) = Recorder::new();
    let script = Script::default();
    script.err(err);
    let c = controller(&q, &script, Options::default());
    limiter.when(&REQUEST);
    q.q.add(REQUEST);
    assert!(c.process_next_work_item().await);
    assert_eq!(q.take(), ["get", "done"]);
    assert_eq!(q.num_requeues(&REQUEST), 1, "terminal: failures kept");
    assert_eq!(q.q.waiting_len(), 0);
}

// not upstream (upstream's timeout tests cancel a context): a reconcile that
// never resolves ends at the timeout as an error, is retried through the rate
// limiter, and done runs; the timeout is counted.
#[tokio::test(start_paused = true)]
async fn reconciliation_timeout_turns_a_hang_into_a_retried_error() {
    use faithful_workqueue::prometheus::{ControllerMetrics, samples};
    use prometheus_client::registry::Registry;

    let mut registry = Registry::default();
    let options = Options {
        name: "demo".to_owned(),
        metrics: Some(ControllerMetrics::register(&mut registry)),
        reconciliation_timeout: Some(Duration::from_secs(20)),
        ..Options::default()
    };
    let (queue, _limiter) = Recorder::new();
    let c = Controller::with_options(
        queue.clone(),
        |_key: &'static str| std::future::pending(),
        options,
    );
    queue.q.add(REQUEST);
    let started = tokio::time::Instant::now();
    assert!(c.process_next_work_item().await);
    assert_eq!(started.elapsed(), Duration::from_secs(20));
    assert_eq!(queue.take(), ["get", "add_rate_limited", "done"]);
    assert_eq!(queue.q.num_requeues(&REQUEST), 1);
    let timeouts = samples(&registry)
        .into_iter()
        .find(|(s, _)| {
            s.starts_with("controller_runtime_reconcile_timeouts_total")
        })
        .map(|(_, v)| v);
    assert_eq!(timeouts, Some(1.0));
}

// not upstream: start returns once its workers have ended, also when the queue
// was shut down by someone else before the shutdown signal came.
#[tokio::test(start_paused = true)]
async fn start_returns_when_the_queue_is_shut_down_elsewhere() {
    let (queue, _limiter) = Recorder::new();
    let c = std::sync::Arc::new(Controller::new(
        queue.clone(),
        |_key: &'static str| async { Ok(ReconcileResult::done()) },
    ));
    let (_events, source) = tokio::sync::mpsc::channel::<&'static str>(1);
    queue.q.shut_down();
    let finished = tokio::time::timeout(
        Duration::from_secs(60),
        c.start(source, std::future::pending()),
    )
    .await;
    assert!(
        finished.is_ok(),
        "start waited for a shutdown signal although every worker had ended"
    );
}

// upstream: reconcile_test.go "should handle nil terminal errors properly"
#[test]
fn should_handle_nil_terminal_errors_properly() {
    let err = TerminalError::nil();
    assert_eq!(err.to_string(), "nil terminal error");
    assert!(err.inner().is_none() && StdError::source(&err).is_none());
    assert!(is_terminal(&anyhow::Error::new(err)));
}

// upstream: controller_test.go "should not configure a timeout if
// ReconciliationTimeout is zero" and "should not increment when
// ReconciliationTimeout is zero": Some(Duration::ZERO) is no timeout, as
// upstream's `if c.ReconciliationTimeout > 0`
#[tokio::test(start_paused = true)]
async fn should_not_configure_a_timeout_if_reconciliation_timeout_is_zero() {
    use faithful_workqueue::prometheus::{ControllerMetrics, samples};
    use prometheus_client::registry::Registry;

    let mut registry = Registry::default();
    let options = Options {
        name: "demo".to_owned(),
        metrics: Some(ControllerMetrics::register(&mut registry)),
        reconciliation_timeout: Some(Duration::ZERO),
        ..Options::default()
    };
    let (queue, _limiter) = Recorder::new();
    let c = Controller::with_options(
        queue.clone(),
        |_key: &'static str| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Ok(ReconcileResult::done())
        },
        options,
    );
    assert_eq!(c.reconcile(REQUEST).await.unwrap(), ReconcileResult::done());
    let timeouts = samples(&registry)
        .into_iter()
        .find(|(s, _)| {
            s.starts_with("controller_runtime_reconcile_timeouts_total")
        })
        .map(|(_, v)| v);
    assert_eq!(
        timeouts, None,
        "no timeout counted (the series is created by start or by a first timeout)"
    );
}

// not upstream: Options::error_log sees every error arm's error, after the
// switch's queue calls and before done, as upstream logs "Reconciler error"
#[tokio::test(start_paused = true)]
async fn error_log_sees_each_error_after_the_queue_calls() {
    let (q, _limiter) = Recorder::new();
    let log = q.log.clone();
    let options = Options {
        error_log: Some(Arc::new(move |err| {
            log.lock().unwrap().push(format!("log: {err}"))
        })),
        ..Options::default()
    };
    let script = Script::default();
    let c = controller(&q, &script, options);
    script
        .err(anyhow!("connection refused"))
        .err(terminal_error(anyhow!("bad spec")))
        .then(Step::Panic("boom"));
    for key in ["a", "b", "c"] {
        q.q.add(key);
    }
    for _ in 0..3 {
        assert!(c.process_next_work_item().await);
    }
    assert_eq!(
        q.take(),
        [
            "get",
            "add_rate_limited",
            "log: connection refused",
            "done",
            "get",
            "log: terminal error: bad spec",
            "done",
            "get",
            "add_rate_limited",
            "log: panic: boom [recovered]",
            "done",
        ]
    );
}
