//! Property tests: the limiters of `default_rate_limiters`, and the
//! rate-limiting queue built on them, against closed-form models, on tokio's
//! paused clock.
//!
//! Each case picks a limiter's parameters, then runs a random sequence of
//! `when(key)`, `forget(key)` and clock advances, comparing every `when` and,
//! after every step, `num_requeues` of every key with the model:
//!
//! * exponential (and its presets `default_typed_item_based_rate_limiter`,
//!   `priority_queue_default_rate_limiter`): the n-th `when` since the last
//!   `forget` of that key is `min(base · 2^(n−1), max)`, computed exactly in
//!   integers, with `max` itself at most `i64::MAX` nanoseconds (Go's longest
//!   duration, which no Go delay exceeds); past that the delay is `max`;
//! * fast/slow: `fast` for the first `max_fast_attempts` `when`s since the
//!   last `forget`, then `slow`;
//! * bucket: a debt clock. The bucket is full when the debt is zero; each
//!   `when` adds one token's worth of time (`1/rate`) to the debt, time pays
//!   it back, and the wait is whatever debt exceeds `burst` tokens' worth;
//! * max-of and with-max-wait: the maximum of their parts' models, and the
//!   minimum of that and the cap; `default_typed_controller_rate_limiter`
//!   is the max of exponential 5ms..1000s and a 10/s, burst 100 bucket;
//! * `num_requeues` counts the `when`s since the last `forget` of that key
//!   (the bucket counts nothing, and `forget` does nothing to it).
//!
//! The bucket, like `golang.org/x/time/rate`, works in float64 seconds and
//! truncates to whole nanoseconds, so its waits are compared to the exact
//! model within 1ns. Rates are chosen so that one token is a whole number of
//! nanoseconds, which keeps the exact model in integers.
//!
//! Degenerate buckets follow x/time/rate v0.15.0's `reserveN`: a zero rate
//! hands out the `burst` tokens the bucket starts with at once and then
//! `InfDuration` for ever; a zero burst refuses every reservation
//! (`InfDuration`, nothing taken). The crate first got both wrong (never, from
//! the first call; and waits of 1/rate, 2/rate, ...), which these properties
//! found.
//!
//! What the models leave out, on purpose: concurrent callers.
//!
//! The last property checks the rate-limiting queue's composition rather
//! than a formula: `add_rate_limited` must be `add_after(item, when(item))`,
//! and `forget` and `num_requeues` must only reach the limiter. It runs the
//! same operations on a `RateLimitingQueue` and on a `DelayingQueue` beside a
//! separate limiter (both checked on their own above and in
//! `delaying_queue_properties`), and compares the two after every step.
//!
//! Failures print the crate's answer first ("got", or `left`) and the
//! model's second ("model", or `right`).
//!
//! 256 cases per property, from a fixed seed, so a run is reproducible and
//! writes no `proptest-regressions/` file. Sequences are up to 40 to 60
//! operations, 96 where the exponential limiter must double past its cap or
//! past Go's longest duration, and 300 where a bucket of 100 must run dry.
//! For more cases:
//!
//! ```text
//! PROPTEST_CASES=10000 cargo test -p faithful-workqueue --test rate_limiter_properties
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use faithful_workqueue::default_rate_limiters::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter, MaxOfRateLimiter, RateLimiter,
    WithMaxWaitRateLimiter, default_typed_controller_rate_limiter,
    default_typed_item_based_rate_limiter, priority_queue_default_rate_limiter,
};
use faithful_workqueue::delaying_queue::DelayingQueue;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError};

type Key = u8;
type Millis = u64;

const KEYS: Key = 3;
const NANOS_PER_SEC: u64 = 1_000_000_000;
/// Go's longest `time.Duration`.
const GO_MAX_NANOS: u64 = i64::MAX as u64;
const GO_MAX_DURATION: Duration = Duration::from_nanos(GO_MAX_NANOS);

fn config() -> Config {
    // No `cases` here: `Config::default()` reads `PROPTEST_CASES` (256 without it).
    Config {
        rng_seed: RngSeed::Fixed(0x0B0F_F0FF),
        failure_persistence: None,
        ..Config::default()
    }
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

#[derive(Clone, Debug)]
enum Op {
    When(Key),
    Forget(Key),
    Advance(Millis),
}

fn ops(
    keys: Key,
    max_advance: Millis,
    when_weight: u32,
    max_len: usize,
) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        when_weight => (0..keys).prop_map(Op::When),
        1 => (0..keys).prop_map(Op::Forget),
        1 => (0..=max_advance).prop_map(Op::Advance),
    ];
    prop::collection::vec(op, 0..=max_len)
}

/// What a limiter should answer, given everything asked of it so far.
trait LimiterModel {
    fn when(&mut self, key: Key) -> Duration;
    fn forget(&mut self, key: Key);
    fn num_requeues(&self, key: Key) -> usize;
    fn advance(&mut self, _by: Millis) {}
}

/// The `when`s of each key since its last `forget`.
#[derive(Debug, Default)]
struct Failures(BTreeMap<Key, usize>);

impl Failures {
    /// Counts one more failure, returning how many came before it.
    fn count(&mut self, key: Key) -> usize {
        let failures = self.0.entry(key).or_insert(0);
        *failures += 1;
        *failures - 1
    }
    fn forget(&mut self, key: Key) {
        self.0.remove(&key);
    }
    fn get(&self, key: Key) -> usize {
        self.0.get(&key).copied().unwrap_or(0)
    }
}

#[derive(Debug)]
struct ExponentialModel {
    base: Duration,
    max: Duration,
    failures: Failures,
}

fn exponential_delay(
    base: Duration,
    max: Duration,
    earlier_failures: usize,
) -> Duration {
    let max = max.min(GO_MAX_DURATION);
    let base_nanos = base.as_nanos();
    if base_nanos == 0 {
        return Duration::ZERO;
    }
    // base >= 1ns, so from 2^63 on the product is past Go's longest duration.
    if earlier_failures >= 63 {
        return max;
    }
    let backoff = base_nanos << earlier_failures;
    if backoff > GO_MAX_DURATION.as_nanos() {
        return max;
    }
    Duration::from_nanos(u64::try_from(backoff).unwrap()).min(max)
}

impl LimiterModel for ExponentialModel {
    fn when(&mut self, key: Key) -> Duration {
        exponential_delay(self.base, self.max, self.failures.count(key))
    }
    fn forget(&mut self, key: Key) {
        self.failures.forget(key);
    }
    fn num_requeues(&self, key: Key) -> usize {
        self.failures.get(key)
    }
}

#[derive(Debug)]
struct FastSlowModel {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: usize,
    failures: Failures,
}

impl LimiterModel for FastSlowModel {
    fn when(&mut self, key: Key) -> Duration {
        let attempt = self.failures.count(key) + 1;
        if attempt <= self.max_fast_attempts { self.fast } else { self.slow }
    }
    fn forget(&mut self, key: Key) {
        self.failures.forget(key);
    }
    fn num_requeues(&self, key: Key) -> usize {
        self.failures.get(key)
    }
}

#[derive(Debug)]
struct BucketModel {
    token_nanos: u128,
    burst: u128,
    /// How long until the bucket is full again.
    debt_nanos: u128,
}

impl BucketModel {
    fn new(rate_per_sec: u64, burst: usize) -> Self {
        assert_eq!(
            NANOS_PER_SEC % rate_per_sec,
            0,
            "one token must be a whole number of nanoseconds"
        );
        Self {
            token_nanos: u128::from(NANOS_PER_SEC / rate_per_sec),
            burst: burst as u128,
            debt_nanos: 0,
        }
    }
}

impl LimiterModel for BucketModel {
    fn when(&mut self, _key: Key) -> Duration {
        self.debt_nanos += self.token_nanos;
        let wait =
            self.debt_nanos.saturating_sub(self.burst * self.token_nanos);
        Duration::from_nanos(u64::try_from(wait).unwrap())
    }
    fn forget(&mut self, _key: Key) {}
    fn num_requeues(&self, _key: Key) -> usize {
        0
    }
    fn advance(&mut self, by: Millis) {
        self.debt_nanos =
            self.debt_nanos.saturating_sub(u128::from(by) * 1_000_000);
    }
}

/// A bucket that refills nothing (rate 0) or holds nothing (burst 0).
#[derive(Debug)]
struct DegenerateBucketModel {
    tokens_left: usize,
}

impl LimiterModel for DegenerateBucketModel {
    fn when(&mut self, _key: Key) -> Duration {
        match self.tokens_left.checked_sub(1) {
            Some(left) => {
                self.tokens_left = left;
                Duration::ZERO
            }
            None => GO_MAX_DURATION, // x/time/rate's InfDuration
        }
    }
    fn forget(&mut self, _key: Key) {}
    fn num_requeues(&self, _key: Key) -> usize {
        0
    }
    fn advance(&mut self, _by: Millis) {}
}

struct MaxOfModel(Vec<Box<dyn LimiterModel>>);

impl LimiterModel for MaxOfModel {
    fn when(&mut self, key: Key) -> Duration {
        self.0
            .iter_mut()
            .map(|model| model.when(key))
            .max()
            .unwrap_or(Duration::ZERO)
    }
    fn forget(&mut self, key: Key) {
        self.0.iter_mut().for_each(|model| model.forget(key));
    }
    fn num_requeues(&self, key: Key) -> usize {
        self.0.iter().map(|model| model.num_requeues(key)).max().unwrap_or(0)
    }
    fn advance(&mut self, by: Millis) {
        self.0.iter_mut().for_each(|model| model.advance(by));
    }
}

struct WithMaxWaitModel(Box<dyn LimiterModel>, Duration);

impl LimiterModel for WithMaxWaitModel {
    fn when(&mut self, key: Key) -> Duration {
        self.0.when(key).min(self.1)
    }
    fn forget(&mut self, key: Key) {
        self.0.forget(key);
    }
    fn num_requeues(&self, key: Key) -> usize {
        self.0.num_requeues(key)
    }
    fn advance(&mut self, by: Millis) {
        self.0.advance(by);
    }
}

/// Runs `ops` on both, in a fresh paused runtime, comparing `when` within
/// `tolerance` and `num_requeues` of every key exactly.
fn run(
    limiter: &dyn RateLimiter<Key>,
    model: &mut dyn LimiterModel,
    ops: &[Op],
    keys: Key,
    tolerance: Duration,
) -> Result<(), TestCaseError> {
    paused_runtime().block_on(async {
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::When(key) => {
                    let got = limiter.when(&key);
                    let want = model.when(key);
                    prop_assert!(
                        got.abs_diff(want) <= tolerance,
                        "when({}) at step {}: got {:?}, model {:?}",
                        key,
                        step,
                        got,
                        want
                    );
                }
                Op::Forget(key) => {
                    limiter.forget(&key);
                    model.forget(key);
                }
                Op::Advance(by) => {
                    tokio::time::advance(Duration::from_millis(by)).await;
                    model.advance(by);
                }
            }
            for key in 0..keys {
                prop_assert_eq!(
                    limiter.num_requeues(&key),
                    model.num_requeues(key),
                    "num_requeues({}) after step {} ({:?})",
                    key,
                    step,
                    op
                );
            }
        }
        Ok(())
    })
}

fn interesting_duration(max_nanos: u64) -> impl Strategy<Value = Duration> {
    prop_oneof![
        1 => Just(Duration::ZERO),
        1 => Just(Duration::from_nanos(1)),
        1 => Just(Duration::from_millis(1)),
        1 => Just(Duration::from_millis(5)),
        1 => Just(Duration::from_secs(1)),
        4 => (0..=max_nanos).prop_map(Duration::from_nanos),
    ]
}

#[derive(Clone, Debug)]
enum ExponentialSetup {
    Custom { base: Duration, max: Duration },
    DefaultItemBased,
    PriorityQueueDefault,
}

fn exponential_setup() -> impl Strategy<Value = ExponentialSetup> {
    let base = prop_oneof![
        4 => interesting_duration(3_600 * NANOS_PER_SEC),
        1 => Just(Duration::from_secs(3_600)),
        // Doubles onto exactly 2^63ns, one past Go's longest duration, where
        // upstream's float64-to-Duration conversion overflows (to a negative
        // delay on amd64) and the crate's guard returns `max`.
        1 => Just(Duration::from_nanos(1 << 40)),
    ];
    let max = prop_oneof![
        4 => interesting_duration(GO_MAX_NANOS),
        1 => Just(Duration::from_secs(1_000)),
        1 => Just(GO_MAX_DURATION),
        // Longer than any Go duration: the crate caps it at Go's longest.
        1 => Just(Duration::MAX),
    ];
    prop_oneof![
        4 => (base, max).prop_map(|(base, max)| ExponentialSetup::Custom { base, max }),
        1 => Just(ExponentialSetup::DefaultItemBased),
        1 => Just(ExponentialSetup::PriorityQueueDefault),
    ]
}

/// Rates whose token is a whole number of nanoseconds.
fn bucket_rate() -> impl Strategy<Value = u64> {
    prop::sample::select(vec![1, 2, 4, 5, 8, 10, 20, 25, 50, 100, 1_000])
}

fn bucket_burst() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 1..=5usize, 1 => Just(100usize)]
}

fn bucket_limiter(rate_per_sec: u64, burst: usize) -> BucketRateLimiter {
    BucketRateLimiter::new(rate_per_sec as f64, burst)
}

/// One float64 reservation, truncated to nanoseconds, may fall 1ns short.
const BUCKET_TOLERANCE: Duration = Duration::from_nanos(1);

proptest! {
    #![proptest_config(config())]

    #[test]
    fn exponential_limiter_doubles_per_key_up_to_its_cap(
        setup in exponential_setup(),
        ops in ops(KEYS, 1_000, 8, 96),
    ) {
        let (limiter, base, max) = match setup {
            ExponentialSetup::Custom { base, max } => (ItemExponentialFailureRateLimiter::new(base, max), base, max),
            ExponentialSetup::DefaultItemBased => {
                (default_typed_item_based_rate_limiter(), Duration::from_millis(1), Duration::from_secs(1_000))
            }
            ExponentialSetup::PriorityQueueDefault => {
                (priority_queue_default_rate_limiter(), Duration::from_millis(5), Duration::from_secs(1_000))
            }
        };
        let mut model = ExponentialModel { base, max, failures: Failures::default() };
        run(&limiter, &mut model, &ops, KEYS, Duration::ZERO)?;
    }

    #[test]
    fn fast_slow_limiter_is_fast_for_the_first_attempts_only(
        fast in interesting_duration(60 * NANOS_PER_SEC),
        slow in interesting_duration(3_600 * NANOS_PER_SEC),
        max_fast_attempts in 0..=5usize,
        ops in ops(KEYS, 1_000, 4, 40),
    ) {
        let limiter = ItemFastSlowRateLimiter::new(fast, slow, max_fast_attempts);
        let mut model = FastSlowModel { fast, slow, max_fast_attempts, failures: Failures::default() };
        run(&limiter, &mut model, &ops, KEYS, Duration::ZERO)?;
    }

    #[test]
    fn bucket_limiter_waits_out_the_debt_beyond_its_burst(
        rate in bucket_rate(),
        burst in bucket_burst(),
        ops in ops(KEYS, 300, 4, 60),
    ) {
        let limiter = bucket_limiter(rate, burst);
        let mut model = BucketModel::new(rate, burst);
        run(&limiter, &mut model, &ops, KEYS, BUCKET_TOLERANCE)?;
    }

    #[test]
    fn degenerate_buckets_hand_out_what_they_start_with_then_never(
        zero_rate in any::<bool>(),
        rate in bucket_rate(),
        burst in 0..=5usize,
        ops in ops(KEYS, 300, 4, 40),
    ) {
        // Either no refill (rate 0, any burst) or no room (burst 0, any rate).
        let (rate, burst) = if zero_rate { (0, burst) } else { (rate, 0) };
        let limiter = bucket_limiter(rate, burst);
        let mut model = DegenerateBucketModel { tokens_left: burst };
        run(&limiter, &mut model, &ops, KEYS, Duration::ZERO)?;
    }

    #[test]
    fn max_of_and_max_wait_combine_their_parts(
        base in interesting_duration(NANOS_PER_SEC),
        max in interesting_duration(3_600 * NANOS_PER_SEC),
        fast in interesting_duration(NANOS_PER_SEC),
        slow in interesting_duration(60 * NANOS_PER_SEC),
        max_fast_attempts in 0..=3usize,
        rate in bucket_rate(),
        burst in bucket_burst(),
        cap in interesting_duration(60 * NANOS_PER_SEC),
        ops in ops(KEYS, 300, 4, 60),
    ) {
        let parts: Vec<Box<dyn RateLimiter<Key>>> = vec![
            Box::new(ItemExponentialFailureRateLimiter::new(base, max)),
            Box::new(ItemFastSlowRateLimiter::new(fast, slow, max_fast_attempts)),
            Box::new(bucket_limiter(rate, burst)),
        ];
        let limiter = WithMaxWaitRateLimiter::new(Box::new(MaxOfRateLimiter::new(parts)), cap);
        let part_models: Vec<Box<dyn LimiterModel>> = vec![
            Box::new(ExponentialModel { base, max, failures: Failures::default() }),
            Box::new(FastSlowModel { fast, slow, max_fast_attempts, failures: Failures::default() }),
            Box::new(BucketModel::new(rate, burst)),
        ];
        let mut model = WithMaxWaitModel(Box::new(MaxOfModel(part_models)), cap);
        run(&limiter, &mut model, &ops, KEYS, BUCKET_TOLERANCE)?;
    }

    #[test]
    fn default_controller_limiter_is_exponential_until_the_bucket_runs_dry(
        ops in ops(4, 50, 12, 300),
    ) {
        let limiter = default_typed_controller_rate_limiter();
        let mut model = MaxOfModel(vec![
            Box::new(ExponentialModel {
                base: Duration::from_millis(5),
                max: Duration::from_secs(1_000),
                failures: Failures::default(),
            }),
            Box::new(BucketModel::new(10, 100)),
        ]);
        run(&limiter, &mut model, &ops, 4, BUCKET_TOLERANCE)?;
    }

    #[test]
    fn rate_limiting_queue_is_a_delaying_queue_asking_its_limiter(
        ops in prop::collection::vec(queue_op(), 0..=40),
    ) {
        run_queue_composition(&ops)?;
    }
}

#[derive(Clone, Debug)]
enum QueueOp {
    AddRateLimited(Key),
    Forget(Key),
    Add(Key),
    Advance(Millis),
    /// Taken only when the FIFO has an item, so it never waits.
    Get,
    Done(Key),
    ShutDown,
}

fn queue_op() -> impl Strategy<Value = QueueOp> {
    prop_oneof![
        6 => (0..KEYS).prop_map(QueueOp::AddRateLimited),
        2 => (0..KEYS).prop_map(QueueOp::Forget),
        1 => (0..KEYS).prop_map(QueueOp::Add),
        4 => (0..=10u64).prop_map(QueueOp::Advance),
        4 => Just(QueueOp::Get),
        3 => (0..KEYS).prop_map(QueueOp::Done),
        1 => Just(QueueOp::ShutDown),
    ]
}

/// Short and capped, so entries keep coming due within a few advances.
fn composition_limiter() -> ItemExponentialFailureRateLimiter<Key> {
    ItemExponentialFailureRateLimiter::new(
        Duration::from_millis(1),
        Duration::from_millis(8),
    )
}

fn run_queue_composition(ops: &[QueueOp]) -> Result<(), TestCaseError> {
    paused_runtime().block_on(async {
        let queue = RateLimitingQueue::new(composition_limiter());
        let parts = DelayingQueue::new();
        let parts_limiter = composition_limiter();
        for (step, op) in ops.iter().enumerate() {
            match *op {
                QueueOp::AddRateLimited(key) => {
                    queue.add_rate_limited(key);
                    parts.add_after(key, parts_limiter.when(&key));
                }
                QueueOp::Forget(key) => {
                    queue.forget(&key);
                    parts_limiter.forget(&key);
                }
                QueueOp::Add(key) => {
                    queue.add(key);
                    parts.add(key);
                }
                QueueOp::Advance(by) => {
                    tokio::time::advance(Duration::from_millis(by)).await
                }
                QueueOp::Get => {
                    if !parts.is_empty() {
                        let got = tokio::time::timeout(
                            Duration::from_millis(1),
                            queue.get(),
                        )
                        .await;
                        let want = parts.get().await;
                        prop_assert_eq!(got, Ok(want), "get at step {}", step);
                    }
                }
                QueueOp::Done(key) => {
                    queue.done(&key);
                    parts.done(&key);
                }
                QueueOp::ShutDown => {
                    queue.shut_down();
                    parts.shut_down();
                }
            }
            prop_assert_eq!(
                queue.queue().debug_state(),
                parts.queue().debug_state(),
                "collections after step {} ({:?})",
                step,
                op
            );
            prop_assert_eq!(
                queue.len(),
                parts.len(),
                "len after step {} ({:?})",
                step,
                op
            );
            prop_assert_eq!(
                queue.waiting_len(),
                parts.waiting_len(),
                "waiting_len after step {} ({:?})",
                step,
                op
            );
            prop_assert_eq!(
                queue.shutting_down(),
                parts.shutting_down(),
                "shutting_down after step {} ({:?})",
                step,
                op
            );
            for key in 0..KEYS {
                prop_assert_eq!(
                    queue.num_requeues(&key),
                    parts_limiter.num_requeues(&key),
                    "num_requeues({}) after step {} ({:?})",
                    key,
                    step,
                    op
                );
            }
        }
        Ok(())
    })
}
