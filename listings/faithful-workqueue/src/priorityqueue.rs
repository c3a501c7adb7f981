//! controller-runtime's priority queue, mirroring
//! `pkg/controller/priorityqueue/priorityqueue.go`: the queue a controller
//! gets by default since controller-runtime v0.23.
//!
//! It keeps one entry per queued key, either *ready* or *waiting* for a ready
//! time, and a set of *locked* keys (handed out, `done` not yet called):
//!
//! * ready keys are handed out highest priority first, then in the order they
//!   became ready (FIFO within a priority);
//! * a re-add keeps the **highest** priority and the **earliest** ready time;
//!   a raised priority moves the key to the back of its new priority level;
//! * a key that is being processed can be added again: the new entry is
//!   queued but skipped until `done`, while the keys behind it are handed out;
//! * [`len`](PriorityQueue::len) counts ready entries, a re-added in-flight key
//!   included, waiting ones not;
//! * after shutdown, [`get_with_priority`](PriorityQueue::get_with_priority)
//!   returns `None` at once, even if keys are ready: no drain.
//!
//! Where client-go's queue has a dirty and a processing set, this queue has the
//! entry map and the locked set; the silent stall is the same: a locked key
//! whose `done` never comes is skipped forever.
//!
//! Adds go through a buffer, as upstream's do (its `addBuffer`): an add takes
//! only the buffer's lock, so producers do not queue up behind the workers'
//! gets and dones on the queue's lock. Upstream applies the buffer from a
//! goroutine; this port applies it at the start of every call that reads the
//! queue ([`get`](PriorityQueue::get), [`len`](PriorityQueue::len),
//! [`debug_state`](PriorityQueue::debug_state),
//! [`shut_down`](PriorityQueue::shut_down)), and an add applies it itself once
//! [`FLUSH_AT`] adds wait. So no call can tell a buffered add from an applied
//! one: the queue behaves as if every add were applied when it returned. A
//! queue with metrics applies every add at once, so that its gauges are never
//! behind. Upstream moves waiting keys to ready from another goroutine; this
//! port does that at the start of every call too, which is what upstream's
//! `Len` and hand-out already force.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::default_rate_limiters::{
    RateLimiter, priority_queue_default_rate_limiter,
};
use crate::hash::{HashMap, HashSet};
use crate::metrics::{CounterMetric, QueueMetrics};
use crate::queue::{Item, QueueConfig};
use crate::rate_limiting_queue::{
    DelayingInterface, Interface, RateLimitingInterface,
};
use crate::sync::{AtomicUsize, Mutex, MutexGuard};
use std::sync::atomic::Ordering::{Acquire, Release};

/// The priority of initial-list and resync events (controller-runtime's
/// `handler.LowPriority`), so that real changes overtake them.
///
/// ```
/// use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue, LOW_PRIORITY};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = PriorityQueue::new();
/// let low = AddOpts { priority: Some(LOW_PRIORITY), ..AddOpts::default() };
/// q.add_with_opts(low, ["resync-1", "resync-2"]);
/// q.add("changed"); // priority 0: overtakes the resync
/// assert_eq!(q.get().await, Some("changed"));
/// assert_eq!(q.get_with_priority().await, Some(("resync-1", LOW_PRIORITY)));
/// # }
/// ```
pub const LOW_PRIORITY: i32 = -100;

/// Options of one add (upstream's `AddOpts`).
///
/// ```
/// use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = PriorityQueue::new();
///
/// // The default: ready now, priority 0, no rate limiting.
/// assert_eq!(AddOpts::default(), AddOpts { after: Duration::ZERO, rate_limited: false, priority: None });
///
/// // With `after` and `rate_limited`, the shorter delay wins: the limiter's 5ms.
/// let opts = AddOpts { after: Duration::from_secs(1), rate_limited: true, ..AddOpts::default() };
/// q.add_with_opts(opts, ["a"]);
/// tokio::time::advance(Duration::from_millis(5)).await;
/// assert_eq!(q.len(), 1);
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddOpts {
    /// Become ready only after this delay.
    pub after: Duration,
    /// Ask the rate limiter for a delay (one more failure); with `after` too,
    /// the shorter of the two wins.
    pub rate_limited: bool,
    /// Higher is handed out first. `None` means 0.
    pub priority: Option<i32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    added_counter: u64,
    priority: i32,
    ready_at: Option<Instant>,
}

impl Entry {
    fn ready_key(&self) -> (Reverse<i32>, u64) {
        (Reverse(self.priority), self.added_counter)
    }
    fn waiting_key(&self, at: Instant) -> (Instant, Reverse<i32>, u64) {
        (at, Reverse(self.priority), self.added_counter)
    }
}

/// How many buffered adds an add lets wait before it applies them itself. The
/// buffer is bounded so that a queue nobody reads does not grow with every
/// add of the same key; applying in batches takes the queue's lock once per
/// batch rather than once per add.
pub const FLUSH_AT: usize = 1024;

/// One key of an add, as the add saw it: its ready time and, when anything
/// needs it, the clock when it was added, so that applying it later changes
/// nothing.
struct Buffered<T> {
    key: T,
    priority: i32,
    ready_at: Option<Instant>,
    /// When the add was made: what was due by then becomes ready before it.
    /// `None` when the add read no clock, because nothing could be due (see
    /// [`Pending::may_wait`]) and no metric needed the time.
    at: Option<Instant>,
}

/// The add buffer: its lock (taken after the queue's lock, never before it),
/// and its length, readable without the lock.
struct Buffer<T> {
    pending: Mutex<Pending<T>>,
    /// `pending.adds.len()`, stored under `pending`'s lock. A call that reads
    /// the queue holds the queue's lock, under which every flush happens: if
    /// it reads 0 here, every add that happened before it was applied, and
    /// it skips the buffer's lock.
    len: AtomicUsize,
}

/// What adds share with the calls that read the queue. Aligned as
/// [`State`] is, for the same reason.
#[repr(align(128))]
struct Pending<T> {
    /// Adds not yet applied, in the order they were made.
    adds: Vec<Buffered<T>>,
    /// Gets asleep on `changed`. A get counts itself only when it found the
    /// buffer empty, under this lock; so the first add after that sees it
    /// and wakes it, and later adds, which find the buffer non-empty, need
    /// not (the woken get applies them all).
    sleeping_gets: usize,
    /// Set by `shut_down` after it applied the buffer: later adds are ignored.
    shutdown: bool,
    /// Whether a waiting entry may exist, in the queue or in this buffer. Set
    /// by every add with a ready time; recomputed by each flush while it holds
    /// both locks. An add that finds it false, has no ready time of its own
    /// and reports no metrics reads no clock: nothing can become due before
    /// it, so the time would not change what it does (Go's `Add` reads no
    /// clock either).
    may_wait: bool,
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
    items: HashMap<T, Entry>,
    /// Ready entries in hand-out order (upstream's `lessReady`).
    ready: BTreeMap<(Reverse<i32>, u64), T>,
    /// Waiting entries by ready time, then as `ready` (upstream's `lessWaiting`).
    waiting: BTreeMap<(Instant, Reverse<i32>, u64), T>,
    locked: HashSet<T>,
    added_counter: u64,
    shutdown: bool,
    metrics: Option<QueueMetrics<T>>,
    /// The buffer's last allocation, swapped back in by each flush so that
    /// adds do not allocate once the buffer has grown.
    spare: Vec<Buffered<T>>,
}

impl<T: Item> State<T> {
    /// The metrics' "became ready" hook: adds and depth count ready entries only.
    fn became_ready(&mut self, key: &T, priority: i32, at: Option<Instant>) {
        if let Some(metrics) = self.metrics.as_mut() {
            // A queue with metrics reads the clock on every add, so `at` is
            // there; now is the right answer for a time nobody read.
            metrics.add(key, priority, at.unwrap_or_else(Instant::now));
        }
    }

    fn next_counter(&mut self) -> u64 {
        let c = self.added_counter;
        self.added_counter += 1;
        c
    }

    fn insert(&mut self, key: T, entry: Entry) {
        match entry.ready_at {
            Some(at) => self.waiting.insert(entry.waiting_key(at), key.clone()),
            None => self.ready.insert(entry.ready_key(), key.clone()),
        };
        self.items.insert(key, entry);
    }

    fn remove(&mut self, key: &T) -> Option<Entry> {
        let entry = self.items.remove(key)?;
        match entry.ready_at {
            Some(at) => self.waiting.remove(&entry.waiting_key(at)),
            None => self.ready.remove(&entry.ready_key()),
        };
        Some(entry)
    }

    /// Applies one buffered add; see the [module docs](self) for how a re-add
    /// combines with an entry. Returns whether an entry was added or moved
    /// (a key made ready, a new ready time, a raised priority): a waiting
    /// `get` needs waking only then.
    fn apply(&mut self, add: Buffered<T>) -> bool {
        let Buffered { key, priority: new_priority, ready_at, at } = add;
        // What was due when the add was made became ready before it.
        let ready_before = self.ready.len();
        if let Some(at) = at {
            self.promote_due(at);
        }
        let mut changed = self.ready.len() != ready_before;
        let Some(existing) = self.items.get(&key).copied() else {
            let entry = Entry {
                added_counter: self.next_counter(),
                priority: new_priority,
                ready_at,
            };
            if ready_at.is_none() {
                self.became_ready(&key, new_priority, at);
            }
            self.insert(key, entry);
            return true;
        };
        // The earliest readiness wins; a ready entry stays ready.
        let ready_at = match (existing.ready_at, ready_at) {
            (None, _) => None,
            (Some(old), Some(new)) if old < new => Some(old),
            (Some(_), new) => new,
        };
        let mut entry = existing;
        entry.ready_at = ready_at;
        // The highest priority wins; a raise goes to the back of its level.
        if new_priority > existing.priority {
            if existing.ready_at.is_none() {
                if let Some(metrics) = self.metrics.as_ref() {
                    metrics.update_depth_with_priority(
                        existing.priority,
                        new_priority,
                    );
                }
            }
            entry.priority = new_priority;
            entry.added_counter = self.next_counter();
        }
        if existing.ready_at.is_some() && ready_at.is_none() {
            self.became_ready(&key, entry.priority, at);
        }
        // Upstream deletes and re-inserts every time; an entry that did not
        // change would go back where it was, so leave it there (and wake
        // nobody for it).
        if entry != existing {
            self.remove(&key);
            self.insert(key, entry);
            changed = true;
        }
        changed
    }

    /// [`promote_due`](Self::promote_due) at the current time, without
    /// reading the clock when nothing waits.
    fn promote_due_now(&mut self) -> Option<Instant> {
        if self.waiting.is_empty() {
            None
        } else {
            self.promote_due(Instant::now())
        }
    }

    /// Moves every waiting entry whose time has come to ready, in waiting
    /// order, each with a fresh counter: keys sort by when they became ready.
    /// Returns the next ready time still waiting.
    fn promote_due(&mut self, now: Instant) -> Option<Instant> {
        while let Some((&(at, _, _), _)) = self.waiting.first_key_value() {
            if at > now {
                return Some(at);
            }
            let (_, key) = self.waiting.pop_first().expect("peeked");
            let mut entry = self.items[&key];
            entry.ready_at = None;
            entry.added_counter = self.next_counter();
            self.became_ready(&key, entry.priority, Some(at));
            self.ready.insert(entry.ready_key(), key.clone());
            self.items.insert(key, entry);
        }
        None
    }
}

/// The contents of a [`PriorityQueue`] at one moment; see
/// [`PriorityQueue::debug_state`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorityQueueState<T> {
    /// Ready entries, in the order `get` hands them out (locked keys that
    /// were re-added included: `get` skips them until their `done`).
    pub ready: Vec<T>,
    /// Waiting entries with the instant each becomes ready, soonest first.
    pub waiting: Vec<(T, Instant)>,
    /// Keys handed out and not yet done, sorted.
    pub locked: Vec<T>,
}

/// controller-runtime's priority queue; see the [module docs](self).
///
/// ```
/// use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue, LOW_PRIORITY};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = PriorityQueue::new();
/// q.add_with_opts(AddOpts { priority: Some(LOW_PRIORITY), ..Default::default() }, ["resync"]);
/// q.add("changed");
/// assert_eq!(q.get_with_priority().await, Some(("changed", 0)));
/// assert_eq!(q.get_with_priority().await, Some(("resync", LOW_PRIORITY)));
/// # }
/// ```
pub struct PriorityQueue<T> {
    state: Arc<Mutex<State<T>>>,
    buffer: Arc<Buffer<T>>,
    changed: Arc<Notify>,
    rate_limiter: Arc<dyn RateLimiter<T>>,
    retries: Option<Arc<dyn CounterMetric>>,
    /// [`FLUSH_AT`], or 1 for a queue with metrics.
    flush_at: usize,
}

impl<T> Clone for PriorityQueue<T> {
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
            buffer: self.buffer.clone(),
            changed: self.changed.clone(),
            rate_limiter: self.rate_limiter.clone(),
            retries: self.retries.clone(),
            flush_at: self.flush_at,
        }
    }
}

/// A get counted in [`Pending::sleeping_gets`], until it drops (woken, timed
/// out or cancelled).
struct SleepingGet<'a, T> {
    pending: &'a Mutex<Pending<T>>,
}

impl<T> Drop for SleepingGet<'_, T> {
    fn drop(&mut self) {
        // Not `unwrap`: this may run while a panic unwinds, where a second
        // panic over a poisoned lock would abort.
        let mut pending = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pending.sleeping_gets -= 1;
    }
}

impl<T: Item> Default for PriorityQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Item> PriorityQueue<T> {
    /// A queue with upstream's default limiter, exponential 5ms..1000s.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q: PriorityQueue<&str> = PriorityQueue::new();
    /// q.add_rate_limited("a"); // 5ms: the default limiter's first delay
    /// assert_eq!(q.len(), 0);
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub fn new() -> Self {
        Self::with_rate_limiter(priority_queue_default_rate_limiter())
    }

    /// A queue with `rate_limiter` for rate-limited adds, without metrics.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::ItemFastSlowRateLimiter;
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let limiter = ItemFastSlowRateLimiter::new(Duration::from_secs(1), Duration::from_secs(60), 3);
    /// let q = PriorityQueue::with_rate_limiter(limiter);
    /// q.add_rate_limited("a");
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub fn with_rate_limiter(
        rate_limiter: impl RateLimiter<T> + 'static,
    ) -> Self {
        Self::with_config(rate_limiter, QueueConfig::default())
    }

    /// A queue with `rate_limiter` and options (upstream's `New(name, opts)`).
    /// A named queue with a metrics provider reports the workqueue metrics,
    /// depth by priority if the provider supports it, and refreshes the
    /// unfinished-work gauges every 500ms on a tokio task until shutdown.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use faithful_workqueue::queue::QueueConfig;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let config = QueueConfig::named("pq").metrics_provider(metrics.clone());
    /// let q = PriorityQueue::with_config(priority_queue_default_rate_limiter(), config);
    /// q.add("a");
    /// q.add_after("b", Duration::from_secs(1)); // waiting: a retry, not yet an add
    /// let s = metrics.snapshot("pq");
    /// assert_eq!((s.adds, s.depth, s.retries), (1, 1, 1));
    /// # }
    /// ```
    pub fn with_config(
        rate_limiter: impl RateLimiter<T> + 'static,
        config: QueueConfig,
    ) -> Self {
        let (metrics, retries) =
            match (&config.metrics_provider, config.name.is_empty()) {
                (Some(provider), false) => (
                    Some(QueueMetrics::with_priority(
                        &config.name,
                        provider.as_ref(),
                    )),
                    Some(provider.new_retries_metric(&config.name)),
                ),
                _ => (None, None),
            };
        let with_metrics = metrics.is_some();
        let queue = Self {
            state: Arc::new(Mutex::new(State {
                items: HashMap::default(),
                ready: BTreeMap::new(),
                waiting: BTreeMap::new(),
                locked: HashSet::default(),
                added_counter: 0,
                shutdown: false,
                metrics,
                spare: Vec::new(),
            })),
            buffer: Arc::new(Buffer {
                pending: Mutex::new(Pending {
                    adds: Vec::new(),
                    sleeping_gets: 0,
                    shutdown: false,
                    may_wait: false,
                }),
                len: AtomicUsize::new(0),
            }),
            changed: Arc::new(Notify::new()),
            rate_limiter: Arc::new(rate_limiter),
            retries,
            flush_at: if with_metrics { 1 } else { FLUSH_AT },
        };
        if with_metrics && tokio::runtime::Handle::try_current().is_ok() {
            let state = Arc::downgrade(&queue.state);
            let mut ticker = crate::queue::unfinished_work_ticker();
            tokio::spawn(async move {
                loop {
                    ticker.tick().await;
                    let Some(state) = state.upgrade() else { return };
                    let state = state.lock().unwrap();
                    if state.shutdown {
                        return;
                    }
                    if let Some(metrics) = state.metrics.as_ref() {
                        metrics.update_unfinished_work(Instant::now());
                    }
                }
            });
        }
        queue
    }

    /// Recomputes the unfinished-work gauges now (the queue also does it every 500ms).
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use faithful_workqueue::queue::QueueConfig;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let config = QueueConfig::named("pq").metrics_provider(metrics.clone());
    /// let q = PriorityQueue::with_config(priority_queue_default_rate_limiter(), config);
    /// q.add("a");
    /// let _a = q.get().await.unwrap();
    /// tokio::time::advance(Duration::from_secs(2)).await;
    /// q.update_unfinished_work();
    /// assert_eq!(metrics.snapshot("pq").longest_running_processor_seconds, 2.0);
    /// # }
    /// ```
    pub fn update_unfinished_work(&self) {
        if let Some(metrics) = self.state().metrics.as_ref() {
            metrics.update_unfinished_work(Instant::now());
        }
    }

    fn state(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap()
    }

    /// The queue's state with every buffered add applied, and whether that
    /// added or moved an entry.
    fn flushed_state(&self) -> (MutexGuard<'_, State<T>>, bool) {
        let mut state = self.state();
        let changed = self.apply_buffer(&mut state);
        (state, changed)
    }

    /// Applies the buffered adds, in order, to `state` (the caller holds the
    /// queue's lock, so nobody sees them half applied).
    fn apply_buffer(&self, state: &mut State<T>) -> bool {
        if self.buffer.len.load(Acquire) == 0 {
            return false;
        }
        let mut pending = self.buffer.pending.lock().unwrap();
        std::mem::swap(&mut pending.adds, &mut state.spare);
        self.buffer.len.store(0, Release);
        // Applying can only add waiting entries that are in the queue or in
        // these adds already; later ones set the flag again.
        pending.may_wait = !state.waiting.is_empty()
            || state.spare.iter().any(|add| add.ready_at.is_some());
        drop(pending);
        let mut adds = std::mem::take(&mut state.spare);
        let mut changed = false;
        for add in adds.drain(..) {
            changed |= state.apply(add);
        }
        state.spare = adds;
        changed
    }

    /// Adds `items` with `opts`; see the [module docs](self) for how a re-add
    /// of a queued key combines with its entry. Ignored after shutdown.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// let at = |secs, priority| AddOpts { after: Duration::from_secs(secs), priority: Some(priority), ..AddOpts::default() };
    /// q.add_with_opts(at(10, 1), ["a"]);
    /// q.add_with_opts(at(1, 5), ["a"]); // earlier and higher: both win
    /// q.add_with_opts(at(5, 0), ["a"]); // later and lower: both lose
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(q.get_with_priority().await, Some(("a", 5)));
    ///
    /// // A raised priority goes to the back of its new level.
    /// q.add_with_opts(at(0, 1), ["x", "y"]);
    /// q.add("z");
    /// q.add_with_opts(at(0, 1), ["z"]);
    /// assert_eq!(q.get().await, Some("x"));
    /// assert_eq!(q.get().await, Some("y"));
    /// assert_eq!(q.get().await, Some("z"));
    /// # }
    /// ```
    pub fn add_with_opts(
        &self,
        opts: AddOpts,
        items: impl IntoIterator<Item = T>,
    ) {
        let priority = opts.priority.unwrap_or(0);
        let mut pending = self.buffer.pending.lock().unwrap();
        if pending.shutdown {
            return;
        }
        // Read under the buffer's lock, so that buffered adds are in clock
        // order; and only when something needs the time.
        let reads_clock = pending.may_wait
            || self.retries.is_some()
            || opts.rate_limited
            || !opts.after.is_zero();
        let now = reads_clock.then(Instant::now);
        let was_empty = pending.adds.is_empty();
        for key in items {
            let mut after = opts.after;
            if opts.rate_limited {
                // Asked for every key, deduplicated or not: the failure counts.
                let limited = self.rate_limiter.when(&key);
                if after.is_zero() || limited < after {
                    after = limited;
                }
            }
            let ready_at = (!after.is_zero())
                .then(|| now.expect("read for a delay") + after);
            if ready_at.is_some() {
                pending.may_wait = true;
                if let Some(retries) = &self.retries {
                    retries.inc();
                }
            }
            pending.adds.push(Buffered { key, priority, ready_at, at: now });
        }
        self.buffer.len.store(pending.adds.len(), Release);
        let wake =
            was_empty && !pending.adds.is_empty() && pending.sleeping_gets > 0;
        let apply = pending.adds.len() >= self.flush_at;
        drop(pending);
        if apply {
            let (state, changed) = self.flushed_state();
            drop(state);
            if changed {
                self.changed.notify_waiters();
            }
        } else if wake {
            // A get asleep applies the buffer when it wakes.
            self.changed.notify_waiters();
        }
    }

    /// `add_with_opts` with default options: ready now, priority 0.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add_with_opts(AddOpts { priority: Some(3), ..AddOpts::default() }, ["a"]);
    /// q.add("a"); // a priority-0 re-add: the priority never decreases
    /// assert_eq!(q.len(), 1);
    /// assert_eq!(q.get_with_priority().await, Some(("a", 3)));
    /// # }
    /// ```
    pub fn add(&self, item: T) {
        self.add_with_opts(AddOpts::default(), [item]);
    }

    /// Ready after `delay`.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add("a");
    /// q.add_after("a", Duration::from_secs(10)); // "a" is ready: it stays ready
    /// assert_eq!(q.len(), 1);
    /// q.add_after("b", Duration::from_secs(10));
    /// q.add_after("b", Duration::from_secs(1)); // the earliest ready time wins
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert_eq!(q.len(), 2);
    /// # }
    /// ```
    pub fn add_after(&self, item: T, delay: Duration) {
        self.add_with_opts(
            AddOpts { after: delay, ..AddOpts::default() },
            [item],
        );
    }

    /// Ready after the rate limiter's delay for `item`.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add_rate_limited("a"); // 5ms
    /// q.add_rate_limited("a"); // 10ms: later, so the 5ms entry stays
    /// assert_eq!(q.num_requeues(&"a"), 2); // but the limiter counted both
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// assert_eq!(q.len(), 1);
    /// # }
    /// ```
    pub fn add_rate_limited(&self, item: T) {
        self.add_with_opts(
            AddOpts { rate_limited: true, ..AddOpts::default() },
            [item],
        );
    }

    /// Waits for the first ready key that is not locked and hands it out with
    /// its priority, locking it until [`done`](PriorityQueue::done). Returns
    /// `None` at once after shutdown, even if keys are ready.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add("a");
    /// q.add("b");
    /// let (a, _) = q.get_with_priority().await.unwrap();
    /// q.add_with_opts(AddOpts { priority: Some(1), ..AddOpts::default() }, [a]);
    /// // The re-added "a" is first in line but locked: "b" is handed out.
    /// assert_eq!(q.get_with_priority().await, Some(("b", 0)));
    /// q.done(&a);
    /// assert_eq!(q.get_with_priority().await, Some(("a", 1)));
    ///
    /// q.add("c");
    /// q.shut_down();
    /// assert_eq!(q.get_with_priority().await, None); // "c" is ready, but no drain
    /// # }
    /// ```
    pub async fn get_with_priority(&self) -> Option<(T, i32)> {
        loop {
            let mut changed = std::pin::pin!(self.changed.notified());
            changed.as_mut().enable();
            let (next_ready, _sleeping) = {
                let (mut state, _) = self.flushed_state();
                if state.shutdown {
                    return None;
                }
                let next_ready = state.promote_due_now();
                let st = &mut *state;
                let found = st
                    .ready
                    .iter()
                    .find(|(_, key)| !st.locked.contains(*key))
                    .map(|(k, key)| (*k, key.clone()));
                if let Some((ready_key, key)) = found {
                    st.ready.remove(&ready_key);
                    let entry = st
                        .items
                        .remove(&key)
                        .expect("a ready key has an entry");
                    if let Some(metrics) = st.metrics.as_mut() {
                        metrics.get(&key, entry.priority, Instant::now());
                    }
                    st.locked.insert(key.clone());
                    return Some((key, entry.priority));
                }
                // Count this get as sleeping, unless adds came in since the
                // flush: then look again.
                let mut pending = self.buffer.pending.lock().unwrap();
                if !pending.adds.is_empty() {
                    continue;
                }
                pending.sleeping_gets += 1;
                (next_ready, SleepingGet { pending: &self.buffer.pending })
            };
            match next_ready {
                Some(at) => {
                    tokio::select! {
                        () = &mut changed => {}
                        () = tokio::time::sleep_until(at) => {}
                    }
                }
                None => changed.await,
            }
        }
    }

    /// [`get_with_priority`](PriorityQueue::get_with_priority) without the priority.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add_after("a", Duration::from_secs(2));
    /// let start = tokio::time::Instant::now();
    /// assert_eq!(q.get().await, Some("a")); // waits until "a" is ready
    /// assert_eq!(start.elapsed(), Duration::from_secs(2));
    /// # }
    /// ```
    pub async fn get(&self) -> Option<T> {
        self.get_with_priority().await.map(|(key, _)| key)
    }

    /// Unlocks `item`: a copy re-added while it was processed can now be handed out.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add("a");
    /// let a = q.get().await.unwrap();
    /// q.add(a);
    /// // Locked: the copy is not handed out, however long we wait.
    /// assert!(tokio::time::timeout(Duration::from_secs(60), q.get()).await.is_err());
    /// q.done(&a);
    /// assert_eq!(q.get().await, Some("a"));
    /// # }
    /// ```
    pub fn done(&self, item: &T) {
        let mut state = self.state();
        state.locked.remove(item);
        if let Some(metrics) = state.metrics.as_mut() {
            metrics.done(item, Instant::now());
        }
        drop(state);
        self.changed.notify_waiters();
    }

    /// The number of ready entries, re-added locked keys included, waiting ones not.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add("a");
    /// q.add_after("b", Duration::from_secs(1));
    /// let a = q.get().await.unwrap();
    /// assert_eq!(q.len(), 0); // handed out, and "b" is waiting
    /// q.add(a);
    /// assert_eq!(q.len(), 1); // a re-added locked key counts
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        let (mut state, _) = self.flushed_state();
        // After shutdown nothing becomes ready any more: upstream's goroutine
        // that promotes waiting keys has stopped.
        if !state.shutdown {
            state.promote_due_now();
        }
        state.ready.len()
    }

    /// What the queue holds at one moment, for teaching and tests: the ready
    /// entries in hand-out order, the waiting ones in the order they become
    /// ready (each with its time), and the locked keys (handed out, not yet
    /// done), sorted. Entries whose time has come are moved to ready first,
    /// as upstream's goroutine would have done by now.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    /// q.add("a");
    /// q.add("b");
    /// q.add_after("c", Duration::from_secs(1));
    /// let a = q.get().await.unwrap();
    /// q.add(a); // re-added while locked: ready again, still locked
    /// let s = q.debug_state();
    /// assert_eq!(s.ready, ["b", "a"]);
    /// assert_eq!(s.waiting.iter().map(|(k, _)| *k).collect::<Vec<_>>(), ["c"]);
    /// assert_eq!(s.locked, ["a"]);
    /// # }
    /// ```
    pub fn debug_state(&self) -> PriorityQueueState<T>
    where
        T: Ord,
    {
        let (mut state, _) = self.flushed_state();
        if !state.shutdown {
            state.promote_due_now();
        }
        let mut locked: Vec<T> = state.locked.iter().cloned().collect();
        locked.sort();
        PriorityQueueState {
            ready: state.ready.values().cloned().collect(),
            waiting: state
                .waiting
                .iter()
                .map(|(&(at, _, _), key)| (key.clone(), at))
                .collect(),
            locked,
        }
    }

    /// Whether no entry is ready.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add_after("a", Duration::from_secs(1));
    /// assert!(q.is_empty()); // waiting entries are not counted
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// assert!(!q.is_empty());
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rate limiter forgets `item`; the queue is untouched.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add_rate_limited("a");
    /// q.forget(&"a");
    /// assert_eq!(q.num_requeues(&"a"), 0);
    /// tokio::time::advance(Duration::from_millis(5)).await;
    /// assert_eq!(q.len(), 1); // the retry is still queued
    /// # }
    /// ```
    pub fn forget(&self, item: &T) {
        self.rate_limiter.forget(item);
    }

    /// The rate limiter's failure count for `item`.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    /// let q = PriorityQueue::new();
    ///
    /// q.add_rate_limited("a");
    /// q.add_after("a", Duration::from_secs(1)); // not rate-limited: not counted
    /// assert_eq!(q.num_requeues(&"a"), 1);
    /// ```
    pub fn num_requeues(&self, item: &T) -> usize {
        self.rate_limiter.num_requeues(item)
    }

    /// Stops the queue: adds are ignored and every `get` returns `None`.
    /// Upstream panics on a second call (it closes a channel twice); here a
    /// second call does nothing.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add("a");
    /// q.shut_down();
    /// q.shut_down(); // upstream would panic here
    /// q.add("b"); // ignored
    /// assert_eq!(q.len(), 1); // "a" is still ready ...
    /// assert_eq!(q.get().await, None); // ... but never handed out
    /// # }
    /// ```
    pub fn shut_down(&self) {
        // Under the queue's lock throughout, so that every call sees the
        // shutdown at once: adds made before it are applied, later ones
        // are ignored.
        let mut state = self.state();
        self.buffer.pending.lock().unwrap().shutdown = true;
        self.apply_buffer(&mut state);
        // What upstream's timer goroutine has promoted by now, it promoted
        // before the shutdown stopped it.
        if !state.shutdown {
            state.promote_due_now();
        }
        state.shutdown = true;
        drop(state);
        self.changed.notify_waiters();
    }

    /// The same as [`shut_down`](PriorityQueue::shut_down), as upstream: the
    /// priority queue does not drain.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = PriorityQueue::new();
    ///
    /// q.add("a");
    /// let _a = q.get().await.unwrap();
    /// q.shut_down_with_drain().await; // returns at once, though "a" is still locked
    /// assert!(q.shutting_down());
    /// # }
    /// ```
    pub async fn shut_down_with_drain(&self) {
        self.shut_down();
    }

    /// Whether the queue is shut down.
    ///
    /// ```
    /// use faithful_workqueue::priorityqueue::PriorityQueue;
    /// use std::time::Duration;
    ///
    /// let q: PriorityQueue<&str> = PriorityQueue::new();
    /// assert!(!q.shutting_down());
    /// q.shut_down();
    /// assert!(q.shutting_down());
    /// ```
    pub fn shutting_down(&self) -> bool {
        self.state().shutdown
    }
}

/// A queue that takes priorities (upstream's `PriorityQueue[T]` interface):
/// the controller loop talks to its queue only through this.
///
/// Both methods must be written out: a default could only go through the
/// other traits, which have no priorities, and would lose them without a word
/// for a wrapper around a [`PriorityQueue`]. A wrapper delegates both to the
/// queue it wraps. A client-go queue maps them as upstream's
/// `priorityQueueWrapper` does, which is how a controller with
/// `UsePriorityQueue: false` drives it ([`client_go_add_with_opts`] and
/// [`client_go_get_with_priority`]): `add_with_opts` becomes
/// `add_rate_limited` if `rate_limited` (any `after` is then ignored), else
/// `add_after` if `after` > 0, else `add`; priorities are dropped and
/// `get_with_priority` reports 0.
///
/// ```
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::priorityqueue::{AddOpts, PriorityInterface};
/// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
///
/// // client-go's queue through upstream's wrapper.
/// let opts = AddOpts { after: Duration::from_secs(60), rate_limited: true, priority: Some(10) };
/// q.add_with_opts(opts, ["a"]);
/// assert_eq!(q.num_requeues(&"a"), 1); // rate_limited wins; `after` is ignored
/// tokio::time::advance(Duration::from_millis(5)).await;
/// assert_eq!(q.get_with_priority().await, Some(("a", 0))); // the priority is dropped
/// # }
/// ```
///
/// A wrapper that leaves out either method does not compile:
///
/// ```compile_fail,E0046
/// use faithful_workqueue::priorityqueue::{PriorityInterface, PriorityQueue};
/// use faithful_workqueue::rate_limiting_queue::{DelayingInterface, Interface, RateLimitingInterface};
/// use std::time::Duration;
///
/// struct Wrapper(PriorityQueue<&'static str>);
/// impl Interface<&'static str> for Wrapper {
///     fn add(&self, item: &'static str) { self.0.add(item) }
///     fn len(&self) -> usize { self.0.len() }
///     fn get(&self) -> impl Future<Output = Option<&'static str>> + Send { self.0.get() }
///     fn done(&self, item: &&'static str) { self.0.done(item) }
///     fn shut_down(&self) { self.0.shut_down() }
///     fn shut_down_with_drain(&self) -> impl Future<Output = ()> + Send { self.0.shut_down_with_drain() }
///     fn shutting_down(&self) -> bool { self.0.shutting_down() }
/// }
/// impl DelayingInterface<&'static str> for Wrapper {
///     fn add_after(&self, item: &'static str, delay: Duration) { self.0.add_after(item, delay) }
/// }
/// impl RateLimitingInterface<&'static str> for Wrapper {
///     fn add_rate_limited(&self, item: &'static str) { self.0.add_rate_limited(item) }
///     fn forget(&self, item: &&'static str) { self.0.forget(item) }
///     fn num_requeues(&self, item: &&'static str) -> usize { self.0.num_requeues(item) }
/// }
/// impl PriorityInterface<&'static str> for Wrapper {} // E0046: missing add_with_opts, get_with_priority
/// ```
pub trait PriorityInterface<T: Send>: RateLimitingInterface<T> {
    /// Adds `items` with `opts`.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::priorityqueue::{AddOpts, PriorityInterface};
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    ///
    /// q.add_with_opts(AddOpts { after: Duration::from_secs(1), ..AddOpts::default() }, ["a", "b"]);
    /// assert_eq!(q.waiting_len(), 2); // add_after
    /// q.add_with_opts(AddOpts::default(), ["c"]);
    /// assert_eq!(q.len(), 1); // add
    /// # }
    /// ```
    fn add_with_opts(&self, opts: AddOpts, items: impl IntoIterator<Item = T>);

    /// Hands out the next item with its priority.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::priorityqueue::{AddOpts, PriorityInterface, PriorityQueue};
    /// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let high = AddOpts { priority: Some(7), ..AddOpts::default() };
    /// let pq = PriorityQueue::new();
    /// PriorityInterface::add_with_opts(&pq, high, ["a"]);
    /// assert_eq!(PriorityInterface::get_with_priority(&pq).await, Some(("a", 7)));
    ///
    /// let rl = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    /// rl.add_with_opts(high, ["a"]);
    /// assert_eq!(rl.get_with_priority().await, Some(("a", 0))); // the wrapper reports 0
    /// # }
    /// ```
    fn get_with_priority(
        &self,
    ) -> impl std::future::Future<Output = Option<(T, i32)>> + Send;
}

/// `add_with_opts` on a client-go queue, as upstream's `priorityQueueWrapper`
/// maps it: `add_rate_limited` if `rate_limited` (any `after` is ignored), else
/// `add_after` if `after` > 0, else `add`. The priority is dropped: client-go's
/// queue has none. For a [`PriorityInterface`] impl of a client-go queue, or of
/// a wrapper around one.
///
/// ```
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::priorityqueue::{client_go_add_with_opts, AddOpts};
/// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
/// client_go_add_with_opts(&q, AddOpts { after: Duration::from_secs(1), ..AddOpts::default() }, ["a"]);
/// assert_eq!(q.waiting_len(), 1); // add_after
/// # }
/// ```
pub fn client_go_add_with_opts<T, Q: RateLimitingInterface<T> + ?Sized>(
    queue: &Q,
    opts: AddOpts,
    items: impl IntoIterator<Item = T>,
) {
    for item in items {
        if opts.rate_limited {
            queue.add_rate_limited(item);
        } else if !opts.after.is_zero() {
            queue.add_after(item, opts.after);
        } else {
            queue.add(item);
        }
    }
}

/// `get_with_priority` on a client-go queue, as upstream's
/// `priorityQueueWrapper` maps it: `get`, with priority 0.
///
/// ```
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::priorityqueue::client_go_get_with_priority;
/// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
/// q.add("a");
/// assert_eq!(client_go_get_with_priority(&q).await, Some(("a", 0)));
/// # }
/// ```
pub fn client_go_get_with_priority<T, Q: RateLimitingInterface<T> + ?Sized>(
    queue: &Q,
) -> impl std::future::Future<Output = Option<(T, i32)>> + Send {
    let get = queue.get();
    async move { get.await.map(|item| (item, 0)) }
}

impl<T: Item + Sync> PriorityInterface<T> for PriorityQueue<T> {
    fn add_with_opts(&self, opts: AddOpts, items: impl IntoIterator<Item = T>) {
        PriorityQueue::add_with_opts(self, opts, items)
    }
    fn get_with_priority(
        &self,
    ) -> impl std::future::Future<Output = Option<(T, i32)>> + Send {
        PriorityQueue::get_with_priority(self)
    }
}

impl<T: Item + Sync> PriorityInterface<T>
    for crate::rate_limiting_queue::RateLimitingQueue<T>
{
    fn add_with_opts(&self, opts: AddOpts, items: impl IntoIterator<Item = T>) {
        client_go_add_with_opts(self, opts, items)
    }
    fn get_with_priority(
        &self,
    ) -> impl std::future::Future<Output = Option<(T, i32)>> + Send {
        client_go_get_with_priority(self)
    }
}

impl<T: Item + Sync> Interface<T> for PriorityQueue<T> {
    fn add(&self, item: T) {
        PriorityQueue::add(self, item)
    }
    fn len(&self) -> usize {
        PriorityQueue::len(self)
    }
    fn get(&self) -> impl std::future::Future<Output = Option<T>> + Send {
        PriorityQueue::get(self)
    }
    fn done(&self, item: &T) {
        PriorityQueue::done(self, item)
    }
    fn shut_down(&self) {
        PriorityQueue::shut_down(self)
    }
    fn shut_down_with_drain(
        &self,
    ) -> impl std::future::Future<Output = ()> + Send {
        PriorityQueue::shut_down_with_drain(self)
    }
    fn shutting_down(&self) -> bool {
        PriorityQueue::shutting_down(self)
    }
}

impl<T: Item + Sync> DelayingInterface<T> for PriorityQueue<T> {
    fn add_after(&self, item: T, delay: Duration) {
        PriorityQueue::add_after(self, item, delay)
    }
}

impl<T: Item + Sync> RateLimitingInterface<T> for PriorityQueue<T> {
    fn add_rate_limited(&self, item: T) {
        PriorityQueue::add_rate_limited(self, item)
    }
    fn forget(&self, item: &T) {
        PriorityQueue::forget(self, item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        PriorityQueue::num_requeues(self, item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffered_times(
        q: &PriorityQueue<&'static str>,
    ) -> Vec<(&'static str, bool)> {
        let pending = q.buffer.pending.lock().unwrap();
        pending.adds.iter().map(|add| (add.key, add.at.is_some())).collect()
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn an_add_reads_the_clock_only_when_something_may_be_due_before_it() {
        let q = PriorityQueue::new();
        q.add("a"); // nothing waits anywhere: no clock
        q.add_after("w", Duration::from_secs(1)); // a delay needs the clock
        q.add("b"); // "w" waits in the buffer: "b" needs the time
        assert_eq!(
            buffered_times(&q),
            [("a", false), ("w", true), ("b", true)]
        );

        assert_eq!(q.len(), 2); // applies the buffer; "w" still waits
        q.add("c");
        assert_eq!(
            buffered_times(&q),
            [("c", true)],
            "\"w\" waits in the queue"
        );

        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(q.len(), 4); // "w" became ready after this flush looked ...
        q.add("d");
        assert_eq!(
            buffered_times(&q),
            [("d", true)],
            "... so the flag is still up"
        );
        assert_eq!(q.len(), 5); // the next flush finds nothing waiting
        q.add("e");
        assert_eq!(buffered_times(&q), [("e", false)]);
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn an_entry_due_before_an_add_is_handed_out_before_it() {
        let q = PriorityQueue::new();
        q.add_after("w", Duration::from_secs(1));
        assert_eq!(q.len(), 0); // applied: "w" waits in the queue, not the buffer
        tokio::time::advance(Duration::from_secs(1)).await;
        // Nothing reads the queue between "w" becoming due and this add, so
        // only the add's own clock reading puts "w" first.
        q.add("x");
        assert_eq!(q.get().await, Some("w"));
        assert_eq!(q.get().await, Some("x"));
    }
}
