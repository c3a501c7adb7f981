//! A differential harness that holds the Rust port (`faithful-workqueue`) to
//! client-go's real rate-limiting queue and to controller-runtime's real
//! priority queue.
//!
//! * [`script`]: the script format, one op per line, scripts separated by `---`,
//!   a `queue pq` first line for the priority queue;
//! * [`rust_side`]: runs a script on `RateLimitingQueue` on a paused tokio clock,
//!   and knows which scripts are ambiguous in Go (equal ready times);
//! * [`pq_side`]: the same for `PriorityQueue` (`queue pq` scripts);
//! * [`generate`]: seeded random scripts of either kind, generated while running the Rust queue;
//! * [`go_side`]: builds and runs the Go replayer (`replay/replay_test.go`);
//! * [`compare`]: compares observations and renders a divergence;
//! * [`shrink`]: delta debugging down to a shortest diverging script.

pub mod compare;
pub mod generate;
pub mod go_side;
pub mod pq_side;
pub mod prng;
pub mod rust_side;
pub mod script;
pub mod shrink;
