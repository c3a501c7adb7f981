//! What a reconciler returns, mirroring controller-runtime's
//! `pkg/reconcile/reconcile.go`.
//!
//! A reconcile ends in one of five ways, and the controller's switch
//! ([`crate::controller`]) maps each to queue calls:
//!
//! | reconcile returned | queue calls | failure count |
//! |---|---|---|
//! | an error that [`is_terminal`] | none | kept |
//! | any other error | `add_rate_limited` | +1 |
//! | `Ok` with [`ReconcileResult::requeue_after`] > 0 | `forget`, then `add_after` | reset |
//! | `Ok` with [`ReconcileResult::requeue`] | `add_rate_limited` | +1 |
//! | `Ok(ReconcileResult::default())` | `forget` | reset |
//!
//! In every case the worker calls `done` afterwards.
//!
//! Go's reconciler returns a result *and* an error. Here it returns one or the
//! other, and [`with_result`] attaches a result to an error for the one case
//! where upstream reads the result of a failed reconcile: its
//! [`priority`](ReconcileResult::priority), for the rate-limited requeue.

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::time::Duration;

/// The successful result of a reconcile (upstream's `reconcile.Result`).
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
/// // Both set: `requeue_after` is checked first, and the failures are reset.
/// async fn both(_: &'static str) -> anyhow::Result<ReconcileResult> {
///     Ok(ReconcileResult { requeue: true, requeue_after: Duration::from_secs(1), priority: None })
/// }
/// let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
/// let controller = Controller::new(queue.clone(), both);
/// let outcome = controller.reconcile_handler("a", 0).await;
/// assert_eq!(outcome, Outcome::RequeueAfter(Duration::from_secs(1)));
/// assert_eq!(queue.num_requeues(&"a"), 0);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReconcileResult {
    /// Requeue through the rate limiter, as if the reconcile had failed.
    /// Deprecated upstream in favour of `requeue_after`.
    pub requeue: bool,
    /// Requeue after this delay. Zero means no timed requeue.
    pub requeue_after: Duration,
    /// The priority of the requeue, if there is one (upstream's
    /// `Result.Priority`; only a priority queue uses it). `None` keeps the
    /// priority the item was handed out with.
    ///
    /// It applies to every arm that requeues: `requeue_after`, `requeue`, and
    /// the rate-limited requeue after an ordinary error, when the result is
    /// attached to the error with [`with_result`]. A terminal error and a
    /// success requeue nothing, so there it has no effect.
    pub priority: Option<i32>,
}

impl ReconcileResult {
    /// Success: forget the item's failures, no requeue.
    ///
    /// ```
    /// use faithful_workqueue::reconcile::ReconcileResult;
    ///
    /// let result = ReconcileResult::done();
    /// assert_eq!(result, ReconcileResult::default());
    /// assert!(!result.requeue && result.requeue_after.is_zero());
    /// ```
    pub fn done() -> Self {
        Self::default()
    }

    /// Requeue after `delay`, with the failure count reset.
    ///
    /// ```
    /// use faithful_workqueue::reconcile::ReconcileResult;
    /// use std::time::Duration;
    ///
    /// let result = ReconcileResult::requeue_after(Duration::from_secs(30));
    /// assert_eq!(result.requeue_after, Duration::from_secs(30));
    /// assert!(!result.requeue); // a timed requeue, not a rate-limited one
    /// ```
    pub fn requeue_after(delay: Duration) -> Self {
        Self { requeue_after: delay, ..Self::default() }
    }
}

/// Something that reconciles one request (upstream's `reconcile.Reconciler`).
///
/// Any `Fn(T) -> impl Future<Output = anyhow::Result<ReconcileResult>>` is a
/// reconciler:
///
/// ```
/// use faithful_workqueue::reconcile::{ReconcileResult, Reconciler};
///
/// fn assert_reconciler<R: Reconciler<&'static str>>(_: R) {}
/// assert_reconciler(|key: &'static str| async move {
///     println!("reconciling {key}");
///     Ok(ReconcileResult::done())
/// });
/// ```
pub trait Reconciler<T>: Send + Sync {
    /// Brings the world in line with the object `request` names.
    ///
    /// ```
    /// use faithful_workqueue::reconcile::{ReconcileResult, Reconciler};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let reconciler = |replicas: i32| async move {
    ///     anyhow::ensure!(replicas >= 0, "spec.replicas must be >= 0");
    ///     Ok(ReconcileResult::done())
    /// };
    /// assert_eq!(reconciler.reconcile(3).await.unwrap(), ReconcileResult::done());
    /// assert!(reconciler.reconcile(-1).await.is_err());
    /// # }
    /// ```
    fn reconcile(
        &self,
        request: T,
    ) -> impl Future<Output = anyhow::Result<ReconcileResult>> + Send;
}

impl<T, F, Fut> Reconciler<T> for F
where
    F: Fn(T) -> Fut + Send + Sync,
    Fut: Future<Output = anyhow::Result<ReconcileResult>> + Send,
{
    fn reconcile(
        &self,
        request: T,
    ) -> impl Future<Output = anyhow::Result<ReconcileResult>> + Send {
        self(request)
    }
}

/// An error that retrying cannot fix (upstream's `reconcile.TerminalError`):
/// the controller neither requeues the request nor forgets its failures.
///
/// Its message is `terminal error: ` followed by the wrapped error's, and the
/// wrapped error is its [`source`](StdError::source). Upstream's
/// `TerminalError(nil)`, which wraps nothing, is [`TerminalError::nil`].
///
/// ```
/// use faithful_workqueue::reconcile::{is_terminal, terminal_error};
/// use anyhow::{anyhow, Context};
///
/// let err = terminal_error(anyhow!("spec.replicas must be >= 0"));
/// assert_eq!(err.to_string(), "terminal error: spec.replicas must be >= 0");
///
/// // .context() keeps it terminal, as %w does in Go.
/// let wrapped = Err::<(), _>(err).context("reconciling web-1").unwrap_err();
/// assert!(is_terminal(&wrapped));
/// assert!(!is_terminal(&anyhow!("connection refused")));
/// ```
#[derive(Debug)]
pub struct TerminalError {
    err: Option<anyhow::Error>,
}

impl TerminalError {
    /// Wraps `err` as terminal.
    ///
    /// ```
    /// use faithful_workqueue::reconcile::TerminalError;
    /// use std::error::Error;
    ///
    /// let err = TerminalError::new(anyhow::anyhow!("bad spec"));
    /// assert_eq!(err.to_string(), "terminal error: bad spec");
    /// assert_eq!(err.source().unwrap().to_string(), "bad spec");
    /// ```
    pub fn new(err: impl Into<anyhow::Error>) -> Self {
        Self { err: Some(err.into()) }
    }

    /// A terminal error that wraps nothing (upstream's `TerminalError(nil)`):
    /// its message is `nil terminal error`, it has no source, and it is
    /// terminal like any other.
    ///
    /// ```
    /// use faithful_workqueue::reconcile::{is_terminal, TerminalError};
    /// use std::error::Error;
    ///
    /// let err = TerminalError::nil();
    /// assert_eq!(err.to_string(), "nil terminal error");
    /// assert!(err.source().is_none() && err.inner().is_none());
    /// assert!(is_terminal(&anyhow::Error::new(err)));
    /// ```
    pub fn nil() -> Self {
        Self { err: None }
    }

    /// The wrapped error (upstream's `Unwrap`); `None` for [`TerminalError::nil`].
    ///
    /// ```
    /// use faithful_workqueue::reconcile::TerminalError;
    ///
    /// let err = TerminalError::new(anyhow::anyhow!("bad spec"));
    /// assert_eq!(err.inner().unwrap().to_string(), "bad spec");
    /// ```
    pub fn inner(&self) -> Option<&anyhow::Error> {
        self.err.as_ref()
    }
}

impl fmt::Display for TerminalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.err {
            Some(err) => write!(f, "terminal error: {err}"),
            None => f.write_str("nil terminal error"),
        }
    }
}

impl StdError for TerminalError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &self.err {
            Some(err) => Some(&**err),
            None => None,
        }
    }
}

/// Wraps `err` in a [`TerminalError`] and returns it as an `anyhow::Error`,
/// ready for `?` or `Err(..)`.
///
/// ```
/// use faithful_workqueue::reconcile::{is_terminal, terminal_error, TerminalError};
///
/// fn validate(replicas: i32) -> anyhow::Result<()> {
///     if replicas < 0 {
///         return Err(terminal_error(anyhow::anyhow!("spec.replicas must be >= 0")));
///     }
///     Ok(())
/// }
/// let err = validate(-1).unwrap_err();
/// assert!(is_terminal(&err));
/// assert!(err.downcast_ref::<TerminalError>().is_some());
/// ```
pub fn terminal_error(err: impl Into<anyhow::Error>) -> anyhow::Error {
    anyhow::Error::new(TerminalError::new(err))
}

/// Whether `err`, or any error in its chain of sources, is a [`TerminalError`]:
/// the Rust counterpart of Go's `errors.Is(err, reconcile.TerminalError(nil))`.
///
/// `err.downcast_ref::<TerminalError>()` is not enough: it sees through
/// anyhow's `.context()`, but not through an error type of yours whose
/// `source()` is the terminal error. Walking [`anyhow::Error::chain`] finds
/// both.
///
/// ```
/// use anyhow::{anyhow, Context};
/// use faithful_workqueue::reconcile::{is_terminal, terminal_error, TerminalError};
/// use std::{error::Error, fmt};
///
/// // Through anyhow's .context():
/// let err = Err::<(), _>(terminal_error(anyhow!("bad spec"))).context("reconciling web").unwrap_err();
/// assert!(is_terminal(&err));
///
/// // Through an error type of yours whose source() is the terminal error:
/// #[derive(Debug)]
/// struct SyncFailed(anyhow::Error);
/// impl fmt::Display for SyncFailed {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         f.write_str("sync failed")
///     }
/// }
/// impl Error for SyncFailed {
///     fn source(&self) -> Option<&(dyn Error + 'static)> {
///         Some(self.0.as_ref())
///     }
/// }
/// let err = anyhow::Error::new(SyncFailed(terminal_error(anyhow!("bad spec"))));
/// assert!(err.downcast_ref::<TerminalError>().is_none()); // downcasting misses it
/// assert!(is_terminal(&err));
///
/// assert!(!is_terminal(&anyhow!("connection refused")));
/// ```
///
/// A terminal error given a result with [`with_result`] is still terminal.
pub fn is_terminal(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.is::<TerminalError>()
            || e.downcast_ref::<ErrorWithResult>()
                .is_some_and(|w| is_terminal(&w.err))
    })
}

/// An error returned together with a result, Go's `return result, err`: made
/// by [`with_result`], read back by [`result_of`].
///
/// Upstream reads one thing from the result of a failed reconcile, its
/// `Priority`, which becomes the priority of the rate-limited requeue; a
/// `RequeueAfter` or `Requeue` returned with an error is ignored (upstream logs
/// a warning). The wrapper is transparent: its message and its sources are the
/// wrapped error's, so logs and [`is_terminal`] read as if it were not there.
/// Only a downcast of the outermost error to the wrapped type misses it.
#[derive(Debug)]
pub struct ErrorWithResult {
    result: ReconcileResult,
    err: anyhow::Error,
}

impl ErrorWithResult {
    /// The result returned with the error.
    ///
    /// ```
    /// use faithful_workqueue::reconcile::{with_result, ErrorWithResult, ReconcileResult};
    ///
    /// let result = ReconcileResult { priority: Some(10), ..ReconcileResult::default() };
    /// let err = with_result(result, anyhow::anyhow!("conflict"));
    /// assert_eq!(err.downcast_ref::<ErrorWithResult>().unwrap().result(), result);
    /// ```
    pub fn result(&self) -> ReconcileResult {
        self.result
    }

    /// The error itself.
    ///
    /// ```
    /// use faithful_workqueue::reconcile::{with_result, ErrorWithResult, ReconcileResult};
    ///
    /// let err = with_result(ReconcileResult::default(), anyhow::anyhow!("conflict"));
    /// assert_eq!(err.downcast_ref::<ErrorWithResult>().unwrap().error().to_string(), "conflict");
    /// ```
    pub fn error(&self) -> &anyhow::Error {
        &self.err
    }
}

impl fmt::Display for ErrorWithResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.err, f)
    }
}

impl StdError for ErrorWithResult {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.err.source()
    }
}

/// Returns `err` with `result` attached, for a reconciler that fails and still
/// sets a result (Go's `return result, err`). The controller then requeues at
/// the result's [`priority`](ReconcileResult::priority), as upstream applies
/// `Result.Priority` before its switch, on the error arm too.
///
/// ```
/// use anyhow::anyhow;
/// use faithful_workqueue::controller::{Controller, Outcome};
/// use faithful_workqueue::priorityqueue::PriorityQueue;
/// use faithful_workqueue::reconcile::{with_result, ReconcileResult};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// async fn reconcile(_: &'static str) -> anyhow::Result<ReconcileResult> {
///     // Retry through the rate limiter, but ahead of the other keys.
///     let result = ReconcileResult { priority: Some(10), ..ReconcileResult::default() };
///     Err(with_result(result, anyhow!("conflict")))
/// }
/// let queue = PriorityQueue::new();
/// let c = Controller::new(queue.clone(), reconcile);
/// assert_eq!(c.reconcile_handler("web", 0).await, Outcome::Error);
/// tokio::time::advance(Duration::from_millis(5)).await;
/// assert_eq!(queue.get_with_priority().await, Some(("web", 10)));
/// # }
/// ```
pub fn with_result(
    result: ReconcileResult,
    err: impl Into<anyhow::Error>,
) -> anyhow::Error {
    anyhow::Error::new(ErrorWithResult { result, err: err.into() })
}

/// The result attached to `err` with [`with_result`], anywhere in its chain.
///
/// ```
/// use anyhow::{anyhow, Context};
/// use faithful_workqueue::reconcile::{result_of, with_result, ReconcileResult};
///
/// let result = ReconcileResult { priority: Some(10), ..ReconcileResult::default() };
/// let err = Err::<(), _>(with_result(result, anyhow!("conflict"))).context("reconciling web").unwrap_err();
/// assert_eq!(result_of(&err), Some(result));
/// assert_eq!(result_of(&anyhow!("conflict")), None);
/// ```
pub fn result_of(err: &anyhow::Error) -> Option<ReconcileResult> {
    err.chain()
        .find_map(|e| e.downcast_ref::<ErrorWithResult>())
        .map(ErrorWithResult::result)
}
