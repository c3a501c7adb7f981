//! A faithful Rust port of client-go's `util/workqueue` and of
//! controller-runtime's reconcile loop, on tokio time.
//!
//! The modules mirror upstream's files, so the two can be read side by side:
//!
//! | module | upstream |
//! |---|---|
//! | [`queue`] | client-go `util/workqueue/queue.go` |
//! | [`delaying_queue`] | client-go `util/workqueue/delaying_queue.go` |
//! | [`rate_limiting_queue`] | client-go `util/workqueue/rate_limiting_queue.go` |
//! | [`default_rate_limiters`] | client-go `util/workqueue/default_rate_limiters.go` |
//! | [`metrics`] | client-go `util/workqueue/metrics.go` |
//! | [`priorityqueue`] | controller-runtime `pkg/controller/priorityqueue/priorityqueue.go` |
//! | [`reconcile`] | controller-runtime `pkg/reconcile/reconcile.go` |
//! | [`controller`] | controller-runtime `pkg/internal/controller/controller.go` |
//!
//! One module is the crate's own: [`key`], a string key that clones and
//! compares as a Go string does.
//!
//! Checked against client-go v0.37.2 and controller-runtime v0.25.3. Names are
//! upstream's in snake_case (`add_rate_limited`, `num_requeues`,
//! `shut_down_with_drain`). Beside the Go-shaped `get`/`done` pair, every
//! queue also hands out a [`queue::Lease`] whose `Drop` calls `done`.
//!
//! ```
//! use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
//! use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
//! queue.add("default/web");
//! let lease = queue.lease().await.unwrap();
//! queue.forget(lease.item()); // the limiter forgets; the queue does not
//! drop(lease);                // done
//! assert!(queue.is_empty());
//! # }
//! ```
//!
//! # Differences from upstream
//!
//! Deliberate, each documented where it lives and shown by a test in
//! `tests/differences.rs` (the test named after it), or by the doc test
//! below for the one a running program cannot show:
//!
//! * **Lazy promotion of waiting items instead of goroutines**: where upstream
//!   runs goroutines that move due items into the queue, the
//!   [`delaying_queue`] and the [`priorityqueue`] move them at the start of
//!   every call, and a waiting `get` sleeps until the next ready time. The
//!   priority queue buffers adds as upstream does, but the buffer is applied
//!   by the next call that reads the queue (or by an add, once
//!   [`priorityqueue::FLUSH_AT`] adds wait), not by a goroutine: no call sees
//!   an add unapplied, and a shutdown applies the adds made before it, where
//!   upstream's goroutine drops what it finds after the shutdown.
//! * **A second priority-queue shut down is a no-op**: upstream's
//!   `PriorityQueue.ShutDown` panics when called twice (it closes a channel
//!   twice), while [`priorityqueue::PriorityQueue::shut_down`] does nothing
//!   the second time.
//! * **A reconcile timeout drops the future and reports an error**: upstream
//!   cancels the reconcile's context and lets the reconciler return, while
//!   [`controller::Options::reconciliation_timeout`] drops the reconcile
//!   future and returns `reconciliation timed out after <d>`.
//! * **No pluggable `Queue` store**: upstream's queue takes a replaceable
//!   `Queue[T]` container (with its `Touch` hook), while [`queue::Queue`]
//!   always uses its own FIFO:
//!
//!   ```compile_fail,E0560
//!   use faithful_workqueue::queue::QueueConfig;
//!   let config = QueueConfig { queue: Vec::<&str>::new(), ..QueueConfig::default() };
//!   ```
//! * **A `Duration` cannot be negative**: upstream treats `AddOpts.After <= 0`
//!   and a negative `AddAfter` delay as "ready now", which here is
//!   [`Duration::ZERO`](std::time::Duration::ZERO), the only such value.
//! * **Every draining shutdown ends**: two tasks in
//!   [`queue::Queue::shut_down_with_drain`] at once both return when the
//!   processing set empties, where upstream's `Done` signals its condition
//!   variable once and so wakes only one of them.
//! * **A delay longer than Go can express is cut to Go's longest**
//!   ([`default_rate_limiters::INF_DURATION`]) by the delaying queue, rather
//!   than overflowing the clock, and so is an exponential limiter's cap.
//! * **Ties in ready time are first come, first added**: entries with the same
//!   ready time come out of the [`delaying_queue`] in the order they were
//!   added, where upstream's `container/heap` leaves their order unspecified.
//! * **The token bucket runs on tokio's clock**:
//!   [`default_rate_limiters::BucketRateLimiter`] refills by tokio's
//!   `Instant`, so a paused clock drives it; upstream's reads the wall clock.
//! * **The unfinished-work gauges are refreshed by a tokio task** that a named
//!   queue with metrics starts only when it is built inside a tokio runtime;
//!   upstream always starts its goroutine. Outside a runtime,
//!   [`queue::Queue::update_unfinished_work`] refreshes them.
//! * **A reconciler returns a result or an error**, where upstream's returns
//!   both. [`reconcile::with_result`] attaches a result to an error, for the
//!   one field upstream reads from a failed reconcile, its priority.
//! * **Errors are reported through [`controller::Options::error_log`]**, called
//!   with the error alone, where upstream logs `Reconciler error` with the
//!   request and a reconcile ID, and also logs a warning when a result with
//!   `RequeueAfter` or `Requeue` came with the error.
//! * **A recovered panic runs no panic handlers**: upstream calls
//!   apimachinery's `PanicHandlers` before it turns the panic into an error;
//!   here Rust's panic hook has already run, once, when the panic happened. A
//!   payload that is not a string is reported as `non-string panic payload`,
//!   where Go prints any value.
#![warn(missing_docs)]

pub mod call_log;
pub mod controller;
pub mod default_rate_limiters;
pub mod delaying_queue;
pub mod go_duration;
pub mod handler;
mod hash;
pub mod key;
pub mod metrics;
pub mod priorityqueue;
pub mod prometheus;
pub mod queue;
pub mod rate_limiting_queue;
pub mod reconcile;
pub mod sync;
