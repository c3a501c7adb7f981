//! Wraps a [kube-runtime](kube::runtime) reconciler with the four things
//! controller-runtime gives a Go reconciler and kube-runtime 5.0.0 does not:
//!
//! - **per-object exponential failure backoff**: the n-th consecutive failure
//!   of an object is retried after `min(5ms · 2^(n−1), 1000s)`, client-go's
//!   `TypedItemExponentialFailureRateLimiter` curve, capped from failure #19 on.
//!   A success resets the count. Entries of objects that are gone are dropped,
//!   so the map cannot grow without bound;
//! - **terminal errors**: an error the classifier calls terminal is not
//!   retried ([`Action::await_change`]) until a new trigger arrives;
//! - **a reconcile timeout**: a reconcile that runs longer is dropped and
//!   counts as a failure, so a hung future cannot hold its object (or, with
//!   `Config::concurrency`, the whole controller) forever;
//! - **panic capture**: a panic, whether in the call that builds the future
//!   or while it is polled, becomes a failure instead of taking the
//!   controller down.
//!
//! The reconciler you wrap keeps its signature. [`Guard::wrap`] returns a
//! reconciler for [`applier`](kube::runtime::applier) or
//! [`Controller::run`](kube::runtime::Controller::run), and [`error_policy`]
//! is the matching error policy: the delay is computed when the reconcile
//! fails and travels inside the [`GuardError`], because kube-runtime's error
//! policy is a synchronous `Fn` that never hears about successes.
//!
//! ```
//! # use std::{convert::Infallible, sync::Arc, time::Duration};
//! # use futures::StreamExt;
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use kube::core::ObjectMeta;
//! use kube::runtime::{applier, controller::{Action, Config}, reflector, watcher::Event};
//! use kube_reconcile_guard::{error_policy, Guard};
//!
//! #[derive(Debug)]
//! struct Invalid;
//! impl std::fmt::Display for Invalid {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str("invalid spec") }
//! }
//! impl std::error::Error for Invalid {}
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let (reader, mut writer) = reflector::store::<ConfigMap>();
//! # let cm = ConfigMap { metadata: ObjectMeta { name: Some("web".into()), namespace: Some("default".into()), ..Default::default() }, ..Default::default() };
//! # writer.apply_watcher_event(&Event::Init);
//! # writer.apply_watcher_event(&Event::InitApply(cm));
//! # writer.apply_watcher_event(&Event::InitDone);
//! let guard = Guard::builder()
//!     .timeout(Duration::from_secs(30))
//!     .terminal_if(|_: &Invalid| true)
//!     .forget_when_gone(reader.clone())
//!     .build();
//! let reconcile = |_obj: Arc<ConfigMap>, _ctx: Arc<()>| async { Err::<Action, _>(Invalid) };
//! // One trigger, then a queue that stays open (the applier stops when its queue ends).
//! let queue = futures::stream::iter([Ok::<_, Infallible>(reflector::ObjectRef::new("web").within("default"))])
//!     .chain(futures::stream::pending());
//! let results = applier(guard.wrap(reconcile), error_policy, Arc::new(()), reader, queue, Config::default());
//! let mut results = std::pin::pin!(results);
//! let failed = results.next().await.unwrap().unwrap_err();
//! assert!(failed.to_string().ends_with("terminal error, not retried until the object changes: invalid spec"));
//! # }
//! ```
//!
//! This crate is meant to be copied into your project. It depends only on
//! kube, futures and tokio. Like every library on `k8s-openapi`, it enables
//! no Kubernetes version feature itself; its tests pick `v1_37` through a
//! dev-dependency, and its `.cargo/config.toml` sets
//! `K8S_OPENAPI_ENABLED_VERSION` so that `cargo build` in its own folder works
//! too. In your controller, your own k8s-openapi version feature applies.
#![warn(missing_docs)]

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::Resource;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{Lookup, ObjectRef, Store};
use kube::runtime::watcher;

/// client-go's per-item exponential failure curve: the n-th failure waits
/// `min(base · 2^(n−1), max)`.
///
/// Copied from `faithful-workqueue`'s `ItemExponentialFailureRateLimiter::when`
/// (a port of client-go v0.37.2's `TypedItemExponentialFailureRateLimiter.When`),
/// keeping its floating-point arithmetic and its overflow guard, so that this
/// crate needs no other crate of the book. Only the arithmetic is copied: the
/// per-object counts live in [`Guard`].
///
/// ```
/// use std::time::Duration;
/// use kube_reconcile_guard::Backoff;
///
/// let backoff = Backoff::default();
/// assert_eq!(backoff.delay(1), Duration::from_millis(5));
/// assert_eq!(backoff.delay(2), Duration::from_millis(10));
/// assert_eq!(backoff.delay(18), Duration::from_millis(655_360)); // 10m55.36s
/// assert_eq!(backoff.delay(19), Duration::from_secs(1000)); // the first capped failure
/// assert_eq!(backoff.delay(u32::MAX), Duration::from_secs(1000));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    max: Duration,
}

impl Backoff {
    /// A curve starting at `base` and doubling up to `max`.
    pub const fn new(base: Duration, max: Duration) -> Self {
        Self { base, max }
    }

    /// The wait after the `failure`-th consecutive failure, counted from 1
    /// (0 is treated as 1).
    ///
    /// Beyond `i64::MAX` nanoseconds the float is not converted: the answer is
    /// `max` (upstream's guard against an out-of-range conversion that could
    /// otherwise produce a negative, i.e. zero, wait).
    pub fn delay(&self, failure: u32) -> Duration {
        let exp = failure.saturating_sub(1);
        let backoff = self.base.as_nanos() as f64
            * 2f64.powi(i32::try_from(exp).unwrap_or(i32::MAX));
        if backoff > i64::MAX as f64 {
            return self.max;
        }
        Duration::from_nanos(backoff as u64).min(self.max)
    }
}

impl Default for Backoff {
    /// controller-runtime's default: 5ms doubling to 1000s.
    fn default() -> Self {
        Self::new(Duration::from_millis(5), Duration::from_secs(1000))
    }
}

/// What went wrong in a guarded reconcile.
#[derive(Debug)]
pub enum Failure<E> {
    /// The wrapped reconciler returned this error.
    Failed(E),
    /// The reconcile ran longer than the guard's timeout and was dropped.
    TimedOut(Duration),
    /// The reconciler panicked, with this message.
    Panicked(String),
}

impl<E: fmt::Display> fmt::Display for Failure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Failed(e) => e.fmt(f),
            Failure::TimedOut(limit) => {
                write!(f, "reconcile timed out after {limit:?}")
            }
            Failure::Panicked(message) => {
                write!(f, "reconcile panicked: {message}")
            }
        }
    }
}

/// The error a guarded reconciler returns: the [`Failure`], how many
/// consecutive failures the object has had, and when it will be retried.
/// [`GuardError::action`] (and so [`error_policy`]) turns it into the
/// [`Action`] kube-runtime schedules.
#[derive(Debug)]
pub struct GuardError<E> {
    failure: Failure<E>,
    count: u32,
    retry_after: Option<Duration>,
}

impl<E> GuardError<E> {
    /// What went wrong.
    pub fn failure(&self) -> &Failure<E> {
        &self.failure
    }

    /// The object's consecutive failures, this one included. A terminal error
    /// does not count: the retry chain stops, as with controller-runtime's
    /// `TerminalError` (no requeue, no `Forget`).
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The backoff before the retry, or `None` for a terminal error.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// Whether this is a terminal error, which is not retried.
    pub fn is_terminal(&self) -> bool {
        self.retry_after.is_none()
    }

    /// `requeue(retry_after)`, or `await_change()` for a terminal error.
    pub fn action(&self) -> Action {
        match self.retry_after {
            Some(delay) => Action::requeue(delay),
            None => Action::await_change(),
        }
    }
}

impl<E: fmt::Display> fmt::Display for GuardError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.retry_after {
            Some(delay) => write!(
                f,
                "failure #{}, retry in {delay:?}: {}",
                self.count, self.failure
            ),
            None => write!(
                f,
                "terminal error, not retried until the object changes: {}",
                self.failure
            ),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for GuardError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.failure {
            Failure::Failed(e) => Some(e),
            _ => None,
        }
    }
}

/// The error policy that goes with [`Guard::wrap`]: the [`Action`] the error
/// carries. Pass it to `applier` or `Controller::run` as it is.
///
/// ```
/// # use std::sync::Arc;
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # let _policy: fn(Arc<ConfigMap>, &kube_reconcile_guard::GuardError<std::io::Error>, Arc<()>) -> kube::runtime::controller::Action =
/// kube_reconcile_guard::error_policy
/// # ;
/// ```
pub fn error_policy<K, E, Ctx>(
    _obj: Arc<K>,
    error: &GuardError<E>,
    _ctx: Arc<Ctx>,
) -> Action {
    error.action()
}

struct Entry {
    uid: Option<String>,
    failures: u32,
}

type Classifier<E> = Box<dyn Fn(&E) -> bool + Send + Sync>;

struct Shared<K, E>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    backoff: Backoff,
    timeout: Option<Duration>,
    terminal: Classifier<E>,
    store: Option<Store<K>>,
    dyntype: K::DynamicType,
    failures: Mutex<HashMap<ObjectRef<K>, Entry>>,
}

/// Builds a [`Guard`]; see [`Guard::builder`].
pub struct Builder<K, E>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    backoff: Backoff,
    timeout: Option<Duration>,
    terminal: Classifier<E>,
    store: Option<Store<K>>,
    dyntype: K::DynamicType,
}

impl<K, E> Builder<K, E>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    /// A builder for a resource with a dynamic type (found by discovery).
    pub fn with_dyntype(dyntype: K::DynamicType) -> Self {
        Self {
            backoff: Backoff::default(),
            timeout: None,
            terminal: Box::new(|_| false),
            store: None,
            dyntype,
        }
    }

    /// The failure curve; [`Backoff::default`] (5ms doubling to 1000s) if not set.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Drops a reconcile that runs longer than `limit` and counts it as a
    /// failure. Not set, a reconcile may run forever.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Errors for which `is_terminal` returns true are not retried. Not set,
    /// every error is retried.
    pub fn terminal_if(
        mut self,
        is_terminal: impl Fn(&E) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.terminal = Box::new(is_terminal);
        self
    }

    /// The reflector store of the reconciled objects: before each reconcile the
    /// guard drops the counts of objects the store no longer holds. Without it,
    /// call [`Guard::forget`] (or [`Guard::observe`]) when an object is
    /// deleted, or the counts of deleted failing objects stay.
    pub fn forget_when_gone(mut self, store: Store<K>) -> Self {
        self.store = Some(store);
        self
    }

    /// The guard.
    pub fn build(self) -> Guard<K, E> {
        Guard {
            shared: Arc::new(Shared {
                backoff: self.backoff,
                timeout: self.timeout,
                terminal: self.terminal,
                store: self.store,
                dyntype: self.dyntype,
                failures: Mutex::new(HashMap::new()),
            }),
        }
    }
}

/// Per-object failure state and the wrapper around a reconciler. Cheap to
/// clone; clones share the state.
pub struct Guard<K, E>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    shared: Arc<Shared<K, E>>,
}

impl<K, E> Clone for Guard<K, E>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    fn clone(&self) -> Self {
        Self { shared: self.shared.clone() }
    }
}

impl<K, E> Guard<K, E>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash + Default,
{
    /// A builder with the defaults: [`Backoff::default`], no timeout, no
    /// terminal errors, no store.
    pub fn builder() -> Builder<K, E> {
        Builder::with_dyntype(Default::default())
    }
}

impl<K, E> Guard<K, E>
where
    K: Resource + Clone + Send + Sync + 'static,
    K::DynamicType: Clone + Eq + Hash + Send + Sync,
    E: Send + 'static,
{
    /// Wraps `reconcile`. The result is a reconciler for `applier` or
    /// `Controller::run`, to be used with [`error_policy`].
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kube::runtime::controller::Action;
    /// let guard = kube_reconcile_guard::Guard::<ConfigMap, std::io::Error>::builder().build();
    /// let _reconcile = guard.wrap(|_obj: Arc<ConfigMap>, _ctx: Arc<()>| async { Ok(Action::await_change()) });
    /// ```
    pub fn wrap<Ctx, F, Fut>(
        &self,
        mut reconcile: F,
    ) -> impl FnMut(
        Arc<K>,
        Arc<Ctx>,
    ) -> BoxFuture<'static, Result<Action, GuardError<E>>>
    + use<K, E, Ctx, F, Fut>
    where
        F: FnMut(Arc<K>, Arc<Ctx>) -> Fut,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let shared = self.shared.clone();
        move |obj, ctx| {
            shared.sweep();
            let key = obj.to_object_ref(shared.dyntype.clone());
            let uid = obj.meta().uid.clone();
            // A reconciler may panic before it returns its future.
            let made = std::panic::catch_unwind(AssertUnwindSafe(|| {
                reconcile(obj, ctx)
            }));
            let shared = shared.clone();
            async move {
                let result = match made {
                    Err(payload) => {
                        Err(Failure::Panicked(panic_message(&*payload)))
                    }
                    Ok(fut) => {
                        let caught = AssertUnwindSafe(fut).catch_unwind();
                        let caught = match shared.timeout {
                            Some(limit) => tokio::time::timeout(limit, caught)
                                .await
                                .map_err(|_| Failure::TimedOut(limit)),
                            None => Ok(caught.await),
                        };
                        match caught {
                            Ok(Ok(Ok(action))) => Ok(action),
                            Ok(Ok(Err(e))) => Err(Failure::Failed(e)),
                            Ok(Err(payload)) => {
                                Err(Failure::Panicked(panic_message(&*payload)))
                            }
                            Err(timed_out) => Err(timed_out),
                        }
                    }
                };
                shared.settle(key, uid, result)
            }
            .boxed()
        }
    }
}

impl<K, E> Guard<K, E>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    /// The deletion hook: drops the object's count. Call it where your
    /// controller learns of a deletion (a finalizer's cleanup, a watcher's
    /// `Delete`).
    pub fn forget(&self, obj_ref: &ObjectRef<K>) {
        self.shared.failures.lock().unwrap().remove(obj_ref);
    }

    /// Feeds a watcher event to the guard: a `Delete` forgets the object.
    /// For use in `.inspect_ok(|e| guard.observe(e))` on a watcher stream.
    pub fn observe(&self, event: &watcher::Event<K>) {
        if let watcher::Event::Delete(obj) = event {
            self.forget(&obj.to_object_ref(self.shared.dyntype.clone()));
        }
    }

    /// The object's current consecutive failures (0 when it has none).
    pub fn failures(&self, obj_ref: &ObjectRef<K>) -> u32 {
        self.shared
            .failures
            .lock()
            .unwrap()
            .get(obj_ref)
            .map_or(0, |e| e.failures)
    }

    /// How many objects the guard holds a count for.
    pub fn tracked(&self) -> usize {
        self.shared.failures.lock().unwrap().len()
    }
}

impl<K, E> Shared<K, E>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Clone + Eq + Hash,
{
    /// Drops the counts of objects the store no longer holds.
    fn sweep(&self) {
        if let Some(store) = &self.store {
            self.failures
                .lock()
                .unwrap()
                .retain(|key, _| store.get(key).is_some());
        }
    }

    fn settle(
        &self,
        key: ObjectRef<K>,
        uid: Option<String>,
        result: Result<Action, Failure<E>>,
    ) -> Result<Action, GuardError<E>> {
        let mut failures = self.failures.lock().unwrap();
        // A new object with an old name starts afresh.
        if failures.get(&key).is_some_and(|e| e.uid != uid) {
            failures.remove(&key);
        }
        let failure = match result {
            Ok(action) => {
                failures.remove(&key); // the `Forget` of a success
                return Ok(action);
            }
            Err(failure) => failure,
        };
        if let Failure::Failed(e) = &failure
            && (self.terminal)(e)
        {
            let count = failures.get(&key).map_or(0, |e| e.failures);
            return Err(GuardError { failure, count, retry_after: None });
        }
        let entry = failures.entry(key).or_insert(Entry { uid, failures: 0 });
        entry.failures = entry.failures.saturating_add(1);
        let count = entry.failures;
        Err(GuardError {
            failure,
            count,
            retry_after: Some(self.backoff.delay(count)),
        })
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}
