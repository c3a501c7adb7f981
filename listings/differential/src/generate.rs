//! Seeded random scripts, generated while running the Rust queue.
//!
//! The generator sees the session's model, so it can hand `done` mostly the
//! items currently handed out (and now and then another item: `Done` on an item
//! that is not processing is an upstream edge case the port keeps), and it
//! never creates two pending waiting entries with the same ready time (which Go
//! pops in no fixed order): an op that would tie is replaced by another.

use std::time::Duration;

use crate::prng::SplitMix64;
use crate::rust_side::{Fault, Session};
use crate::script::{Op, Script};

/// The item alphabet.
pub const ITEMS: [&str; 5] = ["a", "b", "c", "d", "e"];

/// The longest generated script.
pub const MAX_LEN: u64 = 60;

/// Delays for `add_after`, in microseconds: zero (a synchronous add), the
/// limiter's own steps, odd ones off the millisecond grid, ones past the 10s
/// heartbeat, and the limiter's 1000s cap.
const DELAYS_US: [u64; 20] = [
    0,
    0,
    0,
    1_000,
    2_000,
    3_000,
    5_000,
    7_000,
    10_000,
    15_000,
    20_000,
    40_000,
    50_000,
    100_000,
    1_000_000,
    10_000_000,
    15_000_000,
    250,
    1_500,
    1_000_000_000,
];

/// Clock steps, in microseconds.
const STEPS_US: [u64; 18] = [
    0,
    1_000,
    2_000,
    3_000,
    4_000,
    5_000,
    5_000,
    7_000,
    10_000,
    15_000,
    20_000,
    40_000,
    100_000,
    1_000_000,
    10_000_000,
    250,
    1_500,
    1_000_000_000,
];

/// A generated script and what the Rust queue observed running it.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The ops.
    pub script: Script,
    /// The Rust observation of each op.
    pub observations: Vec<String>,
}

fn candidate(rng: &mut SplitMix64, session: &Session, items: &[&str]) -> Op {
    let item = |rng: &mut SplitMix64| rng.pick(items).to_string();
    // add, get, done, forget, add_rate_limited, add_after, len, num_requeues, shut_down, step
    const WEIGHTS: [u64; 10] = [20, 20, 15, 5, 12, 10, 6, 5, 1, 12];
    let which = rng.weighted(&WEIGHTS);
    match which {
        0 => Op::Add(item(rng)),
        1 => Op::Get,
        2 => {
            let handed_out: Vec<&String> = session.processing().iter().collect();
            if !handed_out.is_empty() && !rng.chance(1, 10) {
                Op::Done((*rng.pick(&handed_out)).clone())
            } else {
                Op::Done(item(rng))
            }
        }
        3 => Op::Forget(item(rng)),
        4 => Op::AddRateLimited(item(rng)),
        5 => {
            let x = item(rng);
            Op::AddAfter(x, Duration::from_micros(*rng.pick(&DELAYS_US)))
        }
        6 => Op::Len,
        7 => Op::NumRequeues(item(rng)),
        8 => Op::ShutDown,
        _ => Op::Step(Duration::from_micros(*rng.pick(&STEPS_US))),
    }
}

/// Generates one script (1 to [`MAX_LEN`] ops) from `rng`, running it on a
/// fresh Rust queue as it goes.
pub fn generate(rng: &mut SplitMix64, fault: Option<Fault>) -> Generated {
    let len = 1 + rng.below(MAX_LEN);
    // A few items make items meet; sometimes one item, sometimes all five.
    let items = &ITEMS[..1 + rng.below(ITEMS.len() as u64) as usize];
    let mut session = Session::new(fault);
    let mut script = Vec::with_capacity(len as usize);
    let mut observations = Vec::with_capacity(len as usize);
    for _ in 0..len {
        let op = (0..32)
            .map(|_| candidate(rng, &session, items))
            .find(|op| !session.would_tie(op))
            .unwrap_or(Op::Len);
        observations.push(session.apply(&op));
        script.push(op);
    }
    Generated {
        script,
        observations,
    }
}

/// Generates sequence `index` of a run seeded with `seed`.
pub fn generate_sequence(seed: u64, index: u64, fault: Option<Fault>) -> Generated {
    generate(&mut SplitMix64::for_sequence(seed, index), fault)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rust_side::run_script;

    #[test]
    fn generation_is_deterministic_and_replays() {
        for i in 0..200 {
            let a = generate_sequence(42, i, None);
            let b = generate_sequence(42, i, None);
            assert_eq!(a.script, b.script);
            assert!(!a.script.is_empty() && a.script.len() as u64 <= MAX_LEN);
            // Replaying the script alone gives what the generator saw, unambiguously.
            let run = run_script(&a.script, None);
            assert_eq!(run.observations, a.observations);
            assert_eq!(run.ambiguous_at, None, "{:?}", a.script);
        }
    }
}
