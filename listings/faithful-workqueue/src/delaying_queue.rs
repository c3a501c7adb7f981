//! A queue whose items can be added later, mirroring client-go's
//! `util/workqueue/delaying_queue.go`.
//!
//! [`DelayingQueue::add_after`] keeps a *waiting* entry per item, separate from
//! the FIFO, and adds the item when its ready time comes:
//!
//! * a delay of zero adds at once;
//! * an item has at most one waiting entry; a second `add_after` keeps the
//!   earlier ready time and drops the later one;
//! * waiting entries and the FIFO are independent: `add_after(x, 1s)` then
//!   `add(x)` queues `x` now, and the waiting entry still adds `x` after 1s
//!   (a no-op if `x` is still dirty then);
//! * entries that come due together are added in ready-time order;
//! * after shutdown, waiting entries are never added.
//!
//! Time is tokio's clock ([`tokio::time::Instant`]), so a test or a listing
//! with a paused clock drives every delay without waiting.
//!
//! Upstream runs a goroutine that sleeps until the next ready time and then
//! calls `Add`. This port moves due entries into the FIFO at the start of every
//! call instead, and a waiting [`get`](DelayingQueue::get) sleeps until the
//! next ready time. What a caller can observe is the same, in the same order,
//! without a background task.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::default_rate_limiters::INF_DURATION;
use crate::hash::HashMap;
use crate::metrics::CounterMetric;
use crate::queue::{Item, LastLook, Lease, Queue, QueueConfig, TryGet};

/// One waiting entry. `seq` breaks ties between equal ready times (first come,
/// first added) and tells a live entry from one superseded by an earlier time.
struct Entry<T> {
    ready_at: Instant,
    seq: u64,
    item: T,
}

impl<T> Entry<T> {
    fn key(&self) -> (Instant, u64) {
        (self.ready_at, self.seq)
    }
}

// The heap orders entries by `(ready_at, seq)` only, which is unique per entry,
// so items need not be `Ord`.
impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

struct Waiting<T> {
    heap: BinaryHeap<Reverse<Entry<T>>>,
    /// The live entry of each waiting item: its ready time and sequence number.
    by_item: HashMap<T, (Instant, u64)>,
    next_seq: u64,
}

/// A [`Queue`] plus delayed adds; see the [module docs](self).
///
/// ```
/// use faithful_workqueue::delaying_queue::DelayingQueue;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = DelayingQueue::new();
/// q.add_after("a", Duration::from_secs(10));
/// q.add_after("a", Duration::from_secs(1)); // the earlier time wins
/// assert_eq!(q.len(), 0);
///
/// tokio::time::advance(Duration::from_secs(1)).await;
/// assert_eq!(q.len(), 1);
/// # }
/// ```
pub struct DelayingQueue<T> {
    queue: Queue<T>,
    waiting: Arc<Mutex<Waiting<T>>>,
    retries: Option<Arc<dyn CounterMetric>>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            waiting: self.waiting.clone(),
            retries: self.retries.clone(),
        }
    }
}

impl<T: Item> Default for DelayingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Item> DelayingQueue<T> {
    /// A delaying queue without metrics (upstream's `NewTypedDelayingQueue`).
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    ///
    /// let q: DelayingQueue<&str> = DelayingQueue::new();
    /// assert_eq!((q.len(), q.waiting_len()), (0, 0));
    /// ```
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A delaying queue with options (upstream's
    /// `NewTypedDelayingQueueWithConfig`). A named queue with a metrics
    /// provider also reports `workqueue_retries_total`.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::QueueConfig;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = DelayingQueue::with_config(QueueConfig::named("d").metrics_provider(metrics.clone()));
    /// q.add_after("a", Duration::ZERO);
    /// q.add_after("b", Duration::from_secs(1));
    /// assert_eq!(metrics.snapshot("d").retries, 2); // every add_after, zero delay included
    /// # }
    /// ```
    pub fn with_config(config: QueueConfig) -> Self {
        let retries = match (&config.metrics_provider, config.name.is_empty()) {
            (Some(provider), false) => {
                Some(provider.new_retries_metric(&config.name))
            }
            _ => None,
        };
        Self {
            queue: Queue::with_config(config),
            waiting: Arc::new(Mutex::new(Waiting {
                heap: BinaryHeap::new(),
                by_item: HashMap::default(),
                next_seq: 0,
            })),
            retries,
        }
    }

    /// Adds `item` once `delay` has passed; see the [module docs](self) for
    /// deduplication. Ignored after shutdown. Counts one retry in the metrics,
    /// whatever the delay, as upstream does. A delay beyond Go's longest
    /// `Duration` ([`INF_DURATION`], about 292 years) is cut to it.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add_after("a", Duration::from_secs(10));
    /// q.add_after("a", Duration::from_secs(1)); // earlier: replaces the 10s entry
    /// q.add_after("a", Duration::from_secs(5)); // later: dropped
    /// assert_eq!(q.waiting_len(), 1);
    /// q.add_after("now", Duration::ZERO); // added at once
    /// assert_eq!(q.len(), 1);
    ///
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!((q.len(), q.waiting_len()), (2, 0));
    /// # }
    /// ```
    pub fn add_after(&self, item: T, delay: Duration) {
        if self.queue.shutting_down() {
            return;
        }
        if let Some(retries) = &self.retries {
            retries.inc();
        }
        if delay.is_zero() {
            self.add(item);
            return;
        }
        // Go cannot express a longer delay than its longest Duration (and its
        // `Time.Add` saturates); cutting to it also keeps the addition below
        // from overflowing on `Duration::MAX`.
        let now = Instant::now();
        let ready_at = now + delay.min(INF_DURATION);
        let mut waiting = self.waiting.lock().unwrap();
        // Upstream's waiting loop moves due entries before it takes new ones.
        self.promote_due(&mut waiting, now);
        if let Some(&(existing, _)) = waiting.by_item.get(&item) {
            if ready_at >= existing {
                return;
            }
        }
        // A waiting `get` sleeps until the earliest ready time it saw (or
        // until woken, if it saw none): only a new earliest entry concerns it.
        let new_earliest =
            waiting.heap.peek().is_none_or(|head| ready_at < head.0.ready_at);
        let seq = waiting.next_seq;
        waiting.next_seq += 1;
        waiting.by_item.insert(item.clone(), (ready_at, seq));
        waiting.heap.push(Reverse(Entry { ready_at, seq, item }));
        drop(waiting);
        if new_earliest {
            // Upstream's AddAfter wakes its waiting loop the same way.
            self.queue.item_ready().notify_waiters();
        }
    }

    /// Moves every waiting entry whose time has come into the FIFO, in
    /// ready-time order, and returns the next ready time still waiting.
    fn flush_ready(&self) -> Option<Instant> {
        if self.queue.shutting_down() {
            return None;
        }
        let now = Instant::now();
        let mut waiting = self.waiting.lock().unwrap();
        self.promote_due(&mut waiting, now)
    }

    /// [`flush_ready`](Self::flush_ready) with the waiting lock held.
    fn promote_due(
        &self,
        waiting: &mut Waiting<T>,
        now: Instant,
    ) -> Option<Instant> {
        loop {
            let head = waiting.heap.peek()?;
            let (ready_at, seq) = (head.0.ready_at, head.0.seq);
            if ready_at > now {
                return Some(ready_at);
            }
            let Reverse(entry) = waiting.heap.pop().expect("peeked");
            let item = entry.item;
            // Skip entries superseded by an earlier ready time.
            if waiting.by_item.get(&item) == Some(&(ready_at, seq)) {
                waiting.by_item.remove(&item);
                self.queue
                    .add_at(std::borrow::Cow::Owned(item), Some(ready_at));
            }
        }
    }

    /// The number of waiting entries: those not yet due and, after shutdown,
    /// every entry still held (none of them will be added any more).
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add_after("a", Duration::from_secs(1));
    /// q.add_after("b", Duration::from_secs(2));
    /// assert_eq!((q.waiting_len(), q.len()), (2, 0));
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!((q.waiting_len(), q.len()), (1, 1));
    /// # }
    /// ```
    pub fn waiting_len(&self) -> usize {
        self.flush_ready();
        self.waiting.lock().unwrap().by_item.len()
    }

    /// [`Queue::add`], after moving due entries into the FIFO.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add_after("a", Duration::from_secs(1));
    /// q.add("a"); // queued now; the waiting entry stays
    /// assert_eq!((q.len(), q.waiting_len()), (1, 1));
    /// let a = q.get().await.unwrap();
    /// q.done(&a);
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(q.len(), 1); // the waiting entry adds "a" again
    /// # }
    /// ```
    pub fn add(&self, item: T) {
        self.flush_ready();
        self.queue.add(item);
    }

    /// [`Queue::len`]: the FIFO only. Waiting entries are not counted.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add("a");
    /// q.add_after("b", Duration::from_secs(1));
    /// assert_eq!(q.len(), 1); // "b" is waiting: not counted
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.flush_ready();
        self.queue.len()
    }

    /// Whether the FIFO is empty.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add_after("a", Duration::from_secs(1));
    /// assert!(q.is_empty());
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert!(!q.is_empty());
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`Queue::get`], waking up when a waiting entry comes due.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add_after("a", Duration::from_secs(5));
    /// let start = tokio::time::Instant::now();
    /// assert_eq!(q.get().await, Some("a")); // sleeps until "a" is due
    /// assert_eq!(start.elapsed(), Duration::from_secs(5));
    /// # }
    /// ```
    pub async fn get(&self) -> Option<T> {
        loop {
            // Most gets find an item: they need not register as a waiter.
            self.flush_ready();
            match self.queue.try_get() {
                TryGet::Item(item) => return Some(item),
                TryGet::ShutDown => return None,
                TryGet::Empty => {}
            }
            // Register interest, then look again, so that an add between the
            // first look and the wait is not missed.
            let mut notified =
                std::pin::pin!(self.queue.item_ready().notified());
            notified.as_mut().enable();
            let next_ready = self.flush_ready();
            match self.queue.last_look() {
                LastLook::Item(item) => return Some(item),
                LastLook::ShutDown => return None,
                LastLook::Sleep(_sleeping) => match next_ready {
                    Some(at) => {
                        tokio::select! {
                            () = &mut notified => {}
                            () = tokio::time::sleep_until(at) => {}
                        }
                    }
                    None => notified.await,
                },
            }
        }
    }

    /// [`Queue::lease`]: [`get`](DelayingQueue::get), with `done` on drop.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add_after("a", Duration::from_secs(1));
    /// let lease = q.lease().await.unwrap();
    /// q.add("a");
    /// assert_eq!(q.len(), 0); // dirty while leased
    /// drop(lease);
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub async fn lease(&self) -> Option<Lease<T>> {
        let item = self.get().await?;
        Some(Lease::new(self.queue.clone(), item))
    }

    /// [`Queue::done`].
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add("a");
    /// let a = q.get().await.unwrap();
    /// q.add_after(a, Duration::from_secs(1));
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(q.len(), 0); // due, but "a" is processing: marked dirty only
    /// q.done(&a);
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub fn done(&self, item: &T) {
        self.flush_ready();
        self.queue.done(item);
    }

    /// [`Queue::shut_down`]. Waiting entries are never added after this.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add("a");
    /// q.add_after("b", Duration::from_secs(1));
    /// q.shut_down();
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(q.get().await, Some("a")); // the FIFO is still handed out
    /// assert_eq!(q.get().await, None); // "b" never arrives
    /// # }
    /// ```
    pub fn shut_down(&self) {
        self.flush_ready();
        self.queue.shut_down();
    }

    /// [`Queue::shut_down_with_drain`]: waits for handed-out items only.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add("a");
    /// let a = q.get().await.unwrap();
    /// q.add_after("b", Duration::from_secs(60));
    /// let drain = tokio::spawn({
    ///     let q = q.clone();
    ///     async move { q.shut_down_with_drain().await }
    /// });
    /// tokio::task::yield_now().await;
    /// assert!(!drain.is_finished()); // waits for "a" ...
    /// q.done(&a);
    /// drain.await.unwrap(); // ... and not for the waiting "b"
    /// # }
    /// ```
    pub async fn shut_down_with_drain(&self) {
        self.flush_ready();
        self.queue.shut_down_with_drain().await;
    }

    /// [`Queue::shutting_down`].
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// let q = DelayingQueue::new();
    /// q.add_after("a", Duration::from_secs(1));
    /// assert!(!q.shutting_down());
    /// q.shut_down();
    /// assert!(q.shutting_down());
    /// ```
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }

    /// The underlying [`Queue`], for [`Queue::debug_state`] and the metrics
    /// refresh. Adding to it directly bypasses nothing: waiting entries are
    /// still moved in by this queue's own calls.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = DelayingQueue::new();
    /// q.add("b");
    /// q.add_after("a", Duration::from_secs(1));
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(q.queue().debug_state().fifo, ["b", "a"]); // due entries moved in first
    /// # }
    /// ```
    pub fn queue(&self) -> &Queue<T> {
        self.flush_ready();
        &self.queue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A limiter without a cap (or a refused bucket reservation) can ask for
    /// `Duration::MAX`; the queue waits for ever instead of panicking on the
    /// `Instant` overflow.
    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn the_longest_delay_waits_instead_of_overflowing() {
        let q = DelayingQueue::new();
        q.add_after("never", Duration::MAX);
        q.add_after("go-inf", INF_DURATION);
        assert_eq!(q.waiting_len(), 2);
        tokio::time::advance(Duration::from_secs(100 * 365 * 24 * 3600)).await;
        assert_eq!((q.len(), q.waiting_len()), (0, 2));
    }
}
