// The controller loop on five scripted keys, printing every call it makes to
// the queue. Its Go twin runs the real controller-runtime controller on the
// same script and prints the same lines.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::anyhow;
use faithful_workqueue::controller::Controller;
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::{AddOpts, PriorityInterface, PriorityQueue};
use faithful_workqueue::rate_limiting_queue::{DelayingInterface, Interface, RateLimitingInterface};
use faithful_workqueue::reconcile::{ReconcileResult, terminal_error};

type Key = &'static str;

/// controller-runtime's default queue, the priority queue, printing the calls
/// the controller makes before passing them on.
struct LoggingQueue {
    inner: PriorityQueue<Key>,
    done_calls: AtomicUsize,
}

impl Interface<Key> for LoggingQueue {
    fn add(&self, item: Key) {
        self.inner.add(item)
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    async fn get(&self) -> Option<Key> {
        self.inner.get().await
    }
    fn done(&self, item: &Key) {
        println!("  done {item:?}");
        self.done_calls.fetch_add(1, Ordering::SeqCst);
        self.inner.done(item)
    }
    fn shut_down(&self) {
        self.inner.shut_down()
    }
    async fn shut_down_with_drain(&self) {
        self.inner.shut_down_with_drain().await
    }
    fn shutting_down(&self) -> bool {
        self.inner.shutting_down()
    }
}

impl PriorityInterface<Key> for LoggingQueue {
    // The controller requeues through add_with_opts, keeping the priority.
    fn add_with_opts(&self, opts: AddOpts, items: impl IntoIterator<Item = Key>) {
        let items: Vec<Key> = items.into_iter().collect();
        for item in &items {
            if opts.rate_limited {
                println!("  add_rate_limited {item:?}");
            } else if !opts.after.is_zero() {
                println!("  add_after {item:?} {}", GoDuration(opts.after));
            }
        }
        self.inner.add_with_opts(opts, items)
    }
    async fn get_with_priority(&self) -> Option<(Key, i32)> {
        self.inner.get_with_priority().await
    }
}

impl DelayingInterface<Key> for LoggingQueue {
    fn add_after(&self, item: Key, delay: Duration) {
        println!("  add_after {item:?} {}", GoDuration(delay));
        self.inner.add_after(item, delay)
    }
}

impl RateLimitingInterface<Key> for LoggingQueue {
    fn add_rate_limited(&self, item: Key) {
        println!("  add_rate_limited {item:?}");
        self.inner.add_rate_limited(item)
    }
    fn forget(&self, item: &Key) {
        println!("  forget {item:?}");
        self.inner.forget(item)
    }
    fn num_requeues(&self, item: &Key) -> usize {
        self.inner.num_requeues(item)
    }
}

// ANCHOR: script
/// Each key misbehaves in its own way on the first attempt.
async fn reconcile(key: Key, attempt: usize) -> anyhow::Result<ReconcileResult> {
    let first = attempt == 1;
    let outcome = match key {
        "fail" if first => Err(anyhow!("connection refused")),
        "terminal" => Err(terminal_error(anyhow!("spec.replicas must be >= 0"))),
        "later" if first => Ok(ReconcileResult::requeue_after(Duration::from_millis(30))),
        "boom" if first => {
            println!("reconcile {key:?} #{attempt} -> panic");
            panic!("nil map");
        }
        _ => Ok(ReconcileResult::done()),
    };
    let shown = match &outcome {
        Ok(r) if !r.requeue_after.is_zero() => format!("requeue after {}", GoDuration(r.requeue_after)),
        Ok(_) => "success".to_owned(),
        Err(err) => format!("error: {err}").replace("error: terminal error", "terminal error"),
    };
    println!("reconcile {key:?} #{attempt} -> {shown}");
    outcome
}
// ANCHOR_END: script

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // A recovered panic still runs the panic hook; keep stderr quiet.
    std::panic::set_hook(Box::new(|_| {}));

    let queue = LoggingQueue {
        inner: PriorityQueue::new(),
        done_calls: AtomicUsize::new(0),
    };
    let attempts: Mutex<HashMap<Key, usize>> = Mutex::default();
    let reconciles = AtomicUsize::new(0);
    let reconciler = |key: Key| {
        let attempt = {
            let mut attempts = attempts.lock().unwrap();
            let n = attempts.entry(key).or_insert(0);
            *n += 1;
            *n
        };
        reconciles.fetch_add(1, Ordering::SeqCst);
        reconcile(key, attempt)
    };
    for key in ["ok", "fail", "terminal", "later", "boom"] {
        queue.add(key);
    }

    // ANCHOR: loop
    let controller = Controller::new(queue, reconciler);
    // One worker: take an item, reconcile, switch, done. Eight reconciles in
    // all: five first attempts, then the retries of fail, boom and later.
    while reconciles.load(Ordering::SeqCst) < 8 {
        controller.process_next_work_item().await;
    }
    // ANCHOR_END: loop

    let done = controller.queue().done_calls.load(Ordering::SeqCst);
    println!();
    println!("reconciles: {}, done calls: {done}", reconciles.load(Ordering::SeqCst));
}
