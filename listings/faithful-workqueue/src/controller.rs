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

use tokio::time::Instant;

use crate::default_rate_limiters::{
    default_typed_controller_rate_limiter, priority_queue_default_rate_limiter,
};
use crate::go_duration::GoDuration;
use crate::metrics::MetricsProvider;
use crate::priorityqueue::{AddOpts, PriorityInterface, PriorityQueue};
use crate::prometheus::ControllerMetrics;
use crate::queue::{Item, QueueConfig};
use crate::rate_limiting_queue::{
    DelayingInterface, Interface, RateLimitingInterface, RateLimitingQueue,
};
use crate::reconcile::{ReconcileResult, Reconciler, is_terminal, result_of};

/// How a controller runs its reconciler (a subset of upstream's
/// `controller.Options`).
///
/// ```
/// use faithful_workqueue::controller::Options;
///
/// let options = Options::default();
/// assert!(options.use_priority_queue && options.recover_panic);
/// assert_eq!(options.max_concurrent_reconciles, 1);
/// assert!(options.reconciliation_timeout.is_none()); // waits forever
/// assert!(options.metrics.is_none() && options.workqueue_metrics.is_none());
/// assert!(options.error_log.is_none());
/// ```
#[derive(Clone)]
pub struct Options {
    /// The controller's name: the `controller` label of its metrics, and its
    /// queue's name.
    pub name: String,
    /// Where the `controller_runtime_*` metrics go. `None` records none.
    pub metrics: Option<ControllerMetrics>,
    /// Where the queue's `workqueue_*` metrics go (used by
    /// [`Controller::new_typed_unmanaged`]). `None` records none.
    pub workqueue_metrics: Option<Arc<dyn MetricsProvider>>,
    /// Use controller-runtime's priority queue with the exponential 5ms..1000s
    /// limiter (the default since v0.23), or else client-go's rate-limiting
    /// queue with `DefaultTypedControllerRateLimiter` (used by
    /// [`Controller::new_typed_unmanaged`]).
    pub use_priority_queue: bool,
    /// Turn a panicking reconcile into an error, which is then retried through
    /// the rate limiter. On by default, as upstream since v0.19.
    pub recover_panic: bool,
    /// Give up on a reconcile that runs longer than this. `None` (the default)
    /// and `Some(Duration::ZERO)` wait forever, as upstream's zero
    /// `ReconciliationTimeout` does. Upstream cancels the reconcile's context
    /// and lets the reconciler return; a Rust future is cancelled by dropping
    /// it, and the controller then reports a timeout error.
    pub reconciliation_timeout: Option<Duration>,
    /// How many workers [`Controller::start`] starts. 1 by default.
    pub max_concurrent_reconciles: usize,
    /// Called with the error of every reconcile that failed, terminal or not,
    /// after the switch made its queue calls and before `done`: where upstream
    /// logs `Reconciler error`. `None` (the default) reports nothing.
    ///
    /// ```
    /// use faithful_workqueue::controller::{Controller, Options};
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use faithful_workqueue::reconcile::ReconcileResult;
    /// use std::sync::Arc;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// async fn reconcile(_: &'static str) -> anyhow::Result<ReconcileResult> {
    ///     anyhow::bail!("connection refused")
    /// }
    /// let options = Options { error_log: Some(Arc::new(|err| println!("Reconciler error: {err}"))), ..Options::default() };
    /// let c = Controller::with_options(PriorityQueue::new(), reconcile, options);
    /// c.reconcile_handler("web", 0).await; // prints `Reconciler error: connection refused`
    /// # }
    /// ```
    pub error_log: Option<ErrorLog>,
}

/// What [`Options::error_log`] calls with a reconcile's error.
pub type ErrorLog = Arc<dyn Fn(&anyhow::Error) + Send + Sync>;

impl Default for Options {
    fn default() -> Self {
        Self {
            name: String::new(),
            metrics: None,
            workqueue_metrics: None,
            use_priority_queue: true,
            recover_panic: true,
            reconciliation_timeout: None,
            max_concurrent_reconciles: 1,
            error_log: None,
        }
    }
}

/// Which arm of the switch a reconcile took; the names are upstream's metric
/// labels (`controller_runtime_reconcile_total{result=...}`), with terminal
/// errors told apart.
///
/// ```
/// use faithful_workqueue::controller::{Controller, Outcome};
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
/// use faithful_workqueue::reconcile::ReconcileResult;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// async fn reconcile(key: &'static str) -> anyhow::Result<ReconcileResult> {
///     Ok(match key {
///         "later" => ReconcileResult::requeue_after(Duration::from_secs(30)),
///         "again" => ReconcileResult { requeue: true, ..ReconcileResult::default() },
///         _ => ReconcileResult::done(),
///     })
/// }
/// let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
/// let c = Controller::new(queue.clone(), reconcile);
/// assert_eq!(c.reconcile_handler("later", 0).await, Outcome::RequeueAfter(Duration::from_secs(30)));
/// assert_eq!(c.reconcile_handler("again", 0).await, Outcome::Requeue);
/// assert_eq!(c.reconcile_handler("fine", 0).await, Outcome::Success);
/// assert_eq!(queue.num_requeues(&"again"), 1); // only Requeue counted a failure
/// # }
/// ```
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

impl Outcome {
    /// The `result` label of `controller_runtime_reconcile_total` for this arm.
    ///
    /// ```
    /// use faithful_workqueue::controller::Outcome;
    /// use std::time::Duration;
    ///
    /// assert_eq!(Outcome::TerminalError.result_label(), "error"); // shares the error label
    /// assert_eq!(Outcome::Error.result_label(), "error");
    /// assert_eq!(Outcome::RequeueAfter(Duration::from_secs(1)).result_label(), "requeue_after");
    /// assert_eq!(Outcome::Success.result_label(), "success");
    /// // Display tells them apart, with Go's duration notation.
    /// assert_eq!(Outcome::TerminalError.to_string(), "terminal error");
    /// assert_eq!(Outcome::RequeueAfter(Duration::from_millis(1500)).to_string(), "requeue after 1.5s");
    /// ```
    pub fn result_label(&self) -> &'static str {
        match self {
            Outcome::TerminalError | Outcome::Error => "error",
            Outcome::RequeueAfter(_) => "requeue_after",
            Outcome::Requeue => "requeue",
            Outcome::Success => "success",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::TerminalError => f.write_str("terminal error"),
            Outcome::Error => f.write_str("error"),
            Outcome::RequeueAfter(d) => {
                write!(f, "requeue after {}", GoDuration(*d))
            }
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
    ///
    /// ```
    /// use faithful_workqueue::controller::{Controller, Outcome};
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use faithful_workqueue::reconcile::ReconcileResult;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// async fn reconcile(key: &'static str) -> anyhow::Result<ReconcileResult> {
    ///     if key == "boom" {
    ///         panic!("index out of range");
    ///     }
    ///     Ok(ReconcileResult::done())
    /// }
    /// let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    /// let c = Controller::new(queue.clone(), reconcile);
    /// // recover_panic is on by default: the panic is retried like an error.
    /// assert_eq!(c.reconcile_handler("boom", 0).await, Outcome::Error);
    /// assert_eq!(queue.num_requeues(&"boom"), 1);
    /// # }
    /// ```
    pub fn new(queue: Q, reconciler: R) -> Self {
        Self::with_options(queue, reconciler, Options::default())
    }

    /// A controller with `options`.
    ///
    /// ```
    /// use faithful_workqueue::controller::{Controller, Options};
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use faithful_workqueue::reconcile::ReconcileResult;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// async fn slow(_: &'static str) -> anyhow::Result<ReconcileResult> {
    ///     tokio::time::sleep(Duration::from_secs(60)).await;
    ///     Ok(ReconcileResult::done())
    /// }
    /// let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    /// let options = Options { reconciliation_timeout: Some(Duration::from_secs(1)), ..Options::default() };
    /// let c = Controller::with_options(queue, slow, options);
    /// let err = c.reconcile("web").await.unwrap_err(); // the future is dropped after 1s
    /// assert_eq!(err.to_string(), "reconciliation timed out after 1s");
    /// # }
    /// ```
    pub fn with_options(queue: Q, reconciler: R, options: Options) -> Self {
        Self { queue, reconciler, options, _item: std::marker::PhantomData }
    }

    /// The queue this controller works from.
    ///
    /// ```
    /// use faithful_workqueue::controller::Controller;
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use faithful_workqueue::reconcile::ReconcileResult;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// async fn ok(_: &'static str) -> anyhow::Result<ReconcileResult> {
    ///     Ok(ReconcileResult::done())
    /// }
    /// let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    /// let c = Controller::new(queue.clone(), ok);
    /// c.queue().add("a");
    /// assert_eq!(queue.len(), 1); // the same queue: clones share it
    /// # }
    /// ```
    pub fn queue(&self) -> &Q {
        &self.queue
    }

    /// Takes one item from the queue, reconciles it and calls `done`. Returns
    /// `false` once the queue is shut down and empty, which ends a worker.
    ///
    /// `done` is owed from the moment `get` returns, so it is armed first: a
    /// guard calls it when this function returns or unwinds.
    ///
    /// ```
    /// use faithful_workqueue::controller::Controller;
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use faithful_workqueue::reconcile::ReconcileResult;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// async fn reconcile(key: &'static str) -> anyhow::Result<ReconcileResult> {
    ///     anyhow::ensure!(key != "bad", "cannot reconcile {key}");
    ///     Ok(ReconcileResult::done())
    /// }
    /// let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    /// let c = Controller::new(queue.clone(), reconcile);
    /// queue.add("bad");
    /// assert!(c.process_next_work_item().await);
    /// let state = queue.queue().debug_state();
    /// assert!(state.processing.is_empty()); // done was called, error or not
    /// assert_eq!(queue.waiting_len(), 1); // "bad" retries in 5ms
    ///
    /// queue.shut_down();
    /// assert!(!c.process_next_work_item().await); // shut down and empty: the worker stops
    /// # }
    /// ```
    // Not an `async fn`: a future whose `Send` is declared, rather than
    // inferred from its body, can be spawned when `T` borrows for 'static
    // (`&'static str`); see tests/spawn_shapes.rs.
    pub fn process_next_work_item(
        &self,
    ) -> impl Future<Output = bool> + Send + '_ {
        self.process_next()
    }

    async fn process_next(&self) -> bool {
        let Some((item, priority)) = self.queue.get_with_priority().await
        else {
            return false;
        };
        let _done = DoneOnDrop { queue: &self.queue, item: &item };
        // Dropped before `_done`: active_workers goes down, then done runs.
        let _active = ActiveWorker::start(
            self.options.metrics.as_ref(),
            &self.options.name,
        );
        self.reconcile_handler(item.clone(), priority).await;
        true
    }

    /// Reconciles `request`, handed out at `priority`, and applies the switch;
    /// returns the arm taken. Every requeue keeps the priority, unless the
    /// result sets another: upstream applies `Result.Priority` before the
    /// switch, on every arm, so a result attached to an error with
    /// [`with_result`](crate::reconcile::with_result) sets the priority of the
    /// rate-limited requeue (its `requeue_after` and `requeue` are ignored, as
    /// upstream ignores them next to an error).
    ///
    /// ```
    /// use anyhow::anyhow;
    /// use faithful_workqueue::controller::{Controller, Outcome};
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use faithful_workqueue::reconcile::{terminal_error, ReconcileResult};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// async fn reconcile(key: &'static str) -> anyhow::Result<ReconcileResult> {
    ///     match key {
    ///         "fatal" => Err(terminal_error(anyhow!("spec.replicas must be >= 0"))),
    ///         _ => Err(anyhow!("connection refused")),
    ///     }
    /// }
    /// let queue = PriorityQueue::new();
    /// let c = Controller::new(queue.clone(), reconcile);
    ///
    /// queue.add_rate_limited("fatal"); // one earlier failure
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// let _ = queue.get().await;
    /// assert_eq!(c.reconcile_handler("fatal", 0).await, Outcome::TerminalError);
    /// assert_eq!(queue.num_requeues(&"fatal"), 1); // not requeued, not forgotten
    ///
    /// assert_eq!(c.reconcile_handler("flaky", 7).await, Outcome::Error);
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// assert_eq!(queue.get_with_priority().await, Some(("flaky", 7))); // the priority is kept
    /// # }
    /// ```
    pub fn reconcile_handler(
        &self,
        request: T,
        priority: i32,
    ) -> impl Future<Output = Outcome> + Send + '_ {
        self.handle(request, priority)
    }

    async fn handle(&self, request: T, priority: i32) -> Outcome {
        let started = Instant::now();
        let outcome = self.switch(request, priority).await;
        if let Some(metrics) = &self.options.metrics {
            let name = &self.options.name;
            metrics.reconcile_time(name, started.elapsed().as_secs_f64());
            metrics.result(name, outcome.result_label());
            if matches!(outcome, Outcome::Error | Outcome::TerminalError) {
                metrics.error(name);
            }
            if outcome == Outcome::TerminalError {
                metrics.terminal_error(name);
            }
        }
        outcome
    }

    async fn switch(&self, request: T, priority: i32) -> Outcome {
        let result = self.reconcile(request.clone()).await;
        // Upstream's `if result.Priority != nil` before the switch: on the
        // error arms, the result is the one attached with `with_result`.
        let attached = match &result {
            Ok(r) => r.priority,
            Err(err) => result_of(err).and_then(|r| r.priority),
        };
        let priority = Some(attached.unwrap_or(priority));
        let rate_limited =
            AddOpts { rate_limited: true, priority, ..AddOpts::default() };
        match result {
            Err(err) => {
                let outcome = if is_terminal(&err) {
                    Outcome::TerminalError
                } else {
                    self.queue.add_with_opts(rate_limited, [request]);
                    Outcome::Error
                };
                if let Some(log) = &self.options.error_log {
                    log(&err);
                }
                outcome
            }
            Ok(ReconcileResult { requeue_after, .. })
                if !requeue_after.is_zero() =>
            {
                self.queue.forget(&request);
                self.queue.add_with_opts(
                    AddOpts {
                        after: requeue_after,
                        priority,
                        ..AddOpts::default()
                    },
                    [request],
                );
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
    ///
    /// ```
    /// use faithful_workqueue::controller::Controller;
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use faithful_workqueue::reconcile::ReconcileResult;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// async fn reconcile(_: &'static str) -> anyhow::Result<ReconcileResult> {
    ///     panic!("index out of range")
    /// }
    /// let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    /// let c = Controller::new(queue, reconcile);
    /// let err = c.reconcile("web").await.unwrap_err();
    /// assert_eq!(err.to_string(), "panic: index out of range [recovered]");
    /// # }
    /// ```
    pub fn reconcile(
        &self,
        request: T,
    ) -> impl Future<Output = anyhow::Result<ReconcileResult>> + Send + '_ {
        self.reconcile_guarded(request)
    }

    async fn reconcile_guarded(
        &self,
        request: T,
    ) -> anyhow::Result<ReconcileResult> {
        let metrics = self.options.metrics.as_ref();
        let name = &self.options.name;
        let timed = async {
            // Called inside the guarded future, so a reconciler that panics
            // before its first await is caught too.
            let work = self.reconciler.reconcile(request);
            // Zero is no timeout, as upstream's `if c.ReconciliationTimeout > 0`.
            match self
                .options
                .reconciliation_timeout
                .filter(|limit| !limit.is_zero())
            {
                Some(limit) => match tokio::time::timeout(limit, work).await {
                    Ok(result) => result,
                    Err(_) => {
                        if let Some(m) = metrics {
                            m.timeout(name);
                        }
                        Err(anyhow::anyhow!(
                            "reconciliation timed out after {}",
                            GoDuration(limit)
                        ))
                    }
                },
                None => work.await,
            }
        };
        match CatchUnwind(Box::pin(timed)).await {
            Ok(result) => result,
            Err(payload) => {
                // Counted whether or not it is recovered, as upstream.
                if let Some(m) = metrics {
                    m.panic(name);
                }
                if !self.options.recover_panic {
                    std::panic::resume_unwind(payload);
                }
                Err(anyhow::anyhow!(
                    "panic: {} [recovered]",
                    panic_message(&*payload)
                ))
            }
        }
    }

    /// Runs the controller until `shutdown` completes (upstream's `Start`):
    /// initialises the metrics, moves every request from `source` into the
    /// queue, and runs `max_concurrent_reconciles` workers. On shutdown the
    /// queue is shut down; each worker finishes the request it holds, then
    /// stops, and `start` returns once they all have. A worker's panic (with
    /// `recover_panic` off) is re-raised here after the others stopped.
    ///
    /// ```
    /// use faithful_workqueue::controller::Controller;
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use faithful_workqueue::reconcile::ReconcileResult;
    /// use std::sync::{Arc, Mutex};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let reconciler = {
    ///     let seen = seen.clone();
    ///     move |key: &'static str| {
    ///         seen.lock().unwrap().push(key);
    ///         async { anyhow::Ok(ReconcileResult::done()) }
    ///     }
    /// };
    /// let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    /// let c = Arc::new(Controller::new(queue.clone(), reconciler));
    /// let (tx, rx) = tokio::sync::mpsc::channel(8);
    /// tx.send("a").await.unwrap();
    /// tx.send("b").await.unwrap();
    /// c.start(rx, tokio::time::sleep(Duration::from_secs(1))).await;
    /// assert_eq!(*seen.lock().unwrap(), ["a", "b"]);
    /// assert!(queue.shutting_down()); // start shut the queue down on its way out
    /// # }
    /// ```
    pub fn start(
        self: Arc<Self>,
        source: tokio::sync::mpsc::Receiver<T>,
        shutdown: impl Future<Output = ()> + Send,
    ) -> impl Future<Output = ()> + Send
    where
        Q: 'static,
        R: 'static,
    {
        self.run(source, shutdown)
    }

    async fn run(
        self: Arc<Self>,
        mut source: tokio::sync::mpsc::Receiver<T>,
        shutdown: impl Future<Output = ()> + Send,
    ) where
        Q: 'static,
        R: 'static,
    {
        let workers_n = self.options.max_concurrent_reconciles.max(1);
        if let Some(metrics) = &self.options.metrics {
            metrics.init(&self.options.name, workers_n);
        }
        let pump = {
            let controller = self.clone();
            tokio::spawn(async move {
                while let Some(request) = source.recv().await {
                    controller.queue.add(request);
                }
            })
        };
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..workers_n {
            let controller = self.clone();
            workers.spawn(async move {
                while controller.process_next_work_item().await {}
            });
        }
        // Until shutdown: stop early only if a worker panics, or if every
        // worker has ended because someone else shut the queue down.
        let mut panicked = tokio::select! {
            () = shutdown => None,
            payload = first_panic(&mut workers) => payload,
        };
        pump.abort();
        self.queue.shut_down();
        // Each worker finishes the request it holds; get then reports shutdown.
        if let Some(payload) = first_panic(&mut workers).await {
            panicked.get_or_insert(payload);
        }
        if let Some(payload) = panicked {
            std::panic::resume_unwind(payload);
        }
    }
}

/// Waits for the workers: the payload of the first one that panicked, or
/// `None` once all have ended without panicking. Workers still running after a
/// panic are left in the set.
async fn first_panic(
    workers: &mut tokio::task::JoinSet<()>,
) -> Option<Box<dyn Any + Send>> {
    while let Some(joined) = workers.join_next().await {
        if let Err(err) = joined
            && err.is_panic()
        {
            return Some(err.into_panic());
        }
    }
    None
}

/// `controller_runtime_active_workers` +1 now, −1 on drop.
struct ActiveWorker<'a> {
    metrics: Option<&'a ControllerMetrics>,
    name: &'a str,
}

impl<'a> ActiveWorker<'a> {
    fn start(metrics: Option<&'a ControllerMetrics>, name: &'a str) -> Self {
        if let Some(m) = metrics {
            m.active_workers(name, 1);
        }
        Self { metrics, name }
    }
}

impl Drop for ActiveWorker<'_> {
    fn drop(&mut self) {
        if let Some(m) = self.metrics {
            m.active_workers(self.name, -1);
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

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// The text of a panic payload, as Go's `%v` prints a panic value.
///
/// ```
/// use faithful_workqueue::controller::panic_message;
///
/// assert_eq!(panic_message(&"boom"), "boom");
/// assert_eq!(panic_message(&String::from("boom")), "boom");
/// assert_eq!(panic_message(&42), "non-string panic payload");
///
/// let payload = std::panic::catch_unwind(|| panic!("index {} out of range", 3)).unwrap_err();
/// assert_eq!(panic_message(&*payload), "index 3 out of range");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// The queue [`Controller::new_typed_unmanaged`] builds: the priority queue by
/// default, client-go's rate-limiting queue when `use_priority_queue` is off.
///
/// ```
/// use faithful_workqueue::controller::{Controller, DefaultQueue, Options};
/// use faithful_workqueue::reconcile::ReconcileResult;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// async fn ok(_: &'static str) -> anyhow::Result<ReconcileResult> {
///     Ok(ReconcileResult::done())
/// }
/// let c: Controller<&str, _, _> = Controller::new_typed_unmanaged(ok, Options::default());
/// assert!(matches!(c.queue(), DefaultQueue::Priority(_)));
///
/// let options = Options { use_priority_queue: false, ..Options::default() };
/// let c: Controller<&str, _, _> = Controller::new_typed_unmanaged(ok, options);
/// assert!(matches!(c.queue(), DefaultQueue::RateLimiting(_)));
/// # }
/// ```
pub enum DefaultQueue<T> {
    /// controller-runtime's priority queue.
    Priority(PriorityQueue<T>),
    /// client-go's rate-limiting queue, driven as upstream's wrapper does.
    RateLimiting(RateLimitingQueue<T>),
}

impl<T> Clone for DefaultQueue<T> {
    fn clone(&self) -> Self {
        match self {
            DefaultQueue::Priority(q) => DefaultQueue::Priority(q.clone()),
            DefaultQueue::RateLimiting(q) => {
                DefaultQueue::RateLimiting(q.clone())
            }
        }
    }
}

macro_rules! each {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            DefaultQueue::Priority($q) => $e,
            DefaultQueue::RateLimiting($q) => $e,
        }
    };
}

impl<T: Item + Sync> Interface<T> for DefaultQueue<T> {
    fn add(&self, item: T) {
        each!(self, q => Interface::add(q, item))
    }
    fn len(&self) -> usize {
        each!(self, q => Interface::len(q))
    }
    async fn get(&self) -> Option<T> {
        each!(self, q => Interface::get(q).await)
    }
    fn done(&self, item: &T) {
        each!(self, q => Interface::done(q, item))
    }
    fn shut_down(&self) {
        each!(self, q => Interface::shut_down(q))
    }
    async fn shut_down_with_drain(&self) {
        each!(self, q => Interface::shut_down_with_drain(q).await)
    }
    fn shutting_down(&self) -> bool {
        each!(self, q => Interface::shutting_down(q))
    }
}

impl<T: Item + Sync> DelayingInterface<T> for DefaultQueue<T> {
    fn add_after(&self, item: T, delay: Duration) {
        each!(self, q => DelayingInterface::add_after(q, item, delay))
    }
}

impl<T: Item + Sync> RateLimitingInterface<T> for DefaultQueue<T> {
    fn add_rate_limited(&self, item: T) {
        each!(self, q => RateLimitingInterface::add_rate_limited(q, item))
    }
    fn forget(&self, item: &T) {
        each!(self, q => RateLimitingInterface::forget(q, item))
    }
    fn num_requeues(&self, item: &T) -> usize {
        each!(self, q => RateLimitingInterface::num_requeues(q, item))
    }
}

impl<T: Item + Sync> PriorityInterface<T> for DefaultQueue<T> {
    fn add_with_opts(&self, opts: AddOpts, items: impl IntoIterator<Item = T>) {
        each!(self, q => PriorityInterface::add_with_opts(q, opts, items))
    }
    async fn get_with_priority(&self) -> Option<(T, i32)> {
        each!(self, q => PriorityInterface::get_with_priority(q).await)
    }
}

impl<T, R> Controller<T, DefaultQueue<T>, R>
where
    T: Item + Sync,
    R: Reconciler<T>,
{
    /// A controller with the queue and limiter upstream's `NewTypedUnmanaged`
    /// picks from `options`: with `use_priority_queue` (the default) the
    /// priority queue and exponential 5ms..1000s, otherwise client-go's
    /// rate-limiting queue and `DefaultTypedControllerRateLimiter`. The queue
    /// is named after the controller and reports to `options.workqueue_metrics`.
    ///
    /// ```
    /// use faithful_workqueue::controller::{Controller, Options};
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::rate_limiting_queue::Interface;
    /// use faithful_workqueue::reconcile::ReconcileResult;
    /// use std::sync::Arc;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// async fn ok(_: &'static str) -> anyhow::Result<ReconcileResult> {
    ///     Ok(ReconcileResult::done())
    /// }
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let options = Options { name: "web".into(), workqueue_metrics: Some(metrics.clone()), ..Options::default() };
    /// let c: Controller<&str, _, _> = Controller::new_typed_unmanaged(ok, options);
    /// c.queue().add("default/web");
    /// assert_eq!(metrics.snapshot("web").adds, 1); // the queue is named after the controller
    /// # }
    /// ```
    pub fn new_typed_unmanaged(reconciler: R, options: Options) -> Self {
        let mut config = QueueConfig::named(options.name.clone());
        config.metrics_provider = options.workqueue_metrics.clone();
        let queue = if options.use_priority_queue {
            DefaultQueue::Priority(PriorityQueue::with_config(
                priority_queue_default_rate_limiter(),
                config,
            ))
        } else {
            DefaultQueue::RateLimiting(RateLimitingQueue::with_config(
                default_typed_controller_rate_limiter(),
                config,
            ))
        };
        Self::with_options(queue, reconciler, options)
    }
}
