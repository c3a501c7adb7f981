//! Rate limiters, mirroring client-go's `util/workqueue/default_rate_limiters.go`.
//!
//! A [`RateLimiter`] answers one question, *how long should this item wait
//! before its next try?*, and remembers per-item failures to answer it. The
//! rate-limiting queue calls [`RateLimiter::when`] on every
//! `add_rate_limited`, and [`RateLimiter::forget`] on `forget`. Nothing in a
//! limiter touches a queue.
//!
//! The two defaults a controller-runtime controller picks from:
//!
//! * with the priority queue (controller-runtime's default since v0.23):
//!   [`ItemExponentialFailureRateLimiter::new`]`(5ms, 1000s)`, the
//!   [`priority_queue_default_rate_limiter`];
//! * without it: [`default_typed_controller_rate_limiter`], the maximum of that
//!   exponential limiter and a 10 per second, burst 100 [`BucketRateLimiter`].

use crate::hash::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// Decides how long an item waits before it is retried (upstream's
/// `TypedRateLimiter`).
///
/// ```
/// use faithful_workqueue::default_rate_limiters::RateLimiter;
/// use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
/// use std::time::Duration;
///
/// /// Always one second; remembers nothing.
/// struct OneSecond;
///
/// impl<T> RateLimiter<T> for OneSecond {
///     fn when(&self, _: &T) -> Duration {
///         Duration::from_secs(1)
///     }
///     fn forget(&self, _: &T) {}
///     fn num_requeues(&self, _: &T) -> usize {
///         0
///     }
/// }
///
/// let q = RateLimitingQueue::new(OneSecond);
/// q.add_rate_limited("a");
/// assert_eq!((q.len(), q.waiting_len()), (0, 1));
/// ```
pub trait RateLimiter<T>: Send + Sync {
    /// How long `item` should wait now. Counts one more failure for it.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::{ItemExponentialFailureRateLimiter, RateLimiter};
    /// use std::time::Duration;
    /// let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000));
    ///
    /// assert_eq!(limiter.when(&"a"), Duration::from_millis(5));
    /// assert_eq!(limiter.num_requeues(&"a"), 1); // asking counted a failure
    /// ```
    fn when(&self, item: &T) -> Duration;
    /// Stops tracking `item`: its failures are cleared. Doesn't matter whether
    /// it failed for good or succeeded. Nothing else is touched.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::{ItemExponentialFailureRateLimiter, RateLimiter};
    /// use std::time::Duration;
    /// let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000));
    ///
    /// limiter.when(&"a");
    /// limiter.when(&"b");
    /// limiter.forget(&"a");
    /// assert_eq!(limiter.num_requeues(&"a"), 0);
    /// assert_eq!(limiter.num_requeues(&"b"), 1); // other items are untouched
    /// ```
    fn forget(&self, item: &T);
    /// How many failures `item` has had since it was last forgotten.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::{ItemExponentialFailureRateLimiter, RateLimiter};
    /// use std::time::Duration;
    /// let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000));
    ///
    /// assert_eq!(limiter.num_requeues(&"a"), 0);
    /// limiter.when(&"a");
    /// limiter.when(&"a");
    /// assert_eq!(limiter.num_requeues(&"a"), 2);
    /// ```
    fn num_requeues(&self, item: &T) -> usize;
}

impl<T, L: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<L> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

impl<T, L: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<L> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        (**self).num_requeues(item)
    }
}

/// Per-item exponential backoff: the n-th failure of an item waits
/// `min(base · 2^(n−1), max)` (upstream's `TypedItemExponentialFailureRateLimiter`).
///
/// ```
/// use faithful_workqueue::default_rate_limiters::{ItemExponentialFailureRateLimiter, RateLimiter};
/// use std::time::Duration;
///
/// let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000));
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(5));
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(10));
/// assert_eq!(limiter.when(&"b"), Duration::from_millis(5)); // per item
/// limiter.forget(&"a");
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(5));
/// ```
pub struct ItemExponentialFailureRateLimiter<T> {
    failures: Mutex<HashMap<T, usize>>,
    base_delay: Duration,
    max_delay: Duration,
}

impl<T> ItemExponentialFailureRateLimiter<T> {
    /// A limiter starting at `base_delay` and doubling up to `max_delay`.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::{ItemExponentialFailureRateLimiter, RateLimiter};
    /// use std::time::Duration;
    ///
    /// let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_millis(12));
    /// assert_eq!(limiter.when(&"a"), Duration::from_millis(5));
    /// assert_eq!(limiter.when(&"a"), Duration::from_millis(10));
    /// assert_eq!(limiter.when(&"a"), Duration::from_millis(12)); // 20ms, capped
    /// ```
    ///
    /// A `max_delay` beyond [`INF_DURATION`], Go's longest duration, counts as
    /// `INF_DURATION`: upstream cannot wait longer, and the cap then agrees
    /// with the overflow guard, so `min(base · 2^(n−1), max)` holds for every
    /// `n`.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::{INF_DURATION, ItemExponentialFailureRateLimiter, RateLimiter};
    /// use std::time::Duration;
    ///
    /// let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_secs(1 << 33), Duration::MAX);
    /// assert_eq!(limiter.when(&"a"), Duration::from_secs(1 << 33)); // about 272 years
    /// assert_eq!(limiter.when(&"a"), INF_DURATION); // 2^34 s is past Go's longest duration
    /// ```
    pub fn new(base_delay: Duration, max_delay: Duration) -> Self {
        Self {
            failures: Mutex::new(HashMap::default()),
            base_delay,
            max_delay: max_delay.min(INF_DURATION),
        }
    }
}

impl<T: Clone + Eq + Hash + Send> RateLimiter<T>
    for ItemExponentialFailureRateLimiter<T>
{
    fn when(&self, item: &T) -> Duration {
        let exp = {
            let mut failures = self.failures.lock().unwrap();
            // One lookup for a known item; the key is cloned only on its first failure.
            match failures.get_mut(item) {
                Some(count) => {
                    *count += 1;
                    *count - 1
                }
                None => {
                    failures.insert(item.clone(), 1);
                    0
                }
            }
        };
        // The same floating-point arithmetic as upstream, overflow guard included:
        // beyond i64::MAX nanoseconds the delay is the maximum.
        let backoff = self.base_delay.as_nanos() as f64
            * 2f64.powi(i32::try_from(exp).unwrap_or(i32::MAX));
        if backoff > i64::MAX as f64 {
            return self.max_delay;
        }
        let calculated = Duration::from_nanos(backoff as u64);
        calculated.min(self.max_delay)
    }

    fn forget(&self, item: &T) {
        self.failures.lock().unwrap().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().unwrap().get(item).copied().unwrap_or(0)
    }
}

/// `fast_delay` for the first `max_fast_attempts` failures of an item, then
/// `slow_delay` (upstream's `TypedItemFastSlowRateLimiter`).
///
/// ```
/// use faithful_workqueue::default_rate_limiters::{ItemFastSlowRateLimiter, RateLimiter};
/// use std::time::Duration;
///
/// let limiter = ItemFastSlowRateLimiter::new(Duration::from_millis(5), Duration::from_secs(10), 2);
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(5));
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(5));
/// assert_eq!(limiter.when(&"a"), Duration::from_secs(10));
/// ```
pub struct ItemFastSlowRateLimiter<T> {
    failures: Mutex<HashMap<T, usize>>,
    fast_delay: Duration,
    slow_delay: Duration,
    max_fast_attempts: usize,
}

impl<T> ItemFastSlowRateLimiter<T> {
    /// A limiter with the two delays and the number of fast attempts.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::{ItemFastSlowRateLimiter, RateLimiter};
    /// use std::time::Duration;
    ///
    /// let limiter = ItemFastSlowRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1), 1);
    /// assert_eq!(limiter.when(&"a"), Duration::from_millis(1));
    /// assert_eq!(limiter.when(&"a"), Duration::from_secs(1));
    /// assert_eq!(limiter.num_requeues(&"a"), 2); // slow attempts count too
    /// ```
    pub fn new(
        fast_delay: Duration,
        slow_delay: Duration,
        max_fast_attempts: usize,
    ) -> Self {
        Self {
            failures: Mutex::new(HashMap::default()),
            fast_delay,
            slow_delay,
            max_fast_attempts,
        }
    }
}

impl<T: Clone + Eq + Hash + Send> RateLimiter<T>
    for ItemFastSlowRateLimiter<T>
{
    fn when(&self, item: &T) -> Duration {
        let mut failures = self.failures.lock().unwrap();
        let count = failures.entry(item.clone()).or_insert(0);
        *count += 1;
        if *count <= self.max_fast_attempts {
            self.fast_delay
        } else {
            self.slow_delay
        }
    }

    fn forget(&self, item: &T) {
        self.failures.lock().unwrap().remove(item);
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.failures.lock().unwrap().get(item).copied().unwrap_or(0)
    }
}

/// One token bucket for all items, reserving as `golang.org/x/time/rate`'s
/// `Limiter.Reserve` does (upstream's `TypedBucketRateLimiter`).
///
/// The bucket starts full. Each [`when`](RateLimiter::when) takes one token at
/// once, even into debt, and returns the time until the debt is repaid at
/// `rate` tokens per second. So with rate 10 and burst 100, a hundred calls in
/// a row wait 0, the 101st waits 100ms, the 102nd 200ms. It never tracks
/// items: `forget` does nothing and `num_requeues` is 0. Time is tokio's clock.
///
/// ```
/// use faithful_workqueue::default_rate_limiters::{BucketRateLimiter, RateLimiter};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let bucket = BucketRateLimiter::new(10.0, 100);
/// for _ in 0..100 {
///     assert_eq!(bucket.when(&"any"), Duration::ZERO);
/// }
/// assert_eq!(bucket.when(&"any"), Duration::from_millis(100));
/// assert_eq!(bucket.when(&"any"), Duration::from_millis(200));
/// # }
/// ```
pub struct BucketRateLimiter {
    rate: f64,
    burst: usize,
    state: Mutex<Bucket>,
}

struct Bucket {
    tokens: f64,
    last: Option<Instant>,
}

impl BucketRateLimiter {
    /// A full bucket of `burst` tokens, refilled at `rate` tokens per second.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::{BucketRateLimiter, RateLimiter};
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let bucket = BucketRateLimiter::new(10.0, 1);
    /// assert_eq!(bucket.when(&"a"), Duration::ZERO); // the one token
    /// assert_eq!(bucket.when(&"b"), Duration::from_millis(100)); // one bucket for all items
    /// tokio::time::advance(Duration::from_millis(200)).await; // two tokens refill, one repays the debt
    /// assert_eq!(bucket.when(&"c"), Duration::ZERO);
    /// assert_eq!(bucket.num_requeues(&"a"), 0); // items are never tracked
    /// # }
    /// ```
    pub fn new(rate: f64, burst: usize) -> Self {
        Self {
            rate,
            burst,
            state: Mutex::new(Bucket { tokens: burst as f64, last: None }),
        }
    }

    /// Takes one token now and returns how long to wait for it, as x/time's
    /// `Limiter.Reserve().Delay()` does.
    fn reserve(&self) -> Duration {
        let now = Instant::now();
        let mut bucket = self.state.lock().unwrap();
        if self.rate == f64::INFINITY {
            return Duration::ZERO; // rate.Inf: every event is allowed
        }
        if self.burst == 0 {
            // One token is more than the bucket holds: the reservation is
            // refused, nothing is taken, and the delay is InfDuration.
            return INF_DURATION;
        }
        // A limit of zero (or less) refills nothing, but the first `burst`
        // reservations still take the tokens the bucket starts with.
        let refill = match bucket.last {
            _ if self.rate <= 0.0 => 0.0,
            None => f64::INFINITY,
            Some(last) => {
                now.saturating_duration_since(last).as_secs_f64() * self.rate
            }
        };
        let tokens = (bucket.tokens + refill).min(self.burst as f64) - 1.0;
        let wait = if tokens >= 0.0 {
            Duration::ZERO
        } else if self.rate <= 0.0 {
            INF_DURATION
        } else {
            let nanos = (-tokens / self.rate) * 1e9;
            if nanos > i64::MAX as f64 {
                INF_DURATION
            } else {
                Duration::from_nanos(nanos as u64)
            }
        };
        bucket.tokens = tokens;
        bucket.last = Some(now);
        wait
    }
}

/// x/time/rate's `InfDuration`, the delay of a reservation that can never be
/// met: Go's longest `time.Duration`, `math.MaxInt64` nanoseconds (about 292
/// years).
///
/// ```
/// use faithful_workqueue::default_rate_limiters::{BucketRateLimiter, INF_DURATION, RateLimiter};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let never = BucketRateLimiter::new(10.0, 0); // a bucket that holds no token
/// assert_eq!(never.when(&"a"), INF_DURATION);
/// let once = BucketRateLimiter::new(0.0, 1); // one token, never refilled
/// assert_eq!(once.when(&"a"), Duration::ZERO);
/// assert_eq!(once.when(&"a"), INF_DURATION);
/// # }
/// ```
pub const INF_DURATION: Duration = Duration::from_nanos(i64::MAX as u64);

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }
    fn forget(&self, _item: &T) {}
    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
}

/// The worst of several limiters (upstream's `TypedMaxOfRateLimiter`): `when`
/// asks every limiter (each counts the failure) and returns the longest delay;
/// `num_requeues` is the largest count; `forget` forgets in all.
///
/// ```
/// use faithful_workqueue::default_rate_limiters::*;
/// use std::time::Duration;
///
/// let limiters: Vec<Box<dyn RateLimiter<&str>>> = vec![
///     Box::new(ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_secs(1))),
///     Box::new(ItemFastSlowRateLimiter::new(Duration::from_millis(20), Duration::from_secs(1), 1)),
/// ];
/// let limiter = MaxOfRateLimiter::new(limiters);
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(20)); // max(1ms, 20ms)
/// assert_eq!(limiter.when(&"a"), Duration::from_secs(1)); // max(2ms, 1s)
/// assert_eq!(limiter.num_requeues(&"a"), 2);
/// limiter.forget(&"a");
/// assert_eq!(limiter.num_requeues(&"a"), 0);
/// ```
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> MaxOfRateLimiter<T> {
    /// Combines `limiters`.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::{MaxOfRateLimiter, RateLimiter};
    /// use std::time::Duration;
    ///
    /// let none: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![]);
    /// assert_eq!(none.when(&"a"), Duration::ZERO); // no limiter: no delay
    /// assert_eq!(none.num_requeues(&"a"), 0);
    /// ```
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        Self { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|l| l.when(item))
            .fold(Duration::ZERO, Duration::max)
    }
    fn forget(&self, item: &T) {
        for l in &self.limiters {
            l.forget(item);
        }
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.limiters.iter().map(|l| l.num_requeues(item)).max().unwrap_or(0)
    }
}

/// Caps another limiter's delay at `max_delay` (upstream's
/// `TypedWithMaxWaitRateLimiter`).
///
/// ```
/// use faithful_workqueue::default_rate_limiters::*;
/// use std::time::Duration;
///
/// let slow = ItemFastSlowRateLimiter::new(Duration::from_secs(60), Duration::from_secs(60), 1);
/// let capped = WithMaxWaitRateLimiter::new(Box::new(slow), Duration::from_secs(10));
/// assert_eq!(capped.when(&"a"), Duration::from_secs(10));
/// assert_eq!(capped.num_requeues(&"a"), 1);
/// ```
pub struct WithMaxWaitRateLimiter<T> {
    limiter: Box<dyn RateLimiter<T>>,
    max_delay: Duration,
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// Wraps `limiter`.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::*;
    /// use std::time::Duration;
    ///
    /// let exp = ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::from_secs(1000));
    /// let capped = WithMaxWaitRateLimiter::new(Box::new(exp), Duration::from_secs(3));
    /// assert_eq!(capped.when(&"a"), Duration::from_secs(1));
    /// assert_eq!(capped.when(&"a"), Duration::from_secs(2));
    /// assert_eq!(capped.when(&"a"), Duration::from_secs(3)); // 4s, capped
    /// capped.forget(&"a"); // forwarded
    /// assert_eq!(capped.when(&"a"), Duration::from_secs(1));
    /// ```
    pub fn new(limiter: Box<dyn RateLimiter<T>>, max_delay: Duration) -> Self {
        Self { limiter, max_delay }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiter.when(item).min(self.max_delay)
    }
    fn forget(&self, item: &T) {
        self.limiter.forget(item)
    }
    fn num_requeues(&self, item: &T) -> usize {
        self.limiter.num_requeues(item)
    }
}

/// Exponential from 1ms to 1000s (upstream's `DefaultTypedItemBasedRateLimiter`).
///
/// ```
/// use faithful_workqueue::default_rate_limiters::{default_typed_item_based_rate_limiter, RateLimiter};
/// use std::time::Duration;
///
/// let limiter = default_typed_item_based_rate_limiter();
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(1));
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(2));
/// ```
pub fn default_typed_item_based_rate_limiter<T>()
-> ItemExponentialFailureRateLimiter<T> {
    ItemExponentialFailureRateLimiter::new(
        Duration::from_millis(1),
        Duration::from_secs(1000),
    )
}

/// The limiter a controller-runtime controller uses when the priority queue is
/// on, its default: exponential from 5ms to 1000s, and no bucket.
///
/// ```
/// use faithful_workqueue::default_rate_limiters::{priority_queue_default_rate_limiter, RateLimiter};
/// use std::time::Duration;
///
/// let limiter = priority_queue_default_rate_limiter();
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(5));
/// assert_eq!(limiter.when(&"a"), Duration::from_millis(10));
/// for _ in 0..30 {
///     limiter.when(&"a");
/// }
/// assert_eq!(limiter.when(&"a"), Duration::from_secs(1000)); // the cap
/// ```
pub fn priority_queue_default_rate_limiter<T>()
-> ItemExponentialFailureRateLimiter<T> {
    ItemExponentialFailureRateLimiter::new(
        Duration::from_millis(5),
        Duration::from_secs(1000),
    )
}

/// The maximum of exponential 5ms..1000s and a 10 qps, burst 100 bucket
/// (upstream's `DefaultTypedControllerRateLimiter`); controller-runtime uses it
/// when the priority queue is off.
///
/// ```
/// use faithful_workqueue::default_rate_limiters::{default_typed_controller_rate_limiter, RateLimiter};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let limiter = default_typed_controller_rate_limiter();
/// assert_eq!(limiter.when(&0u32), Duration::from_millis(5)); // the bucket is full: exponential wins
/// for key in 1..100u32 {
///     limiter.when(&key); // 99 more tokens: the bucket of 100 is empty
/// }
/// assert_eq!(limiter.when(&100), Duration::from_millis(100)); // now the bucket wins
/// assert_eq!(limiter.num_requeues(&0), 1);
/// # }
/// ```
pub fn default_typed_controller_rate_limiter<
    T: Clone + Eq + Hash + Send + 'static,
>() -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(priority_queue_default_rate_limiter()),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}
