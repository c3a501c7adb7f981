//! The worker loop and the switch after a reconcile, mirroring
//! controller-runtime's `pkg/internal/controller/controller.go`.
//!
//! [`Controller::process_next_work_item`] is the loop's body: get an item,
//! arrange for `done` before anything else can happen, reconcile, then let
//! [`Controller::reconcile_handler`] turn the outcome into queue calls. Go
//! arranges `done` with `defer`; here a guard's `Drop` does it, so `done`
//! runs after the switch on success, on error, on a recovered panic, and while
//! unwinding from a panic that is not recovered.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::go_duration::GoDuration;
use crate::priorityqueue::{AddOpts, PriorityInterface};
use crate::reconcile::{ReconcileResult, Reconciler, is_terminal};

/// How a controller runs its reconciler (a subset of upstream's
/// `controller.Options`).
#[derive(Clone, Debug)]
pub struct Options {
    /// Turn a panicking reconcile into an error, which is then retried through
    /// the rate limiter. On by default, as upstream since v0.19.
    pub recover_panic: bool,
    /// Give up on a reconcile that runs longer than this. `None` (the default)
    /// waits forever. Upstream cancels the reconcile's context and lets the
    /// reconciler return; a Rust future is cancelled by dropping it, and the
    /// controller then reports a timeout error.
    pub reconciliation_timeout: Option<Duration>,
    /// How many workers [`Controller::run`] starts. 1 by default.
    pub max_concurrent_reconciles: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self { recover_panic: true, reconciliation_timeout: None, max_concurrent_reconciles: 1 }
    }
}

/// Which arm of the switch a reconcile took; the names are upstream's metric
/// labels (`controller_runtime_reconcile_total{result=...}`), with terminal
/// errors told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A terminal error: no requeue, no forget.
    TerminalError,
    /// Any other error: `add_rate_limited`.
    Error,
    /// `requeue_after` > 0: `forget`, then `add_after`.
    RequeueAfter(Duration),
    /// `requeue`: `add_rate_limited`.
    Requeue,
    /// Success: `forget`.
    Success,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::TerminalError => f.write_str("terminal error"),
            Outcome::Error => f.write_str("error"),
            Outcome::RequeueAfter(d) => write!(f, "requeue after {}", GoDuration(*d)),
            Outcome::Requeue => f.write_str("requeue"),
            Outcome::Success => f.write_str("success"),
        }
    }
}

/// A queue, a reconciler and the loop between them.
///
/// ```
/// use faithful_workqueue::controller::Controller;
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
/// use faithful_workqueue::reconcile::ReconcileResult;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
/// let controller = Controller::new(queue.clone(), |key: &'static str| async move {
///     anyhow::ensure!(key != "bad", "cannot reconcile {key}");
///     Ok(ReconcileResult::done())
/// });
/// queue.add("good");
/// queue.add("bad");
/// assert!(controller.process_next_work_item().await);
/// assert!(controller.process_next_work_item().await);
/// assert_eq!(queue.num_requeues(&"good"), 0);
/// assert_eq!(queue.num_requeues(&"bad"), 1); // retried in 5ms
/// # }
/// ```
pub struct Controller<T, Q, R> {
    queue: Q,
    reconciler: R,
    options: Options,
    _item: std::marker::PhantomData<fn(T)>,
}

impl<T, Q, R> Controller<T, Q, R>
where
    T: Clone + Send + Sync + 'static,
    Q: PriorityInterface<T>,
    R: Reconciler<T>,
{
    /// A controller with default [`Options`].
    pub fn new(queue: Q, reconciler: R) -> Self {
        Self::with_options(queue, reconciler, Options::default())
    }

    /// A controller with `options`.
    pub fn with_options(queue: Q, reconciler: R, options: Options) -> Self {
        Self { queue, reconciler, options, _item: std::marker::PhantomData }
    }

    /// The queue this controller works from.
    pub fn queue(&self) -> &Q {
        &self.queue
    }

    /// Takes one item from the queue, reconciles it and calls `done`. Returns
    /// `false` once the queue is shut down and empty, which ends a worker.
    ///
    /// `done` is owed from the moment `get` returns, so it is armed first: a
    /// guard calls it when this function returns or unwinds.
    pub async fn process_next_work_item(&self) -> bool {
        let Some((item, priority)) = self.queue.get_with_priority().await else {
            return false;
        };
        let _done = DoneOnDrop { queue: &self.queue, item: &item };
        self.reconcile_handler(item.clone(), priority).await;
        true
    }

    /// Reconciles `request`, handed out at `priority`, and applies the switch;
    /// returns the arm taken. Every requeue keeps the priority, unless the
    /// result sets another (upstream applies `Result.Priority` before the
    /// switch, on every arm).
    pub async fn reconcile_handler(&self, request: T, priority: i32) -> Outcome {
        let result = self.reconcile(request.clone()).await;
        let priority = Some(result.as_ref().ok().and_then(|r| r.priority).unwrap_or(priority));
        let rate_limited = AddOpts { rate_limited: true, priority, ..AddOpts::default() };
        match result {
            Err(err) if is_terminal(&err) => Outcome::TerminalError,
            Err(_) => {
                self.queue.add_with_opts(rate_limited, [request]);
                Outcome::Error
            }
            Ok(ReconcileResult { requeue_after, .. }) if !requeue_after.is_zero() => {
                self.queue.forget(&request);
                self.queue.add_with_opts(AddOpts { after: requeue_after, priority, ..AddOpts::default() }, [request]);
                Outcome::RequeueAfter(requeue_after)
            }
            Ok(ReconcileResult { requeue: true, .. }) => {
                self.queue.add_with_opts(rate_limited, [request]);
                Outcome::Requeue
            }
            Ok(_) => {
                self.queue.forget(&request);
                Outcome::Success
            }
        }
    }

    /// Calls the reconciler, applying the panic and timeout options.
    ///
    /// With `recover_panic`, a panic becomes the error `panic: <message>
    /// [recovered]`, worded as upstream's.
    pub async fn reconcile(&self, request: T) -> anyhow::Result<ReconcileResult> {
        let work = self.reconciler.reconcile(request);
        let timed = async {
            match self.options.reconciliation_timeout {
                Some(limit) => match tokio::time::timeout(limit, work).await {
                    Ok(result) => result,
                    Err(_) => Err(anyhow::anyhow!("reconciliation timed out after {}", GoDuration(limit))),
                },
                None => work.await,
            }
        };
        if !self.options.recover_panic {
            return timed.await;
        }
        match CatchUnwind(Box::pin(timed)).await {
            Ok(result) => result,
            Err(payload) => Err(anyhow::anyhow!("panic: {} [recovered]", panic_message(&*payload))),
        }
    }

    /// Runs `max_concurrent_reconciles` workers until the queue is shut down
    /// and drained, then returns.
    pub async fn run(self: Arc<Self>)
    where
        Q: 'static,
        R: 'static,
    {
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..self.options.max_concurrent_reconciles.max(1) {
            let controller = self.clone();
            workers.spawn(async move { while controller.process_next_work_item().await {} });
        }
        while let Some(joined) = workers.join_next().await {
            if let Err(err) = joined {
                if err.is_panic() {
                    std::panic::resume_unwind(err.into_panic());
                }
            }
        }
    }
}

/// Upstream's `defer c.Queue.Done(obj)`.
struct DoneOnDrop<'a, T: Send, Q: PriorityInterface<T>> {
    queue: &'a Q,
    item: &'a T,
}

impl<T: Send, Q: PriorityInterface<T>> Drop for DoneOnDrop<'_, T, Q> {
    fn drop(&mut self) {
        self.queue.done(self.item);
    }
}

/// Turns a panic inside a future's `poll` into an `Err` with the payload.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// The text of a panic payload, as Go's `%v` prints a panic value.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}
