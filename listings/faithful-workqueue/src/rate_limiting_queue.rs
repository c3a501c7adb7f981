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
        Self { queue: self.queue.clone(), rate_limiter: self.rate_limiter.clone() }
    }
}

impl<T: Item> RateLimitingQueue<T> {
    /// A rate-limiting queue without metrics (upstream's
    /// `NewTypedRateLimitingQueue`).
    pub fn new(rate_limiter: impl RateLimiter<T> + 'static) -> Self {
        Self::with_config(rate_limiter, QueueConfig::default())
    }

    /// A rate-limiting queue with options (upstream's
    /// `NewTypedRateLimitingQueueWithConfig`).
    pub fn with_config(rate_limiter: impl RateLimiter<T> + 'static, config: QueueConfig) -> Self {
        Self { queue: DelayingQueue::with_config(config), rate_limiter: Arc::new(rate_limiter) }
    }

    /// Adds `item` after the delay the limiter gives it, counting one failure.
    /// The limiter is asked first, so after shutdown the failure is still
    /// counted though nothing is added, as upstream.
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.rate_limiter.when(&item);
        self.queue.add_after(item, delay);
    }

    /// Tells the limiter that `item` is finished being retried: its failure
    /// count goes back to zero. This only clears the limiter; the item's place
    /// in the queue is untouched, and you still have to call
    /// [`done`](RateLimitingQueue::done).
    pub fn forget(&self, item: &T) {
        self.rate_limiter.forget(item);
    }

    /// How many times `item` has been rate-limited since it was last forgotten.
    pub fn num_requeues(&self, item: &T) -> usize {
        self.rate_limiter.num_requeues(item)
    }

    /// [`DelayingQueue::add_after`].
    pub fn add_after(&self, item: T, delay: Duration) {
        self.queue.add_after(item, delay);
    }

    /// [`Queue::add`].
    pub fn add(&self, item: T) {
        self.queue.add(item);
    }

    /// [`Queue::len`]: the FIFO only.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether the FIFO is empty.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// [`Queue::get`].
    pub async fn get(&self) -> Option<T> {
        self.queue.get().await
    }

    /// [`Queue::lease`]: the item comes with `done` on drop.
    pub async fn lease(&self) -> Option<Lease<T>> {
        self.queue.lease().await
    }

    /// [`Queue::done`].
    pub fn done(&self, item: &T) {
        self.queue.done(item);
    }

    /// [`Queue::shut_down`].
    pub fn shut_down(&self) {
        self.queue.shut_down();
    }

    /// [`Queue::shut_down_with_drain`].
    pub async fn shut_down_with_drain(&self) {
        self.queue.shut_down_with_drain().await;
    }

    /// [`Queue::shutting_down`].
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }

    /// The number of entries waiting for their ready time.
    pub fn waiting_len(&self) -> usize {
        self.queue.waiting_len()
    }

    /// The underlying [`Queue`] (for [`Queue::debug_state`] and metrics).
    pub fn queue(&self) -> &Queue<T> {
        self.queue.queue()
    }
}

/// The basic queue contract (upstream's `TypedInterface`).
pub trait Interface<T>: Send + Sync {
    /// See [`Queue::add`].
    fn add(&self, item: T);
    /// See [`Queue::len`].
    fn len(&self) -> usize;
    /// See [`Queue::get`].
    fn get(&self) -> impl Future<Output = Option<T>> + Send;
    /// See [`Queue::done`].
    fn done(&self, item: &T);
    /// See [`Queue::shut_down`].
    fn shut_down(&self);
    /// See [`Queue::shut_down_with_drain`].
    fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send;
    /// See [`Queue::shutting_down`].
    fn shutting_down(&self) -> bool;
}

/// A queue with delayed adds (upstream's `TypedDelayingInterface`).
pub trait DelayingInterface<T>: Interface<T> {
    /// See [`DelayingQueue::add_after`].
    fn add_after(&self, item: T, delay: Duration);
}

/// A queue with rate-limited adds (upstream's `TypedRateLimitingInterface`).
pub trait RateLimitingInterface<T>: DelayingInterface<T> {
    /// See [`RateLimitingQueue::add_rate_limited`].
    fn add_rate_limited(&self, item: T);
    /// See [`RateLimitingQueue::forget`].
    fn forget(&self, item: &T);
    /// See [`RateLimitingQueue::num_requeues`].
    fn num_requeues(&self, item: &T) -> usize;
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
