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
    /// The priority of any requeue, on every arm (upstream's `Result.Priority`;
    /// only a priority queue uses it). `None` keeps the priority the item was
    /// handed out with.
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
    fn reconcile(&self, request: T) -> impl Future<Output = anyhow::Result<ReconcileResult>> + Send;
}

impl<T, F, Fut> Reconciler<T> for F
where
    F: Fn(T) -> Fut + Send + Sync,
    Fut: Future<Output = anyhow::Result<ReconcileResult>> + Send,
{
    fn reconcile(&self, request: T) -> impl Future<Output = anyhow::Result<ReconcileResult>> + Send {
        self(request)
    }
}

/// An error that retrying cannot fix (upstream's `reconcile.TerminalError`):
/// the controller neither requeues the request nor forgets its failures.
///
/// Its message is `terminal error: ` followed by the wrapped error's, and the
/// wrapped error is its [`source`](StdError::source).
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
    err: anyhow::Error,
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
        Self { err: err.into() }
    }

    /// The wrapped error (upstream's `Unwrap`).
    ///
    /// ```
    /// use faithful_workqueue::reconcile::TerminalError;
    ///
    /// let err = TerminalError::new(anyhow::anyhow!("bad spec"));
    /// assert_eq!(err.inner().to_string(), "bad spec");
    /// ```
    pub fn inner(&self) -> &anyhow::Error {
        &self.err
    }
}

impl fmt::Display for TerminalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "terminal error: {}", self.err)
    }
}

impl StdError for TerminalError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(self.err.as_ref())
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
pub fn is_terminal(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<TerminalError>())
}
