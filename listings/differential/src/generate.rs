//! Seeded random scripts, generated while running the Rust queue.
//!
//! The generator sees the session's model, so it can hand `done` mostly the
//! items currently handed out (and now and then another item: `Done` on an item
//! that is not processing is an upstream edge case the port keeps), and it
//! never creates two pending waiting entries with the same ready time (which Go
//! pops in no fixed order): an op that would tie is replaced by another.
//!
//! `queue pq` scripts ([`generate_pq`]) run on the Rust priority queue as they
//! are made: `done` mostly gets a locked item, `shut_down` comes at most once
//! (a second one panics in Go), and a `get` that would block (the Rust queue
//! is asked, by polling its `get_with_priority` once) is mostly replaced by
//! another op; now and then it is kept as the script's last op, so that Go is
//! asked whether it blocks too.

use std::time::Duration;

use crate::pq_side::{BLOCKED, PqSession};
use crate::prng::SplitMix64;
use crate::rust_side::{Fault, Session};
use crate::script::{Op, Opts, Script};

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
            let handed_out: Vec<&String> =
                session.processing().iter().collect();
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
    Generated { script: Script::client_go(script), observations }
}

/// Generates sequence `index` of a run seeded with `seed`.
pub fn generate_sequence(
    seed: u64,
    index: u64,
    fault: Option<Fault>,
) -> Generated {
    generate(&mut SplitMix64::for_sequence(seed, index), fault)
}

/// Priorities for `add_with_opts`: controller-runtime's `LowPriority`, the
/// default, and a few above and below.
const PRIORITIES: [i32; 8] = [-100, -100, -1, 0, 0, 1, 5, 100];

fn pq_candidate(
    rng: &mut SplitMix64,
    session: &PqSession,
    items: &[&str],
) -> Op {
    let item = |rng: &mut SplitMix64| rng.pick(items).to_string();
    let delay =
        |rng: &mut SplitMix64| Duration::from_micros(*rng.pick(&DELAYS_US));
    // add_with_opts, add, add_after, add_rate_limited, get, done, forget, len, num_requeues, shut_down, step
    const WEIGHTS: [u64; 11] = [22, 8, 6, 8, 24, 15, 4, 6, 5, 1, 12];
    match rng.weighted(&WEIGHTS) {
        0 => {
            // Mostly one item; sometimes a list, which may name an item twice.
            let n = if rng.chance(1, 5) { 2 + rng.below(2) } else { 1 };
            let keys = (0..n).map(|_| item(rng)).collect();
            let opts = Opts {
                after: rng.chance(1, 2).then(|| delay(rng)),
                rate_limited: rng.chance(1, 2).then(|| rng.chance(2, 3)),
                priority: rng.chance(2, 3).then(|| *rng.pick(&PRIORITIES)),
            };
            Op::AddWithOpts(keys, opts)
        }
        1 => Op::Add(item(rng)),
        2 => Op::AddAfter(item(rng), delay(rng)),
        3 => Op::AddRateLimited(item(rng)),
        4 => Op::Get,
        5 => {
            let locked: Vec<&String> = session.locked().iter().collect();
            if !locked.is_empty() && !rng.chance(1, 10) {
                Op::Done((*rng.pick(&locked)).clone())
            } else {
                Op::Done(item(rng))
            }
        }
        6 => Op::Forget(item(rng)),
        7 => Op::Len,
        8 => Op::NumRequeues(item(rng)),
        9 if !session.shutting_down() => Op::ShutDown,
        _ => Op::Step(Duration::from_micros(*rng.pick(&STEPS_US))),
    }
}

/// Generates one `queue pq` script (1 to [`MAX_LEN`] ops) from `rng`, running
/// it on a fresh Rust priority queue as it goes.
pub fn generate_pq(rng: &mut SplitMix64, fault: Option<Fault>) -> Generated {
    let len = 1 + rng.below(MAX_LEN);
    let items = &ITEMS[..1 + rng.below(ITEMS.len() as u64) as usize];
    let mut session = PqSession::new(fault);
    let mut script = Vec::with_capacity(len as usize);
    let mut observations = Vec::with_capacity(len as usize);
    while (script.len() as u64) < len && !session.is_blocked() {
        let mut chosen = None;
        for _ in 0..32 {
            let op = pq_candidate(rng, &session, items);
            let obs = session.apply(&op);
            if obs == BLOCKED && !rng.chance(1, 30) {
                session.unblock(); // nothing happened: try another op
                continue;
            }
            chosen = Some((op, obs));
            break;
        }
        let (op, obs) = chosen.unwrap_or_else(|| {
            (Op::Step(Duration::ZERO), session.apply(&Op::Step(Duration::ZERO)))
        });
        script.push(op);
        observations.push(obs);
    }
    Generated { script: Script::priority(script), observations }
}

/// Generates `queue pq` sequence `index` of a run seeded with `seed` (a
/// stream apart from the client-go sequences of the same seed).
pub fn generate_pq_sequence(
    seed: u64,
    index: u64,
    fault: Option<Fault>,
) -> Generated {
    generate_pq(
        &mut SplitMix64::for_sequence(seed ^ 0x5051_5051_5051_5051, index),
        fault,
    )
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
            assert!(
                !a.script.ops.is_empty()
                    && a.script.ops.len() as u64 <= MAX_LEN
            );
            // Replaying the script alone gives what the generator saw, unambiguously.
            let run = run_script(&a.script, None);
            assert_eq!(run.observations, a.observations);
            assert_eq!(run.ambiguous_at, None, "{:?}", a.script);
        }
    }

    #[test]
    fn pq_generation_is_deterministic_and_replays() {
        let mut blocked_endings = 0;
        let mut ops = 0;
        for i in 0..500 {
            let a = generate_pq_sequence(42, i, None);
            let b = generate_pq_sequence(42, i, None);
            assert_eq!(a.script, b.script);
            assert!(
                !a.script.ops.is_empty()
                    && a.script.ops.len() as u64 <= MAX_LEN
            );
            // At most one shut_down, and only a last get may block.
            assert!(
                a.script.ops.iter().filter(|o| **o == Op::ShutDown).count()
                    <= 1
            );
            let blocked = a.observations.iter().position(|o| o == BLOCKED);
            assert!(blocked.is_none_or(|at| at + 1 == a.observations.len()));
            blocked_endings += usize::from(blocked.is_some());
            ops += a.script.ops.len();
            let run = run_script(&a.script, None);
            assert_eq!(run.observations, a.observations);
            assert_eq!(run.excluded_at(), None, "{:?}", a.script);
        }
        // Scripts are long enough, and a few end in a blocking get.
        assert!(ops > 500 * 20, "{ops} ops");
        assert!((5..250).contains(&blocked_endings), "{blocked_endings}");
    }
}
