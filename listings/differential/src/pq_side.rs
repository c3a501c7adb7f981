//! The Rust side of a `queue pq` script: `faithful_workqueue`'s
//! `PriorityQueue` with `ItemExponentialFailureRateLimiter(5ms, 1000s)`, on a
//! fresh current-thread tokio runtime whose clock is paused.
//!
//! `get` is `get_with_priority`, polled **once**: if it is not ready at once
//! it would block (no ready entry that is not locked, and not shut down), the
//! observation is `blocked`, the future is dropped (a pending poll changes
//! nothing), and the rest of the script is not run (`-`). The Go replayer
//! does the same from its own side: it calls `GetWithPriority` on a goroutine
//! and, if that is still blocked once the bubble is idle, reports `blocked`,
//! shuts the queue down to release it, and runs nothing more. So whether a
//! `get` blocks is itself compared; the generator emits a blocking `get` only
//! now and then, as a script's last op.
//!
//! Nothing in the priority queue is ordered arbitrarily: both b-trees order by
//! keys that end in the unique `AddedCounter` (`priorityqueue.go:562-574`), so
//! no script is ambiguous, except one with a second `shut_down`, which panics
//! in Go (`close(w.done)` twice, `priorityqueue.go:500-503`) and is a no-op here.

use std::collections::BTreeSet;
use std::future::Future;
use std::task::Poll;
use std::time::Duration;

use faithful_workqueue::default_rate_limiters::ItemExponentialFailureRateLimiter;
use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue};
use tokio::runtime::Runtime;

use crate::rust_side::{BASE_DELAY, Fault, MAX_DELAY};
use crate::script::{Op, Opts};

/// The observation of a `get` that would block; the script stops there.
pub const BLOCKED: &str = "blocked";
/// The observation of an op after a blocked `get`: not run.
pub const NOT_RUN: &str = "-";

/// The `AddOpts` an op stands for, with the items, if it is an add.
pub fn add_opts(op: &Op) -> Option<(Vec<String>, AddOpts)> {
    let opts = |o: &Opts| AddOpts {
        after: o.after.unwrap_or(Duration::ZERO),
        rate_limited: o.rate_limited.unwrap_or(false),
        priority: o.priority,
    };
    Some(match op {
        Op::Add(x) => (vec![x.clone()], AddOpts::default()),
        Op::AddAfter(x, d) => (
            vec![x.clone()],
            opts(&Opts { after: Some(*d), ..Opts::default() }),
        ),
        Op::AddRateLimited(x) => (
            vec![x.clone()],
            opts(&Opts { rate_limited: Some(true), ..Opts::default() }),
        ),
        Op::AddWithOpts(items, o) => (items.clone(), opts(o)),
        _ => return None,
    })
}

/// One `queue pq` script's queue, runtime and model.
pub struct PqSession {
    rt: Runtime,
    queue: PriorityQueue<String>,
    fault: Option<Fault>,
    /// Items handed out by `get` and not yet `done` (upstream's `locked`).
    locked: BTreeSet<String>,
    /// `shut_down` has run.
    shut: bool,
    /// A `get` blocked: the rest of the script is not run.
    blocked: bool,
}

impl PqSession {
    /// A fresh queue on a fresh paused runtime.
    pub fn new(fault: Option<Fault>) -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a current-thread runtime");
        let queue = rt.block_on(async {
            PriorityQueue::with_rate_limiter(
                ItemExponentialFailureRateLimiter::new(BASE_DELAY, MAX_DELAY),
            )
        });
        Self {
            rt,
            queue,
            fault,
            locked: BTreeSet::new(),
            shut: false,
            blocked: false,
        }
    }

    /// Whether `shut_down` has run.
    pub fn shutting_down(&self) -> bool {
        self.shut
    }

    /// The items handed out and not done, in order.
    pub fn locked(&self) -> &BTreeSet<String> {
        &self.locked
    }

    /// Whether a `get` blocked (so the rest of the script is not run).
    pub fn is_blocked(&self) -> bool {
        self.blocked
    }

    /// Takes back a blocked `get` (the generator's probe): its poll changed
    /// nothing, so the session goes on as if it had not been tried.
    pub fn unblock(&mut self) {
        self.blocked = false;
    }

    /// Whether Go would panic on `op`: a second `ShutDown`.
    pub fn would_panic_in_go(&self, op: &Op) -> bool {
        !self.blocked && self.shut && *op == Op::ShutDown
    }

    /// Runs `op` and returns its observation.
    pub fn apply(&mut self, op: &Op) -> String {
        if self.blocked {
            return NOT_RUN.to_string();
        }
        // The queue reads tokio's (paused) clock: run every call in the runtime.
        let _runtime = self.rt.enter();
        let queue = &self.queue;
        if let Some((items, opts)) = add_opts(op) {
            queue.add_with_opts(opts, items);
            return "ok".to_string();
        }
        match op {
            Op::Get => {
                let got = self.rt.block_on(async {
                    let mut get = std::pin::pin!(queue.get_with_priority());
                    std::future::poll_fn(|cx| {
                        Poll::Ready(get.as_mut().poll(cx))
                    })
                    .await
                });
                match got {
                    Poll::Ready(Some((x, priority))) => {
                        self.locked.insert(x.clone());
                        format!("{x}@{priority}")
                    }
                    Poll::Ready(None) => "shutdown".to_string(),
                    Poll::Pending => {
                        self.blocked = true;
                        BLOCKED.to_string()
                    }
                }
            }
            Op::Done(x) => {
                queue.done(x);
                self.locked.remove(x);
                "ok".to_string()
            }
            Op::Forget(x) => {
                queue.forget(x);
                if self.fault == Some(Fault::ForgetAlsoDone) {
                    queue.done(x);
                    self.locked.remove(x);
                }
                "ok".to_string()
            }
            Op::Len => queue.len().to_string(),
            Op::NumRequeues(x) => queue.num_requeues(x).to_string(),
            Op::ShutDown => {
                queue.shut_down();
                self.shut = true;
                "ok".to_string()
            }
            Op::Step(d) => {
                self.rt.block_on(tokio::time::advance(*d));
                "ok".to_string()
            }
            Op::Add(_)
            | Op::AddAfter(..)
            | Op::AddRateLimited(_)
            | Op::AddWithOpts(..) => {
                unreachable!("handled above")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rust_side::{RustRun, run_script};
    use crate::script::parse_scripts;

    fn obs(text: &str) -> RustRun {
        run_script(&parse_scripts(text).unwrap()[0], None)
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn priorities_order_the_ready_entries() {
        let run = obs(
            "queue pq\nadd_with_opts a priority=-100\nadd b\nadd_with_opts c priority=5\n\
                       len\nget\nget\nget\nget\nlen\n",
        );
        assert_eq!(
            run.observations,
            words("ok ok ok 3 c@5 b@0 a@-100 blocked -")
        );
        assert_eq!(run.ambiguous_at, None);
    }

    #[test]
    fn waiting_entries_become_ready_on_time() {
        let run = obs(
            "queue pq\nadd_with_opts a after=10ms\nadd_rate_limited b\nlen\nstep 5ms\nlen\n\
                       get\nstep 5ms\nget\nnum_requeues b\n",
        );
        assert_eq!(run.observations, words("ok ok 0 ok 1 b@0 ok a@0 1"));
    }

    #[test]
    fn a_locked_re_add_counts_in_len_but_is_not_handed_out() {
        let run = obs("queue pq\nadd a\nget\nadd a\nlen\nget\n");
        assert_eq!(run.observations, words("ok a@0 ok 1 blocked"));
        let run = obs("queue pq\nadd a\nget\nadd a\ndone a\nget\n");
        assert_eq!(run.observations, words("ok a@0 ok ok a@0"));
    }

    #[test]
    fn shutdown_does_not_drain_and_a_second_one_is_flagged() {
        let run =
            obs("queue pq\nadd a\nshut_down\nget\nadd b\nlen\nshut_down\n");
        assert_eq!(run.observations, words("ok ok shutdown ok 1 ok"));
        assert_eq!(run.ambiguous_at, Some(5));
    }
}
