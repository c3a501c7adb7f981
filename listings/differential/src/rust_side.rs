//! The Rust side: a script on `faithful_workqueue`'s `RateLimitingQueue` (or,
//! for a `queue pq` script, on its `PriorityQueue`: see [`crate::pq_side`]), on
//! a fresh current-thread tokio runtime whose clock is paused.
//!
//! A [`Session`] also keeps a small model of what the queue holds: the items
//! handed out and not done, and the ready time of every pending waiting entry.
//! The generator uses it to choose ops; [`run_script`] uses it to flag scripts
//! that are ambiguous in Go: upstream's waiting heap (`container/heap`) is not
//! stable, so two entries with the same ready time may come out in either
//! order.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use faithful_workqueue::default_rate_limiters::ItemExponentialFailureRateLimiter;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use tokio::runtime::Runtime;

use crate::pq_side::PqSession;
use crate::script::{Op, QueueKind, Script};

/// The limiter's base delay.
pub const BASE_DELAY: Duration = Duration::from_millis(5);
/// The limiter's maximum delay.
pub const MAX_DELAY: Duration = Duration::from_secs(1000);

/// A deliberate bug in the Rust side, to show that the harness catches one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `forget x` also calls `done x`: the confusion the book is named after
    /// (on either queue).
    ForgetAlsoDone,
}

/// The delay `ItemExponentialFailureRateLimiter(5ms, 1000s)` gives an item
/// that has failed `requeues` times before.
pub fn exponential_delay(requeues: usize) -> Duration {
    let backoff = BASE_DELAY.as_nanos() as f64
        * 2f64.powi(i32::try_from(requeues).unwrap_or(i32::MAX));
    if backoff > i64::MAX as f64 {
        return MAX_DELAY;
    }
    Duration::from_nanos(backoff as u64).min(MAX_DELAY)
}

/// One script's queue, runtime and model.
pub struct Session {
    rt: Runtime,
    queue: RateLimitingQueue<String>,
    fault: Option<Fault>,
    /// Time since the session started.
    now: Duration,
    /// Ready time (since start) of each item's pending waiting entry.
    pending: HashMap<String, Duration>,
    /// Items handed out by `get` and not yet `done` (upstream's processing set).
    processing: BTreeSet<String>,
}

impl Default for Session {
    fn default() -> Self {
        Self::new(None)
    }
}

impl Session {
    /// A fresh queue on a fresh paused runtime.
    pub fn new(fault: Option<Fault>) -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread runtime");
        let queue = rt.block_on(async {
            RateLimitingQueue::new(ItemExponentialFailureRateLimiter::new(
                BASE_DELAY, MAX_DELAY,
            ))
        });
        Self {
            rt,
            queue,
            fault,
            now: Duration::ZERO,
            pending: HashMap::new(),
            processing: BTreeSet::new(),
        }
    }

    /// Whether the queue has been shut down.
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }

    /// The items handed out and not done, in order.
    pub fn processing(&self) -> &BTreeSet<String> {
        &self.processing
    }

    /// The limiter's count for `item` (a pure read).
    pub fn num_requeues(&self, item: &str) -> usize {
        self.queue.num_requeues(&item.to_string())
    }

    /// The ready time (since start) a waiting entry for `item` would get from
    /// `op`, or `None` if `op` creates or moves no waiting entry.
    fn new_ready_time(&self, op: &Op) -> Option<(String, Duration)> {
        if self.shutting_down() {
            return None; // AddAfter returns at once after shutdown
        }
        let (item, delay) = match op {
            Op::AddAfter(x, d) => (x, *d),
            Op::AddRateLimited(x) => {
                (x, exponential_delay(self.num_requeues(x)))
            }
            _ => return None,
        };
        if delay.is_zero() {
            return None; // added synchronously
        }
        let at = self.now + delay;
        match self.pending.get(item) {
            Some(&existing) if at >= existing => None, // the earlier time is kept
            _ => Some((item.clone(), at)),
        }
    }

    /// Whether `op` would give a waiting entry the same ready time as another
    /// item's pending entry, which Go's heap may then pop in either order.
    pub fn would_tie(&self, op: &Op) -> bool {
        match self.new_ready_time(op) {
            Some((item, at)) => {
                self.pending.iter().any(|(other, &t)| *other != item && t == at)
            }
            None => false,
        }
    }

    /// Runs `op` and returns its observation.
    pub fn apply(&mut self, op: &Op) -> String {
        if let Some((item, at)) = self.new_ready_time(op) {
            self.pending.insert(item, at);
        }
        let queue = &self.queue;
        let (obs, got) = self.rt.block_on(async {
            match op {
                Op::Add(x) => queue.add(x.clone()),
                Op::Get => {
                    if queue.is_empty() && !queue.shutting_down() {
                        return ("empty".to_string(), None); // get would block
                    }
                    return match queue.get().await {
                        Some(x) => (x.clone(), Some(x)),
                        None => ("shutdown".to_string(), None),
                    };
                }
                Op::Done(x) => queue.done(x),
                Op::Forget(x) => {
                    queue.forget(x);
                    if self.fault == Some(Fault::ForgetAlsoDone) {
                        queue.done(x);
                    }
                }
                Op::AddRateLimited(x) => queue.add_rate_limited(x.clone()),
                Op::AddAfter(x, d) => queue.add_after(x.clone(), *d),
                Op::AddWithOpts(..) => {
                    unreachable!("add_with_opts is parsed for `queue pq` only")
                }
                Op::Len => return (queue.len().to_string(), None),
                Op::NumRequeues(x) => {
                    return (queue.num_requeues(x).to_string(), None);
                }
                Op::ShutDown => queue.shut_down(),
                Op::Step(d) => tokio::time::advance(*d).await,
            }
            ("ok".to_string(), None)
        });
        match op {
            Op::Get => {
                if let Some(x) = got {
                    self.processing.insert(x);
                }
            }
            Op::Done(x) => {
                self.processing.remove(x);
            }
            Op::Forget(x) if self.fault == Some(Fault::ForgetAlsoDone) => {
                self.processing.remove(x);
            }
            Op::Step(d) => {
                self.now += *d;
                let now = self.now;
                self.pending.retain(|_, at| *at > now);
            }
            Op::ShutDown => self.pending.clear(),
            _ => {}
        }
        obs
    }
}

/// What running a script on the Rust side gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RustRun {
    /// One observation per op.
    pub observations: Vec<String>,
    /// The index of the first op from which the script's Go result is not
    /// determined (client-go: two equal ready times) or Go panics (priority
    /// queue: a second `shut_down`), if any. Such a script is never a divergence.
    pub ambiguous_at: Option<usize>,
    /// The queue the script ran on.
    pub queue: QueueKind,
}

impl RustRun {
    /// The first op from which the script is not held to Go: ambiguous.
    pub fn excluded_at(&self) -> Option<usize> {
        self.ambiguous_at
    }

    /// Why [`ambiguous_at`](RustRun::ambiguous_at) is set, for a report.
    pub fn ambiguity(&self) -> &'static str {
        match self.queue {
            QueueKind::ClientGo => "equal ready times",
            QueueKind::Priority => "a second shut_down, which panics in Go",
        }
    }
}

/// Runs a script on a fresh queue of its kind.
pub fn run_script(script: &Script, fault: Option<Fault>) -> RustRun {
    let mut ambiguous_at = None;
    let mut observations = Vec::with_capacity(script.ops.len());
    match script.queue {
        QueueKind::ClientGo => {
            let mut session = Session::new(fault);
            for (i, op) in script.ops.iter().enumerate() {
                if ambiguous_at.is_none() && session.would_tie(op) {
                    ambiguous_at = Some(i);
                }
                observations.push(session.apply(op));
            }
        }
        QueueKind::Priority => {
            let mut session = PqSession::new(fault);
            for (i, op) in script.ops.iter().enumerate() {
                if ambiguous_at.is_none() && session.would_panic_in_go(op) {
                    ambiguous_at = Some(i);
                }
                observations.push(session.apply(op));
            }
        }
    }
    RustRun { observations, ambiguous_at, queue: script.queue }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::parse_scripts;

    fn obs(text: &str) -> RustRun {
        run_script(&parse_scripts(text).unwrap()[0], None)
    }

    #[test]
    fn a_small_script() {
        let run = obs(
            "add a\nadd_after b 10ms\nadd_rate_limited c\nlen\nstep 5ms\nlen\nget\nget\n\
                       step 5ms\nget\nnum_requeues c\nget\n",
        );
        assert_eq!(
            run.observations,
            [
                "ok", "ok", "ok", "1", "ok", "2", "a", "c", "ok", "b", "1",
                "empty"
            ]
        );
        assert_eq!(run.ambiguous_at, None);
    }

    #[test]
    fn get_after_shutdown() {
        assert_eq!(
            obs("add a\nshut_down\nget\nget\nadd b\nlen\n").observations,
            ["ok", "ok", "a", "shutdown", "ok", "0"]
        );
    }

    #[test]
    fn equal_ready_times_are_ambiguous() {
        assert_eq!(
            obs("add_after a 5ms\nadd_rate_limited b\n").ambiguous_at,
            Some(1)
        );
        // The same item again is not a tie: the earlier entry is kept.
        assert_eq!(
            obs("add_after a 5ms\nadd_after a 5ms\nadd_rate_limited a\n")
                .ambiguous_at,
            None
        );
        // Nor is a time equal to an entry that has already fired.
        assert_eq!(obs("add_after a 5ms\nstep 5ms\nadd_after b 0ms\nstep 0ms\nadd_after b 0ms\n").ambiguous_at, None);
        assert_eq!(
            obs("add_after a 10ms\nstep 5ms\nadd_after b 5ms\n").ambiguous_at,
            Some(2)
        );
    }

    #[test]
    fn exponential_delays() {
        assert_eq!(exponential_delay(0), Duration::from_millis(5));
        assert_eq!(exponential_delay(3), Duration::from_millis(40));
        assert_eq!(exponential_delay(30), MAX_DELAY);
        assert_eq!(exponential_delay(5000), MAX_DELAY);
    }
}
