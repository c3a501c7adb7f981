//! A delaying queue plus a rate limiter, mirroring client-go's
//! `util/workqueue/rate_limiting_queue.go`.
//!
//! The whole file is three forwarding methods, and the book turns on them:
//!
//! * [`add_rate_limited`](RateLimitingQueue::add_rate_limited) asks the limiter
//!   how long to wait (which counts a failure) and calls `add_after`;
//! * [`forget`](RateLimitingQueue::forget) clears the limiter's memory of the
//!   item. **It does not touch the queue**: a queued item stays queued, a
//!   processing item stays processing, and you still owe `done`;
//! * [`num_requeues`](RateLimitingQueue::num_requeues) reads the limiter.
//!
//! The traits [`Interface`], [`DelayingInterface`] and [`RateLimitingInterface`]
//! are upstream's `TypedInterface`, `TypedDelayingInterface` and
//! `TypedRateLimitingInterface`: the controller loop is written against them,
//! so a wrapper (a logging one, say) can stand in for the queue.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::default_rate_limiters::RateLimiter;
use crate::delaying_queue::DelayingQueue;
use crate::queue::{Item, Lease, Queue, QueueConfig};

/// A delaying queue whose retries are paced by a [`RateLimiter`].
///
/// ```
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
/// q.add("a");
/// q.forget(&"a");
/// assert_eq!(q.len(), 1); // forget is not delete
///
/// let a = q.get().await.unwrap();
/// q.add_rate_limited(a); // waits 5ms: the first failure
/// q.done(&a);
/// assert_eq!((q.len(), q.num_requeues(&a)), (0, 1));
/// tokio::time::advance(Duration::from_millis(5)).await;
/// assert_eq!(q.len(), 1);
/// # }
/// ```
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    rate_limiter: Arc<dyn RateLimiter<T>>,
}

impl<T> Clone for RateLimitingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            rate_limiter: self.rate_limiter.clone(),
        }
    }
}

impl<T: Item> RateLimitingQueue<T> {
    /// A rate-limiting queue without metrics (upstream's
    /// `NewTypedRateLimitingQueue`).
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::ItemExponentialFailureRateLimiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1));
    /// let q: RateLimitingQueue<&str> = RateLimitingQueue::new(limiter);
    /// assert!(q.is_empty());
    /// ```
    pub fn new(rate_limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(rate_limiter, QueueConfig::default())
    }

    /// A rate-limiting queue with options (upstream's
    /// `NewTypedRateLimitingQueueWithConfig`).
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::QueueConfig;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::sync::Arc;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let config = QueueConfig::named("rl").metrics_provider(metrics.clone());
    /// let q = RateLimitingQueue::with_config(priority_queue_default_rate_limiter(), config);
    /// q.add_rate_limited("a");
    /// assert_eq!(metrics.snapshot("rl").retries, 1);
    /// # }
    /// ```
    pub fn with_config(
        rate_limiter: impl RateLimiter<T> + 'static,
        config: QueueConfig,
    ) -> Self {
        Self {
            queue: DelayingQueue::with_config(config),
            rate_limiter: Arc::new(rate_limiter),
        }
    }

    /// Adds `item` after the delay the limiter gives it, counting one failure.
    /// The limiter is asked first, so after shutdown the failure is still
    /// counted though nothing is added, as upstream.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add_rate_limited("a"); // 5ms
    /// q.add_rate_limited("a"); // 10ms: later, so dropped, but the failure counts
    /// assert_eq!(q.num_requeues(&"a"), 2);
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// assert_eq!(q.len(), 1);
    ///
    /// q.shut_down();
    /// q.add_rate_limited("b");
    /// assert_eq!(q.num_requeues(&"b"), 1); // counted, though nothing is added
    /// # }
    /// ```
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.rate_limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Tells the limiter that `item` is finished being retried: its failure
    /// count goes back to zero. This only clears the limiter; the item's place
    /// in the queue is untouched, and you still have to call
    /// [`done`](RateLimitingQueue::done).
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add("a");
    /// let a = q.get().await.unwrap();
    /// q.add_rate_limited(a);
    /// q.forget(&a);
    /// assert_eq!(q.num_requeues(&a), 0); // the limiter forgot ...
    /// assert_eq!(q.waiting_len(), 1); // ... the queue did not: "a" still waits
    /// assert_eq!(q.queue().debug_state().processing, ["a"]); // and done is still owed
    /// q.done(&a);
    /// # }
    /// ```
    pub fn forget(&self, item: &T) {
        self.rate_limiter.forget(item);
    }

    /// How many times `item` has been rate-limited since it was last forgotten.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// assert_eq!(q.num_requeues(&"a"), 0);
    /// q.add_rate_limited("a");
    /// q.add_rate_limited("a");
    /// assert_eq!(q.num_requeues(&"a"), 2);
    /// q.forget(&"a");
    /// assert_eq!(q.num_requeues(&"a"), 0);
    /// ```
    pub fn num_requeues(&self, item: &T) -> usize {
        self.rate_limiter.num_requeues(item)
    }

    /// [`DelayingQueue::add_after`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add_after("a", Duration::from_secs(1));
    /// assert_eq!(q.num_requeues(&"a"), 0); // the limiter is not asked
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.add_after(item, delay);
    }

    /// [`Queue::add`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add("a");
    /// q.add("a"); // deduplicated
    /// assert_eq!(q.len(), 1);
    /// assert_eq!(q.num_requeues(&"a"), 0);
    /// ```
    pub fn add(&self, item: T) {
        self.queue.add(item);
    }

    /// [`Queue::len`]: the FIFO only.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add("a");
    /// q.add("b");
    /// q.add_rate_limited("c");
    /// let _a = q.get().await.unwrap();
    /// assert_eq!(q.len(), 1); // "a" is processing and "c" waiting: only "b" counts
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether the FIFO is empty.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add_rate_limited("a");
    /// assert!(q.is_empty()); // waiting entries are not in the FIFO
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// assert!(!q.is_empty());
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// [`Queue::get`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add_rate_limited("a");
    /// let start = tokio::time::Instant::now();
    /// assert_eq!(q.get().await, Some("a"));
    /// assert_eq!(start.elapsed(), Duration::from_millis(5)); // the limiter's delay
    /// # }
    /// ```
    pub async fn get(&self) -> Option<T> {
        self.queue.get().await
    }

    /// [`Queue::lease`]: the item comes with `done` on drop.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add("a");
    /// let lease = q.lease().await.unwrap();
    /// q.add_rate_limited(*lease.item());
    /// q.forget(lease.item());
    /// drop(lease); // done
    /// assert_eq!(q.waiting_len(), 1); // forget left the retry in place
    /// # }
    /// ```
    pub async fn lease(&self) -> Option<Lease<T>> {
        self.queue.lease().await
    }

    /// [`Queue::done`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add("a");
    /// let a = q.get().await.unwrap();
    /// q.add(a);
    /// q.done(&a); // re-queues the dirty "a"
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub fn done(&self, item: &T) {
        self.queue.done(item);
    }

    /// [`Queue::shut_down`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add("a");
    /// q.add_rate_limited("b");
    /// q.shut_down();
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// assert_eq!(q.get().await, Some("a"));
    /// assert_eq!(q.get().await, None); // the waiting "b" is never added
    /// # }
    /// ```
    pub fn shut_down(&self) {
        self.queue.shut_down();
    }

    /// [`Queue::shut_down_with_drain`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add("a");
    /// q.add("b");
    /// let a = q.get().await.unwrap();
    /// let drain = tokio::spawn({
    ///     let q = q.clone();
    ///     async move { q.shut_down_with_drain().await }
    /// });
    /// tokio::task::yield_now().await;
    /// assert!(!drain.is_finished()); // waits for the processing "a" ...
    /// q.done(&a);
    /// drain.await.unwrap();
    /// assert_eq!(q.len(), 1); // ... not for the queued "b"
    /// # }
    /// ```
    pub async fn shut_down_with_drain(&self) {
        self.queue.shut_down_with_drain().await;
    }

    /// [`Queue::shutting_down`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// let q: RateLimitingQueue<&str> = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    /// q.shut_down();
    /// assert!(q.shutting_down());
    /// ```
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }

    /// The number of entries waiting for their ready time.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add_rate_limited("a");
    /// q.add_after("b", Duration::from_secs(1));
    /// assert_eq!(q.waiting_len(), 2);
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// assert_eq!(q.waiting_len(), 1);
    /// # }
    /// ```
    pub fn waiting_len(&self) -> usize {
        self.queue.waiting_len()
    }

    /// The underlying [`Queue`] (for [`Queue::debug_state`] and metrics).
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add("a");
    /// let a = q.get().await.unwrap();
    /// q.add(a);
    /// let s = q.queue().debug_state();
    /// assert_eq!((s.fifo.len(), s.dirty, s.processing), (0, vec!["a"], vec!["a"]));
    /// # }
    /// ```
    pub fn queue(&self) -> &Queue<T> {
        self.queue.queue()
    }
}

/// The basic queue contract (upstream's `TypedInterface`).
///
/// ```
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::priorityqueue::PriorityQueue;
/// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingQueue};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// /// Shuts `q` down, then takes everything it still hands out.
/// async fn drain<Q: Interface<&'static str>>(q: &Q) -> Vec<&'static str> {
///     q.shut_down();
///     let mut taken = Vec::new();
///     while let Some(item) = q.get().await {
///         q.done(&item);
///         taken.push(item);
///     }
///     taken
/// }
///
/// let rl = RateLimitingQueue::new(priority_queue_default_rate_limiter());
/// rl.add("a");
/// rl.add("b");
/// assert_eq!(drain(&rl).await, ["a", "b"]);
///
/// let pq = PriorityQueue::new();
/// pq.add("a");
/// assert!(drain(&pq).await.is_empty()); // the priority queue does not drain
/// # }
/// ```
// Upstream's interface has `Len` and no `IsEmpty`; the trait keeps its shape.
#[allow(clippy::len_without_is_empty)]
pub trait Interface<T>: Send + Sync {
    /// See [`Queue::add`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingQueue};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// Interface::add(&q, "a");
    /// Interface::add(&q, "a");
    /// assert_eq!(Interface::len(&q), 1);
    /// # }
    /// ```
    fn add(&self, item: T);
    /// See [`Queue::len`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingQueue};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// Interface::add(&q, "a");
    /// let a = Interface::get(&q).await.unwrap();
    /// Interface::add(&q, a);
    /// assert_eq!(Interface::len(&q), 0); // processing items are not counted
    /// # }
    /// ```
    fn len(&self) -> usize;
    /// See [`Queue::get`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingQueue};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// Interface::add(&q, "a");
    /// assert_eq!(Interface::get(&q).await, Some("a"));
    /// Interface::shut_down(&q);
    /// assert_eq!(Interface::get(&q).await, None);
    /// # }
    /// ```
    fn get(&self) -> impl Future<Output = Option<T>> + Send;
    /// See [`Queue::done`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingQueue};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// Interface::add(&q, "a");
    /// let a = Interface::get(&q).await.unwrap();
    /// Interface::add(&q, a);
    /// Interface::done(&q, &a);
    /// assert_eq!(Interface::len(&q), 1); // the dirty "a" is back
    /// # }
    /// ```
    fn done(&self, item: &T);
    /// See [`Queue::shut_down`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingQueue};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// Interface::shut_down(&q);
    /// Interface::add(&q, "a");
    /// assert_eq!(Interface::len(&q), 0);
    /// assert_eq!(Interface::get(&q).await, None);
    /// # }
    /// ```
    fn shut_down(&self);
    /// See [`Queue::shut_down_with_drain`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingQueue};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// Interface::add(&q, "a");
    /// // Nothing is processing, so the drain ends at once; "a" stays queued.
    /// Interface::shut_down_with_drain(&q).await;
    /// assert!(Interface::shutting_down(&q));
    /// assert_eq!(Interface::len(&q), 1);
    /// # }
    /// ```
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send;
    /// See [`Queue::shutting_down`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingQueue};
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// assert!(!Interface::shutting_down(&q));
    /// Interface::shut_down(&q);
    /// assert!(Interface::shutting_down(&q));
    /// # Interface::add(&q, "a");
    /// ```
    fn shutting_down(&self) -> bool;
}

/// A queue with delayed adds (upstream's `TypedDelayingInterface`).
///
/// ```
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::rate_limiting_queue::{DelayingInterface, Interface, RateLimitingQueue};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// fn retry_in_a_minute<Q: DelayingInterface<&'static str>>(q: &Q, key: &'static str) {
///     q.add_after(key, Duration::from_secs(60));
/// }
/// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
/// retry_in_a_minute(&q, "a");
/// assert_eq!(Interface::len(&q), 0);
/// tokio::time::advance(Duration::from_secs(60)).await;
/// assert_eq!(Interface::len(&q), 1);
/// # }
/// ```
pub trait DelayingInterface<T>: Interface<T> {
    /// See [`DelayingQueue::add_after`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{DelayingInterface, Interface, RateLimitingQueue};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// DelayingInterface::add_after(&q, "a", Duration::from_secs(2));
    /// DelayingInterface::add_after(&q, "a", Duration::from_secs(1)); // earliest wins
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(Interface::len(&q), 1);
    /// # }
    /// ```
    fn add_after(&self, item: T, delay: Duration);
}

/// A queue with rate-limited adds (upstream's `TypedRateLimitingInterface`).
///
/// ```
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingInterface, RateLimitingQueue};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// /// The error arm of a reconcile switch, written against the trait.
/// fn on_error<Q: RateLimitingInterface<&'static str>>(q: &Q, key: &'static str) {
///     q.add_rate_limited(key);
/// }
/// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
/// on_error(&q, "a");
/// on_error(&q, "a");
/// assert_eq!(RateLimitingInterface::num_requeues(&q, &"a"), 2);
/// # }
/// ```
pub trait RateLimitingInterface<T>: DelayingInterface<T> {
    /// See [`RateLimitingQueue::add_rate_limited`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingInterface, RateLimitingQueue};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// RateLimitingInterface::add_rate_limited(&q, "a");
    /// assert_eq!(Interface::len(&q), 0); // waits 5ms
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// assert_eq!(Interface::len(&q), 1);
    /// # }
    /// ```
    fn add_rate_limited(&self, item: T);
    /// See [`RateLimitingQueue::forget`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingInterface, RateLimitingQueue};
    /// use std::time::Duration;
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// Interface::add(&q, "a");
    /// RateLimitingInterface::add_rate_limited(&q, "a");
    /// RateLimitingInterface::forget(&q, &"a");
    /// assert_eq!(RateLimitingInterface::num_requeues(&q, &"a"), 0);
    /// assert_eq!(Interface::len(&q), 1); // the queue is untouched
    /// ```
    fn forget(&self, item: &T);
    /// See [`RateLimitingQueue::num_requeues`].
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::rate_limiting_queue::{Interface, RateLimitingInterface, RateLimitingQueue};
    /// use std::time::Duration;
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// assert_eq!(RateLimitingInterface::num_requeues(&q, &"a"), 0);
    /// RateLimitingInterface::add_rate_limited(&q, "a");
    /// assert_eq!(RateLimitingInterface::num_requeues(&q, &"a"), 1);
    /// ```
    fn num_requeues(&self, item: &T) -> usize;
}

/// The plain queue has the basic contract too, as client-go's `Typed[T]`
/// implements `TypedInterface`.
impl<T: Item + Sync> Interface<T> for Queue<T> {
    fn add(&self, item: T) {
        Queue::add(self, item)
    }
    fn len(&self) -> usize {
        Queue::len(self)
    }
    fn get(&self) -> impl Future<Output = Option<T>> + Send {
        Queue::get(self)
    }
    fn done(&self, item: &T) {
        Queue::done(self, item)
    }
    fn shut_down(&self) {
        Queue::shut_down(self)
    }
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send {
        Queue::shut_down_with_drain(self)
    }
    fn shutting_down(&self) -> bool {
        Queue::shutting_down(self)
    }
}

impl<T: Item + Sync> Interface<T> for RateLimitingQueue<T> {
    fn add(&self, item: T) {
        RateLimitingQueue::add(self, item)
    }
    fn len(&self) -> usize {
        RateLimitingQueue::len(self)
    }
    fn get(&self) -> impl Future<Output = Option<T>> + Send {
        RateLimitingQueue::get(self)
    }
    fn done(&self, item: &T) {
        RateLimitingQueue::done(self, item)
    }
    fn shut_down(&self) {
        RateLimitingQueue::shut_down(self)
    }
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send {
        RateLimitingQueue::shut_down_with_drain(self)
    }
    fn shutting_down(&self) -> bool {
        RateLimitingQueue::shutting_down(self)
    }
}

impl<T: Item + Sync> DelayingInterface<T> for RateLimitingQueue<T> {
    fn add_after(&self, item: T, delay: Duration) {
        RateLimitingQueue::add_after(self, item, delay)
    }
}

impl<T: Item + Sync> RateLimitingInterface<T> for RateLimitingQueue<T> {
    fn add_rate_limited(&self, item: T) {
        RateLimitingQueue::add_rate_limited(self, item)
    }
    fn forget(&self, item: &T) {
        RateLimitingQueue::forget(self, item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        RateLimitingQueue::num_requeues(self, item)
    }
}
