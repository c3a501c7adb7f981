//! Port of client-go v0.37.2 `util/workqueue/default_rate_limiters_test.go`,
//! scenario by scenario, with upstream's expected values.
//!
//! These limiters do not read the clock, so the tests are plain `#[test]`s
//! (no runtime, no paused clock needed).
//!
//! Skipped upstream tests: none. (Upstream has no test for the bucket
//! limiter; none is invented here.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use faithful_workqueue::default_rate_limiters::{
    ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter,
};

const MS: Duration = Duration::from_millis(1);
const S: Duration = Duration::from_secs(1);
const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

// upstream: default_rate_limiters_test.go TestItemExponentialFailureRateLimiter
#[test]
fn test_item_exponential_failure_rate_limiter() {
    let limiter = ItemExponentialFailureRateLimiter::new(MS, S);

    assert_eq!(limiter.when(&"one"), MS);
    assert_eq!(limiter.when(&"one"), 2 * MS);
    assert_eq!(limiter.when(&"one"), 4 * MS);
    assert_eq!(limiter.when(&"one"), 8 * MS);
    assert_eq!(limiter.when(&"one"), 16 * MS);
    assert_eq!(limiter.num_requeues(&"one"), 5);

    assert_eq!(limiter.when(&"two"), MS);
    assert_eq!(limiter.when(&"two"), 2 * MS);
    assert_eq!(limiter.num_requeues(&"two"), 2);

    limiter.forget(&"one");
    assert_eq!(limiter.num_requeues(&"one"), 0);
    assert_eq!(limiter.when(&"one"), MS);
}

// upstream: default_rate_limiters_test.go TestItemExponentialFailureRateLimiterOverFlow
#[test]
fn test_item_exponential_failure_rate_limiter_over_flow() {
    let limiter = ItemExponentialFailureRateLimiter::new(MS, 1000 * S);
    for _ in 0..5 {
        limiter.when(&"one");
    }
    assert_eq!(limiter.when(&"one"), 32 * MS);

    for _ in 0..1000 {
        limiter.when(&"overflow1");
    }
    assert_eq!(limiter.when(&"overflow1"), 1000 * S);

    let limiter = ItemExponentialFailureRateLimiter::new(MINUTE, 1000 * HOUR);
    for _ in 0..2 {
        limiter.when(&"two");
    }
    assert_eq!(limiter.when(&"two"), 4 * MINUTE);

    for _ in 0..1000 {
        limiter.when(&"overflow2");
    }
    assert_eq!(limiter.when(&"overflow2"), 1000 * HOUR);
}

// upstream: default_rate_limiters_test.go TestItemFastSlowRateLimiter
#[test]
fn test_item_fast_slow_rate_limiter() {
    let limiter = ItemFastSlowRateLimiter::new(5 * MS, 10 * S, 3);

    assert_eq!(limiter.when(&"one"), 5 * MS);
    assert_eq!(limiter.when(&"one"), 5 * MS);
    assert_eq!(limiter.when(&"one"), 5 * MS);
    assert_eq!(limiter.when(&"one"), 10 * S);
    assert_eq!(limiter.when(&"one"), 10 * S);
    assert_eq!(limiter.num_requeues(&"one"), 5);

    assert_eq!(limiter.when(&"two"), 5 * MS);
    assert_eq!(limiter.when(&"two"), 5 * MS);
    assert_eq!(limiter.num_requeues(&"two"), 2);

    limiter.forget(&"one");
    assert_eq!(limiter.num_requeues(&"one"), 0);
    assert_eq!(limiter.when(&"one"), 5 * MS);
}

// upstream: default_rate_limiters_test.go TestMaxOfRateLimiter
#[test]
fn test_max_of_rate_limiter() {
    let limiter: MaxOfRateLimiter<&str> = MaxOfRateLimiter::new(vec![
        Box::new(ItemFastSlowRateLimiter::new(5 * MS, 3 * S, 3)),
        Box::new(ItemExponentialFailureRateLimiter::new(MS, S)),
    ]);

    assert_eq!(limiter.when(&"one"), 5 * MS);
    assert_eq!(limiter.when(&"one"), 5 * MS);
    assert_eq!(limiter.when(&"one"), 5 * MS);
    assert_eq!(limiter.when(&"one"), 3 * S);
    assert_eq!(limiter.when(&"one"), 3 * S);
    assert_eq!(limiter.num_requeues(&"one"), 5);

    assert_eq!(limiter.when(&"two"), 5 * MS);
    assert_eq!(limiter.when(&"two"), 5 * MS);
    assert_eq!(limiter.num_requeues(&"two"), 2);

    limiter.forget(&"one");
    assert_eq!(limiter.num_requeues(&"one"), 0);
    assert_eq!(limiter.when(&"one"), 5 * MS);
}

/// Upstream's test-only `StepRateLimiter`: `base_delay` for the first
/// `threshold` calls (whatever the item), then `max_delay`.
struct StepRateLimiter {
    count: AtomicUsize,
    threshold: usize,
    base_delay: Duration,
    max_delay: Duration,
}

impl StepRateLimiter {
    fn new(
        base_delay: Duration,
        max_delay: Duration,
        threshold: usize,
    ) -> Self {
        Self { count: AtomicUsize::new(0), threshold, base_delay, max_delay }
    }
}

impl<T> RateLimiter<T> for StepRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        let count = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        if count <= self.threshold { self.base_delay } else { self.max_delay }
    }
    fn num_requeues(&self, _item: &T) -> usize {
        0
    }
    fn forget(&self, _item: &T) {}
}

// upstream: default_rate_limiters_test.go TestWithMaxWaitRateLimiter
#[test]
fn test_with_max_wait_rate_limiter() {
    let limiter: WithMaxWaitRateLimiter<usize> = WithMaxWaitRateLimiter::new(
        Box::new(StepRateLimiter::new(5 * MS, 1000 * S, 100)),
        500 * S,
    );
    for i in 0..100 {
        assert_eq!(limiter.when(&i), 5 * MS, "call {i}");
    }

    for i in 100..200 {
        assert_eq!(limiter.when(&i), 500 * S, "call {i}");
    }
}
