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
//! Checked against client-go v0.37.2 and controller-runtime v0.25.2. Names are
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
#![warn(missing_docs)]

pub mod controller;
pub mod default_rate_limiters;
pub mod delaying_queue;
pub mod go_duration;
pub mod metrics;
pub mod priorityqueue;
pub mod prometheus;
pub mod queue;
pub mod rate_limiting_queue;
pub mod reconcile;
