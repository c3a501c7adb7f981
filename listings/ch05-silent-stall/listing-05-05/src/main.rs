// Four workers, three keys, and adds that keep arriving while the keys are
// being processed: a fixed-seed trace on the paused clock. However the
// events fall, no key is ever held by two workers at once.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use faithful_workqueue::queue::Queue;
use tokio::time::Instant;

const WORKERS: usize = 4;
const KEYS: [&str; 3] = ["a", "b", "c"];
const ADDS: usize = 14;
const SEED: u64 = 8;

/// xorshift64: the same numbers in Rust and in the Go twin.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The schedule, drawn up front: when each add comes and for which key, then
/// how long each hand-out is processed, in milliseconds.
fn schedule() -> (Vec<(u64, usize)>, Vec<u64>) {
    let mut rng = Rng(SEED);
    let mut at = 0;
    let adds = (0..ADDS)
        .map(|_| {
            at += 1 + rng.below(12);
            (at, rng.below(KEYS.len() as u64) as usize)
        })
        .collect();
    let work = (0..4 * ADDS).map(|_| 5 + rng.below(36)).collect();
    (adds, work)
}

/// What the trace records: how many workers hold each key right now, the
/// most that ever did, the hand-outs in order, and one line per event.
#[derive(Default)]
struct Trace {
    holders: [usize; KEYS.len()],
    most: [usize; KEYS.len()],
    adds: [usize; KEYS.len()],
    hand_outs: Vec<&'static str>,
    busy: usize,
    most_busy: usize,
    event_times: Vec<u64>,
    lines: Vec<String>,
}

impl Trace {
    /// A worker got `key`; returns the hand-out's number.
    fn got(&mut self, key: usize, at: u64) -> usize {
        self.holders[key] += 1;
        self.most[key] = self.most[key].max(self.holders[key]);
        self.busy += 1;
        self.most_busy = self.most_busy.max(self.busy);
        self.hand_outs.push(KEYS[key]);
        self.line(at, format!("Get() -> {:?}", KEYS[key]));
        self.hand_outs.len() - 1
    }

    /// A worker is done with `key` (and calls `done` right after).
    fn finished(&mut self, key: usize, at: u64) {
        self.holders[key] -= 1;
        self.busy -= 1;
        self.event_times.push(at);
        self.line(at, format!("Done({:?})", KEYS[key]));
    }

    fn added(&mut self, key: usize, at: u64) {
        self.adds[key] += 1;
        self.event_times.push(at);
        self.line(at, format!("Add({:?})", KEYS[key]));
    }

    fn line(&mut self, at: u64, event: String) {
        let [a, b, c] = self.holders;
        self.lines.push(format!(
            "{at:>4}ms  {event:<14}{a} {b} {c}    {}",
            self.busy
        ));
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let (adds, work) = schedule();
    let start = Instant::now();
    let ms = move || (Instant::now() - start).as_millis() as u64;
    let trace = Arc::new(Mutex::new(Trace::default()));

    // ANCHOR: worker
    let queue: Queue<usize> = Queue::new();
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let (queue, trace, work) = (queue.clone(), trace.clone(), work.clone());
        workers.push(tokio::spawn(async move {
            while let Some(key) = queue.get().await {
                let n = trace.lock().unwrap().got(key, ms());
                // reconcile
                tokio::time::sleep(Duration::from_millis(work[n])).await;
                trace.lock().unwrap().finished(key, ms());
                queue.done(&key);
            }
        }));
    }
    // ANCHOR_END: worker

    for (at, key) in adds {
        tokio::time::sleep_until(start + Duration::from_millis(at)).await;
        trace.lock().unwrap().added(key, at);
        queue.add(key);
    }
    queue.shut_down();
    for worker in workers {
        worker.await.expect("a worker panicked");
    }

    let t = trace.lock().unwrap();
    // One event per instant: which worker wakes first can never matter.
    let mut times = t.event_times.clone();
    times.sort();
    times.dedup();
    assert_eq!(
        times.len(),
        t.event_times.len(),
        "seed {SEED} makes two events coincide"
    );

    println!("{WORKERS} workers, seed {SEED}");
    println!("  time  event         holders   busy");
    println!("                      a b c");
    for line in &t.lines {
        println!("{line}");
    }
    println!();
    println!("hand-outs in order: {}", t.hand_outs.join(" "));
    // ANCHOR: summary
    println!("key  adds  hand-outs  most workers holding it at once");
    for (k, name) in KEYS.iter().enumerate() {
        let got = t.hand_outs.iter().filter(|h| *h == name).count();
        println!("{name:<5}{:<6}{got:<11}{}", t.adds[k], t.most[k]);
    }
    println!("most workers busy at once: {}", t.most_busy);
    // ANCHOR_END: summary
}
