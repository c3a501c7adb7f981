//! The basic work queue, mirroring client-go's `util/workqueue/queue.go`
//! (`Typed[T]`).
//!
//! Three collections, one lock:
//!
//! * the **FIFO** (upstream's `queue`): the order in which items are handed out;
//! * the **dirty set**: every item that needs processing. Every item in the FIFO
//!   is dirty; an item can also be dirty while it is being processed;
//! * the **processing set**: items handed out by [`Queue::get`] whose
//!   [`Queue::done`] has not come yet.
//!
//! The contract that follows, and that the book measures:
//!
//! * an item is never processed by two workers at once: adding an item that is
//!   being processed only marks it dirty, and [`Queue::done`] puts it back in
//!   the FIFO;
//! * an item is in the FIFO at most once: adding a dirty item does nothing;
//! * [`Queue::len`] counts the FIFO only;
//! * an item whose `done` never comes is never handed out again, whatever is
//!   added: the *silent stall* of chapter 05. [`Queue::lease`] hands out a
//!   [`Lease`] whose `Drop` calls `done`, so the stall takes an explicit leak.
//!
//! Items are cloned into the FIFO and the sets, so use a key that is cheap to
//! clone: a small `Copy` type, or a shared string rather than `String` (a
//! steady add/get/done cycle on an `Arc<str>` key does not allocate). For
//! string keys prefer [`SharedKey`](crate::key::SharedKey): an `Arc<str>`
//! that also compares as Go's strings do, by address before bytes, so that
//! finding a key the queue holds reads no string.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::hash::{BuildHasher, Hash};
use std::pin::pin;
use std::sync::{Arc, Weak};

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::hash::{HashTable, Hasher};
use crate::metrics::{
    DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD, MetricsProvider, QueueMetrics,
};
use crate::sync::{Mutex, MutexGuard};

/// The bounds every queue item satisfies: upstream's `comparable`, plus `Send`
/// so that queues can be shared between tokio tasks.
///
/// ```
/// use faithful_workqueue::queue::{Item, Queue};
/// use std::sync::Arc;
///
/// fn is_item<T: Item>() {}
/// is_item::<u64>();
/// is_item::<(String, u32)>();
/// is_item::<Arc<str>>(); // a key that is cheap to clone
/// is_item::<faithful_workqueue::key::SharedKey>(); // ... and to compare
///
/// let q: Queue<Arc<str>> = Queue::new();
/// q.add(Arc::from("default/web"));
/// assert_eq!(q.len(), 1);
/// ```
pub trait Item: Clone + Eq + Hash + Send + 'static {}
impl<T: Clone + Eq + Hash + Send + 'static> Item for T {}

/// Options of a [`Queue`] (upstream's `QueueConfig`).
///
/// ```
/// use faithful_workqueue::queue::QueueConfig;
///
/// let config = QueueConfig::default();
/// assert!(config.name.is_empty()); // unnamed ...
/// assert!(config.metrics_provider.is_none()); // ... and reporting nothing
/// ```
#[derive(Clone, Default)]
pub struct QueueConfig {
    /// The queue's name. Metrics are reported only for a named queue.
    pub name: String,
    /// Where metrics go. `None` (the default) reports nothing.
    pub metrics_provider: Option<Arc<dyn MetricsProvider>>,
}

impl QueueConfig {
    /// A config with a name and no metrics provider.
    ///
    /// ```
    /// use faithful_workqueue::queue::QueueConfig;
    ///
    /// let config = QueueConfig::named("pods");
    /// assert_eq!(config.name, "pods");
    /// assert!(config.metrics_provider.is_none());
    /// ```
    pub fn named(name: impl Into<String>) -> Self {
        Self { name: name.into(), metrics_provider: None }
    }

    /// Sets the metrics provider.
    ///
    /// ```
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::{Queue, QueueConfig};
    /// use std::sync::Arc;
    ///
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = Queue::with_config(QueueConfig::named("pods").metrics_provider(metrics.clone()));
    /// q.add("default/web");
    /// assert_eq!(metrics.snapshot("pods").adds, 1);
    /// ```
    pub fn metrics_provider(
        mut self,
        provider: Arc<dyn MetricsProvider>,
    ) -> Self {
        self.metrics_provider = Some(provider);
        self
    }
}

/// Where one item is. An item with neither flag is not stored at all.
#[derive(Clone, Copy, Default)]
struct Flags {
    dirty: bool,
    processing: bool,
}

/// An item of the dirty or processing set, with its flags.
struct Slot<T> {
    item: T,
    flags: Flags,
}

/// An item in the FIFO, with its hash, so that `get` finds its slot without
/// hashing it again.
struct Queued<T> {
    item: T,
    hash: u64,
}

/// The queue's state, behind its lock.
///
/// Aligned to 128 bytes (two cache lines: the adjacent-line prefetcher moves
/// them in pairs), so that no other data shares its lines; in particular not
/// the lock's own word, which a waiting thread keeps reading (each read
/// pulls a copy of the line to the waiter's core, and the holder's next write
/// there must take it back) while the holder works here.
#[repr(align(128))]
struct State<T> {
    fifo: VecDeque<Queued<T>>,
    /// The dirty and processing sets, stored as one table of flags so that an
    /// add, get and done on a seen key touch one slot and allocate nothing.
    /// The table holds no hasher: the caller hashes before taking the lock
    /// (with [`Inner::hasher`]) and passes the hash in.
    items: HashTable<Slot<T>>,
    processing_len: usize,
    /// Gets that found the FIFO empty and sleep on `item_ready`: an add wakes
    /// one only when there is one, so that a busy queue's adds write nothing
    /// outside the lock (tokio's `notify_one` stores a permit otherwise).
    sleeping_gets: usize,
    shutting_down: bool,
    drain: bool,
    metrics: Option<QueueMetrics<T>>,
}

struct Inner<T> {
    /// Hashes items outside the lock: add and done hash their item before they
    /// take it, so the lock is held only to find and change the slot.
    hasher: Hasher,
    state: Mutex<State<T>>,
    /// Wakes one sleeping [`Queue::get`] per item pushed while one sleeps; all
    /// of them on shutdown.
    item_ready: Notify,
    /// Wakes [`Queue::shut_down_with_drain`] when the processing set empties.
    processing_empty: Notify,
}

/// What a non-blocking get found.
pub(crate) enum TryGet<T> {
    Item(T),
    ShutDown,
    Empty,
}

/// What [`Queue::last_look`] found.
pub(crate) enum LastLook<'a, T: Item> {
    Item(T),
    ShutDown,
    /// Nothing: sleep on `item_ready` while holding the guard.
    Sleep(SleepingGet<'a, T>),
}

/// A get counted as sleeping, until it drops (woken, timed out or cancelled).
pub(crate) struct SleepingGet<'a, T: Item> {
    queue: &'a Queue<T>,
}

impl<T: Item> Drop for SleepingGet<'_, T> {
    fn drop(&mut self) {
        // Not `state()`: this may run while a panic unwinds, where a second
        // panic over a poisoned lock would abort.
        let mut state = self
            .queue
            .inner
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.sleeping_gets -= 1;
    }
}

/// A FIFO work queue with dirty and processing sets; see the [module
/// docs](self) for the contract.
///
/// `Queue` is a handle: clones share one queue.
///
/// ```
/// use faithful_workqueue::queue::Queue;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let q = Queue::new();
/// q.add("a");
/// q.add("a"); // deduplicated
/// assert_eq!(q.len(), 1);
///
/// let item = q.get().await.unwrap(); // "a" is now processing
/// q.add("a"); // goes to the dirty set only
/// assert_eq!(q.len(), 0);
/// q.done(&item); // ... and back into the FIFO
/// assert_eq!(q.len(), 1);
/// # }
/// ```
pub struct Queue<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Self { inner: self.inner.clone() }
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock().unwrap();
        f.debug_struct("Queue")
            .field("len", &state.fifo.len())
            .field("processing", &state.processing_len)
            .field("shutting_down", &state.shutting_down)
            .finish_non_exhaustive()
    }
}

impl<T: Item> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Item> Queue<T> {
    /// A queue without metrics (upstream's `NewTyped`).
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// let q: Queue<u32> = Queue::new();
    /// assert!(q.is_empty());
    /// assert!(!q.shutting_down());
    /// ```
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A queue with options (upstream's `NewTypedWithConfig`).
    ///
    /// When the config has both a name and a metrics provider, the queue
    /// refreshes its unfinished-work gauges every 500ms on a tokio task until it
    /// shuts down. That task needs a tokio runtime; outside one the gauges are
    /// refreshed only by [`Queue::update_unfinished_work`].
    ///
    /// ```
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::{Queue, QueueConfig};
    /// use std::sync::Arc;
    ///
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let unnamed = Queue::with_config(QueueConfig::default().metrics_provider(metrics.clone()));
    /// unnamed.add("a");
    /// assert_eq!(metrics.snapshot("").adds, 0); // no name: no metrics
    ///
    /// let named = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
    /// named.add("a");
    /// assert_eq!(metrics.snapshot("q").adds, 1);
    /// ```
    pub fn with_config(config: QueueConfig) -> Self {
        let metrics = match (&config.metrics_provider, config.name.is_empty()) {
            (Some(provider), false) => {
                Some(QueueMetrics::new(&config.name, provider.as_ref()))
            }
            _ => None,
        };
        let with_metrics = metrics.is_some();
        let queue = Self {
            inner: Arc::new(Inner {
                hasher: Hasher::default(),
                state: Mutex::new(State {
                    fifo: VecDeque::new(),
                    items: HashTable::new(),
                    processing_len: 0,
                    sleeping_gets: 0,
                    shutting_down: false,
                    drain: false,
                    metrics,
                }),
                item_ready: Notify::new(),
                processing_empty: Notify::new(),
            }),
        };
        if with_metrics && tokio::runtime::Handle::try_current().is_ok() {
            // The ticker starts now, as upstream's does in the constructor.
            let ticker = unfinished_work_ticker();
            tokio::spawn(update_unfinished_work_loop(
                Arc::downgrade(&queue.inner),
                ticker,
            ));
        }
        queue
    }

    #[inline]
    fn state(&self) -> MutexGuard<'_, State<T>> {
        self.inner.state.lock().unwrap()
    }

    /// Marks `item` as needing processing.
    ///
    /// * after [`shut_down`](Queue::shut_down): ignored;
    /// * already dirty: nothing happens (deduplication);
    /// * being processed: marked dirty only, and re-queued by [`done`](Queue::done);
    /// * otherwise: pushed to the back of the FIFO, waking one waiting `get`.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = Queue::new();
    /// q.add("a");
    /// q.add("b");
    /// q.add("a"); // already dirty: nothing happens
    /// assert_eq!(q.len(), 2);
    /// assert_eq!(q.get().await, Some("a")); // FIFO order
    ///
    /// q.shut_down();
    /// q.add("c"); // ignored
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub fn add(&self, item: T) {
        self.add_at(Cow::Owned(item), None);
    }

    /// [`add`](Queue::add) for a key the caller keeps: the queue clones it
    /// only when it stores it (a key it does not hold yet). An add that is
    /// deduplicated, or that only marks a key being processed, clones
    /// nothing. With `Arc<str>` keys that saves the reference count's two
    /// atomic read-modify-writes, an increment for the clone and a decrement
    /// for the drop, which `add(key.clone())` pays even when the queue keeps
    /// nothing. Go's `Add` copies a string header instead; this is the Rust
    /// call that costs as little.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    /// use std::sync::Arc;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let key: Arc<str> = Arc::from("default/pod-a");
    /// let q = Queue::new();
    /// q.add_ref(&key); // stored: one clone for the dirty set, one for the FIFO
    /// assert_eq!(Arc::strong_count(&key), 3);
    /// q.add_ref(&key); // already dirty: no clone
    /// assert_eq!(Arc::strong_count(&key), 3);
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub fn add_ref(&self, item: &T) {
        self.add_at(Cow::Borrowed(item), None);
    }

    /// [`add`](Queue::add), with the time the item counts as added for the
    /// queue-latency metric (the delaying queue passes the item's ready time;
    /// `None` is now). The clock is read only when there are metrics. The
    /// item is cloned only where the queue stores it.
    pub(crate) fn add_at(&self, item: Cow<'_, T>, added_at: Option<Instant>) {
        let hasher = &self.inner.hasher;
        let hash = hasher.hash_one(&*item);
        let mut state = self.state();
        if state.shutting_down {
            return;
        }
        let st = &mut *state;
        // One probe whatever happens. A deduplicated item is dropped after the
        // lock is released (parameters drop after locals).
        match st.items.find_mut(hash, |slot| slot.item == *item) {
            Some(slot) => {
                if slot.flags.dirty {
                    return; // deduplicated
                }
                // A slot that is not dirty is being processed: mark it, and
                // `done` re-queues it.
                slot.flags.dirty = true;
                if let Some(metrics) = st.metrics.as_mut() {
                    metrics.add(
                        &slot.item,
                        0,
                        added_at.unwrap_or_else(Instant::now),
                    );
                }
            }
            None => {
                if let Some(metrics) = st.metrics.as_mut() {
                    metrics.add(
                        &*item,
                        0,
                        added_at.unwrap_or_else(Instant::now),
                    );
                }
                let slot = Slot {
                    item: (*item).clone(),
                    flags: Flags { dirty: true, processing: false },
                };
                st.items.insert_unique(hash, slot, |slot| {
                    hasher.hash_one(&slot.item)
                });
                st.fifo.push_back(Queued { item: item.into_owned(), hash });
                let wake = st.sleeping_gets > 0;
                drop(state);
                if wake {
                    self.inner.item_ready.notify_one();
                }
            }
        }
    }

    /// The number of items waiting in the FIFO. Items being processed, and
    /// items re-added while being processed, are not counted.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = Queue::new();
    /// q.add("a");
    /// q.add("b");
    /// let a = q.get().await.unwrap();
    /// assert_eq!(q.len(), 1); // "a" is processing: not counted
    /// q.add(a);
    /// assert_eq!(q.len(), 1); // dirty while processing: still not counted
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.state().fifo.len()
    }

    /// Whether the FIFO is empty.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = Queue::new();
    /// assert!(q.is_empty());
    /// q.add("a");
    /// let _a = q.get().await.unwrap();
    /// assert!(q.is_empty()); // an item being processed is not in the FIFO
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits for an item and hands it out, moving it from the dirty set to the
    /// processing set. The caller owes the queue a [`done`](Queue::done).
    ///
    /// After [`shut_down`](Queue::shut_down), `get` keeps handing out what is
    /// still in the FIFO, and returns `None` once it is empty.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = Queue::new();
    /// q.add("a");
    /// q.add("b");
    /// assert_eq!(q.get().await, Some("a"));
    /// q.shut_down();
    /// assert_eq!(q.get().await, Some("b")); // what is left is still handed out
    /// assert_eq!(q.get().await, None);
    /// # }
    /// ```
    pub async fn get(&self) -> Option<T> {
        loop {
            // Most gets find an item: they need not register as a waiter.
            match self.try_get() {
                TryGet::Item(item) => return Some(item),
                TryGet::ShutDown => return None,
                TryGet::Empty => {}
            }
            // Register interest, then look again, so an add between the first
            // look and the wait is not missed.
            let mut notified = pin!(self.inner.item_ready.notified());
            notified.as_mut().enable();
            match self.last_look() {
                LastLook::Item(item) => return Some(item),
                LastLook::ShutDown => return None,
                LastLook::Sleep(_sleeping) => notified.await,
            }
        }
    }

    /// Like [`get`](Queue::get), but the item comes in a [`Lease`] whose `Drop`
    /// calls [`done`](Queue::done).
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let q = Queue::new();
    /// q.add("a");
    /// {
    ///     let lease = q.lease().await.unwrap();
    ///     q.add(*lease.item()); // dirty while processing
    ///     assert_eq!(q.len(), 0);
    /// } // the lease drops here: done("a")
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub async fn lease(&self) -> Option<Lease<T>> {
        self.get().await.map(|item| Lease::new(self.clone(), item))
    }

    /// Hands out the head of the FIFO if there is one, without waiting.
    pub(crate) fn try_get(&self) -> TryGet<T> {
        self.take_head(&mut self.state())
    }

    /// The look a `get` takes after registering on
    /// [`item_ready`](Queue::item_ready) and before it sleeps there: if the
    /// FIFO is empty, the caller counts as sleeping (so that adds wake it)
    /// until the returned guard drops. Counting happens under the same lock as
    /// the look, so no add falls between them.
    pub(crate) fn last_look(&self) -> LastLook<'_, T> {
        let mut state = self.state();
        match self.take_head(&mut state) {
            TryGet::Item(item) => LastLook::Item(item),
            TryGet::ShutDown => LastLook::ShutDown,
            TryGet::Empty => {
                state.sleeping_gets += 1;
                LastLook::Sleep(SleepingGet { queue: self })
            }
        }
    }

    fn take_head(&self, st: &mut State<T>) -> TryGet<T> {
        let Some(Queued { item, hash }) = st.fifo.pop_front() else {
            return if st.shutting_down {
                TryGet::ShutDown
            } else {
                TryGet::Empty
            };
        };
        if let Some(metrics) = st.metrics.as_mut() {
            metrics.get(&item, 0, Instant::now());
        }
        if let Some(slot) = st.items.find_mut(hash, |slot| slot.item == item) {
            if !slot.flags.processing {
                slot.flags.processing = true;
                st.processing_len += 1;
            }
            slot.flags.dirty = false;
        } else {
            // An item in the FIFO is normally dirty, so its slot exists; `done`
            // on a queued item can push a duplicate whose slot is gone by now.
            let slot = Slot {
                item: item.clone(),
                flags: Flags { dirty: false, processing: true },
            };
            let hasher = &self.inner.hasher;
            st.items
                .insert_unique(hash, slot, |slot| hasher.hash_one(&slot.item));
            st.processing_len += 1;
        }
        TryGet::Item(item)
    }

    /// The future a waiting `get` of a wrapping queue listens to.
    pub(crate) fn item_ready(&self) -> &Notify {
        &self.inner.item_ready
    }

    /// Marks `item` as finished. If it was added again while being processed,
    /// it goes back into the FIFO now.
    ///
    /// Upstream does not check that the item was being processed: `done` on an
    /// item that is only queued pushes it a second time. This port keeps that.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = Queue::new();
    /// q.add("a");
    /// let a = q.get().await.unwrap();
    /// q.add(a); // dirty while processing
    /// assert_eq!(q.len(), 0);
    /// q.done(&a); // re-queued now
    /// assert_eq!(q.len(), 1);
    ///
    /// let a = q.get().await.unwrap();
    /// q.done(&a); // not dirty: simply finished
    /// assert!(q.is_empty());
    ///
    /// q.add("b");
    /// q.done(&"b"); // "b" was only queued: it is pushed a second time
    /// assert_eq!(q.len(), 2);
    /// # }
    /// ```
    pub fn done(&self, item: &T) {
        let hash = self.inner.hasher.hash_one(item);
        // The slot's own copy of a finished item, dropped after the lock is
        // released (it is declared before the guard).
        let _finished: Option<Slot<T>>;
        let mut state = self.state();
        if let Some(metrics) = state.metrics.as_mut() {
            metrics.done(item, Instant::now());
        }
        let st = &mut *state;
        let requeue = match st.items.find_entry(hash, |slot| slot.item == *item)
        {
            Ok(mut entry) => {
                let flags = &mut entry.get_mut().flags;
                let was_processing = std::mem::take(&mut flags.processing);
                let dirty = flags.dirty;
                if was_processing {
                    st.processing_len -= 1;
                }
                _finished = if dirty { None } else { Some(entry.remove().0) };
                dirty
            }
            Err(_) => {
                _finished = None;
                false
            }
        };
        let wake = requeue && st.sleeping_gets > 0;
        if requeue {
            st.fifo.push_back(Queued { item: item.clone(), hash });
        }
        // Upstream wakes a single condition variable here, which a draining
        // shutdown also waits on; so a drain ends even when the last done
        // re-queues a dirty item. Only a drain waits for the processing set to
        // empty, and it sets `drain` under the lock before it looks: without
        // one, there is nobody to wake.
        let emptied = st.processing_len == 0 && st.drain;
        drop(state);
        if wake {
            self.inner.item_ready.notify_one();
        }
        if emptied {
            self.inner.processing_empty.notify_waiters();
        }
    }

    /// Stops the queue: later adds are ignored, and every waiting
    /// [`get`](Queue::get) wakes up (to take what is left, or `None`).
    /// Calling it again is harmless.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q: Queue<&str> = Queue::new();
    /// let waiter = tokio::spawn({
    ///     let q = q.clone();
    ///     async move { q.get().await }
    /// });
    /// tokio::task::yield_now().await; // the waiter is blocked in get
    /// q.shut_down();
    /// assert_eq!(waiter.await.unwrap(), None);
    /// q.shut_down(); // harmless
    /// q.add("a"); // ignored
    /// assert!(q.is_empty());
    /// # }
    /// ```
    pub fn shut_down(&self) {
        let mut state = self.state();
        state.drain = false;
        state.shutting_down = true;
        drop(state);
        self.inner.item_ready.notify_waiters();
        self.inner.processing_empty.notify_waiters();
    }

    /// Like [`shut_down`](Queue::shut_down), then waits until every handed-out
    /// item is [`done`](Queue::done). It waits for the processing set only, not
    /// for the FIFO; a worker that never calls `done` makes it wait forever, and
    /// a plain `shut_down` ends the wait.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = Queue::new();
    /// q.add("a");
    /// q.add("b");
    /// let a = q.get().await.unwrap(); // "a" processing, "b" still queued
    /// let drain = tokio::spawn({
    ///     let q = q.clone();
    ///     async move { q.shut_down_with_drain().await }
    /// });
    /// tokio::task::yield_now().await;
    /// assert!(!drain.is_finished()); // waits for "a" ...
    /// q.done(&a);
    /// drain.await.unwrap(); // ... but not for "b"
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub async fn shut_down_with_drain(&self) {
        {
            let mut state = self.state();
            state.drain = true;
            state.shutting_down = true;
        }
        self.inner.item_ready.notify_waiters();
        loop {
            let mut emptied = pin!(self.inner.processing_empty.notified());
            emptied.as_mut().enable();
            {
                let state = self.state();
                if state.processing_len == 0 || !state.drain {
                    return;
                }
            }
            emptied.await;
        }
    }

    /// Whether [`shut_down`](Queue::shut_down) has been called.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// let q: Queue<u32> = Queue::new();
    /// assert!(!q.shutting_down());
    /// q.shut_down();
    /// assert!(q.shutting_down());
    /// ```
    pub fn shutting_down(&self) -> bool {
        self.state().shutting_down
    }

    /// Recomputes `workqueue_unfinished_work_seconds` and
    /// `workqueue_longest_running_processor_seconds` now. A queue with metrics
    /// does this every 500ms by itself; call it to read the gauges at an exact
    /// moment.
    ///
    /// ```
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::{Queue, QueueConfig};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
    /// q.add("a");
    /// q.add("b");
    /// let _a = q.get().await.unwrap();
    /// tokio::time::advance(Duration::from_secs(3)).await;
    /// let _b = q.get().await.unwrap();
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// q.update_unfinished_work();
    /// let s = metrics.snapshot("q");
    /// assert_eq!(s.unfinished_work_seconds, 5.0); // 4s + 1s
    /// assert_eq!(s.longest_running_processor_seconds, 4.0);
    /// # }
    /// ```
    pub fn update_unfinished_work(&self) {
        let state = self.state();
        if let Some(metrics) = state.metrics.as_ref() {
            metrics.update_unfinished_work(Instant::now());
        }
    }

    /// A snapshot of the three collections, for teaching and debugging: the
    /// FIFO in order, then the dirty and processing sets as given by `sort`.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = Queue::new();
    /// q.add("b");
    /// q.add("a");
    /// let b = q.get().await.unwrap();
    /// q.add(b);
    /// let s = q.debug_state();
    /// assert_eq!(s.fifo, ["a"]);
    /// assert_eq!(s.dirty, ["a", "b"]); // "b" was re-added while processing
    /// assert_eq!(s.processing, ["b"]);
    /// # }
    /// ```
    pub fn debug_state(&self) -> QueueState<T>
    where
        T: Ord,
    {
        let state = self.state();
        let mut dirty: Vec<T> = state
            .items
            .iter()
            .filter(|s| s.flags.dirty)
            .map(|s| s.item.clone())
            .collect();
        let mut processing: Vec<T> = state
            .items
            .iter()
            .filter(|s| s.flags.processing)
            .map(|s| s.item.clone())
            .collect();
        dirty.sort();
        processing.sort();
        QueueState {
            fifo: state.fifo.iter().map(|queued| queued.item.clone()).collect(),
            dirty,
            processing,
        }
    }
}

/// The contents of a [`Queue`] at one moment; see [`Queue::debug_state`].
///
/// ```
/// use faithful_workqueue::queue::{Queue, QueueState};
///
/// let q = Queue::new();
/// q.add(2);
/// q.add(1);
/// let want = QueueState { fifo: vec![2, 1], dirty: vec![1, 2], processing: vec![] };
/// assert_eq!(q.debug_state(), want);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueState<T> {
    /// The FIFO, head first.
    pub fifo: Vec<T>,
    /// The dirty set, sorted.
    pub dirty: Vec<T>,
    /// The processing set, sorted.
    pub processing: Vec<T>,
}

/// A 500ms ticker whose first tick is one period from now.
pub(crate) fn unfinished_work_ticker() -> tokio::time::Interval {
    let period = DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD;
    let mut ticker = tokio::time::interval_at(Instant::now() + period, period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker
}

async fn update_unfinished_work_loop<T: Item>(
    queue: Weak<Inner<T>>,
    mut ticker: tokio::time::Interval,
) {
    loop {
        ticker.tick().await;
        let Some(inner) = queue.upgrade() else { return };
        let queue = Queue { inner };
        if queue.shutting_down() {
            return;
        }
        queue.update_unfinished_work();
    }
}

/// An item handed out by [`Queue::lease`]: the queue's promise that the item is
/// processed by nobody else, and the holder's promise to call `done`, kept by
/// `Drop`.
///
/// Dropping the lease, returning early with `?`, or unwinding from a panic all
/// call [`Queue::done`] exactly once. [`Lease::done`] does it explicitly and
/// consumes the lease, so a second `lease.done()` does not compile. The
/// lease does not stop [`Queue::done`] itself: `queue.done(lease.item())`
/// compiles, and the lease's `Drop` then calls `done` a second time, so
/// finish a leased item through its lease only. The only ways to reproduce
/// the silent stall are to leak the lease (`std::mem::forget`, `Box::leak`,
/// a reference cycle) or to keep it alive forever.
///
/// ```
/// use faithful_workqueue::queue::Queue;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = Queue::new();
/// q.add("a");
/// let lease = q.lease().await.unwrap();
/// assert_eq!(*lease, "a"); // derefs to the item
/// q.add("a");
/// assert_eq!(q.len(), 0); // nobody else gets "a" while it is leased
/// drop(lease); // done("a"): the dirty copy is queued
/// assert_eq!(q.len(), 1);
/// # }
/// ```
#[must_use = "dropping the lease at once calls done: hold it while you process the item"]
pub struct Lease<T: Item> {
    queue: Queue<T>,
    item: Option<T>,
}

impl<T: Item> Lease<T> {
    pub(crate) fn new(queue: Queue<T>, item: T) -> Self {
        Self { queue, item: Some(item) }
    }

    /// The leased item.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = Queue::new();
    /// q.add("a");
    /// let lease = q.lease().await.unwrap();
    /// assert_eq!(lease.item(), &"a");
    /// # }
    /// ```
    pub fn item(&self) -> &T {
        self.item.as_ref().expect("a lease holds its item until it is dropped")
    }

    /// Calls `done` now (instead of at the end of the scope), consuming the lease.
    ///
    /// ```
    /// use faithful_workqueue::queue::Queue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = Queue::new();
    /// q.add("a");
    /// let lease = q.lease().await.unwrap();
    /// q.add(*lease.item());
    /// assert_eq!(q.len(), 0);
    /// lease.done(); // done("a") now, not at the end of the scope
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub fn done(self) {
        drop(self);
    }
}

impl<T: Item> std::ops::Deref for Lease<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.item()
    }
}

impl<T: Item + fmt::Debug> fmt::Debug for Lease<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Lease").field(self.item()).finish()
    }
}

impl<T: Item> Drop for Lease<T> {
    fn drop(&mut self) {
        if let Some(item) = self.item.take() {
            self.queue.done(&item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn get_waits_for_an_add() {
        let q: Queue<&str> = Queue::new();
        let waiter = tokio::spawn({
            let q = q.clone();
            async move { q.get().await }
        });
        tokio::time::sleep(Duration::from_millis(1)).await;
        q.add("a");
        assert_eq!(waiter.await.unwrap(), Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_wakes_every_waiter() {
        let q: Queue<&str> = Queue::new();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.get().await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(1)).await;
        q.shut_down();
        for w in waiters {
            assert_eq!(w.await.unwrap(), None);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn lease_calls_done_when_unwinding() {
        let q: Queue<&str> = Queue::new();
        q.add("a");
        let lease = q.lease().await.unwrap();
        let q2 = q.clone();
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let _held = lease;
                q2.add("a");
                panic!("reconcile bug");
            }));
        assert!(result.is_err());
        // done ran during unwinding, so the dirty "a" is back in the FIFO.
        assert_eq!(q.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_forgotten_lease_stalls_the_key() {
        let q: Queue<&str> = Queue::new();
        q.add("a");
        std::mem::forget(q.lease().await.unwrap());
        q.add("a");
        assert_eq!(q.len(), 0);
        let stalled =
            tokio::time::timeout(Duration::from_millis(500), q.get()).await;
        assert!(stalled.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn drain_ends_when_the_last_done_requeues_a_dirty_item() {
        let q: Queue<&str> = Queue::new();
        q.add("foo");
        let foo = q.get().await.unwrap();
        q.add("foo"); // dirty while processing
        let drain = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        tokio::task::yield_now().await;
        q.done(&foo);
        tokio::time::timeout(Duration::from_secs(1), drain)
            .await
            .expect("the drain ended")
            .unwrap();
    }

    #[test]
    fn debug_state_shows_the_three_collections() {
        let q: Queue<&str> = Queue::new();
        q.add("b");
        q.add("a");
        let s = q.debug_state();
        assert_eq!(s.fifo, vec!["b", "a"]);
        assert_eq!(s.dirty, vec!["a", "b"]);
        assert!(s.processing.is_empty());
    }
}
