//! A differential harness that holds the Rust port (`faithful-workqueue`) to
//! client-go's real rate-limiting queue.
//!
//! * [`script`]: the script format, one op per line, scripts separated by `---`;
//! * [`rust_side`]: runs a script on `RateLimitingQueue` on a paused tokio clock,
//!   and knows which scripts are ambiguous in Go (equal ready times);
//! * [`generate`]: seeded random scripts, generated while running the Rust queue;
//! * [`go_side`]: builds and runs the Go replayer (`replay/replay_test.go`);
//! * [`compare`]: compares observations and renders a divergence;
//! * [`shrink`]: delta debugging down to a shortest diverging script.

pub mod compare;
pub mod generate;
pub mod go_side;
pub mod prng;
pub mod rust_side;
pub mod script;
pub mod shrink;
