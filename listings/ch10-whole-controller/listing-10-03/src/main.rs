// A panicking reconcile with RecoverPanic on (upstream's default) and off.
// On: the panic becomes an error and is retried through the rate limiter.
// Off: the panic leaves the worker, and done still runs while it unwinds.
// Its Go twin runs the real controller-runtime controller both ways.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use faithful_workqueue::controller::{Controller, Options, panic_message};
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::{AddOpts, PriorityInterface, PriorityQueue};
use faithful_workqueue::rate_limiting_queue::{DelayingInterface, Interface, RateLimitingInterface};
use faithful_workqueue::reconcile::ReconcileResult;

type Key = String;

/// The priority queue, printing the calls the controller makes.
#[derive(Clone, Default)]
struct LoggingQueue(PriorityQueue<Key>);

impl Interface<Key> for LoggingQueue {
    fn add(&self, item: Key) {
        self.0.add(item)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    async fn get(&self) -> Option<Key> {
        self.0.get().await
    }
    fn done(&self, item: &Key) {
        println!("  done {item:?}");
        self.0.done(item)
    }
    fn shut_down(&self) {
        self.0.shut_down()
    }
    async fn shut_down_with_drain(&self) {
        self.0.shut_down_with_drain().await
    }
    fn shutting_down(&self) -> bool {
        self.0.shutting_down()
    }
}

impl DelayingInterface<Key> for LoggingQueue {
    fn add_after(&self, item: Key, delay: Duration) {
        self.0.add_after(item, delay)
    }
}

impl RateLimitingInterface<Key> for LoggingQueue {
    fn add_rate_limited(&self, item: Key) {
        self.0.add_rate_limited(item)
    }
    fn forget(&self, item: &Key) {
        println!("  forget {item:?}");
        self.0.forget(item)
    }
    fn num_requeues(&self, item: &Key) -> usize {
        self.0.num_requeues(item)
    }
}

impl PriorityInterface<Key> for LoggingQueue {
    fn add_with_opts(&self, opts: AddOpts, items: impl IntoIterator<Item = Key>) {
        let items: Vec<Key> = items.into_iter().collect();
        for item in &items {
            if opts.rate_limited {
                println!("  add_rate_limited {item:?}");
            } else if !opts.after.is_zero() {
                println!("  add_after {item:?} {}", GoDuration(opts.after));
            }
        }
        self.0.add_with_opts(opts, items)
    }
    async fn get_with_priority(&self) -> Option<(Key, i32)> {
        self.0.get_with_priority().await
    }
}

/// "boom" panics on its first attempt and succeeds after.
fn reconciler() -> impl Fn(Key) -> std::future::Ready<anyhow::Result<ReconcileResult>> + Send + Sync + 'static {
    let attempts: Mutex<HashMap<Key, usize>> = Mutex::default();
    move |key| {
        let attempt = {
            let mut attempts = attempts.lock().unwrap();
            let n = attempts.entry(key.clone()).or_insert(0);
            *n += 1;
            *n
        };
        if attempt == 1 {
            println!("reconcile {key:?} #{attempt} -> panic");
            panic!("boom");
        }
        println!("reconcile {key:?} #{attempt} -> success");
        std::future::ready(Ok(ReconcileResult::done()))
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    std::panic::set_hook(Box::new(|_| {})); // the panics are the subject; keep stderr quiet

    // ANCHOR: recovered
    println!("RecoverPanic on (the default):");
    let queue = LoggingQueue::default();
    let controller = Controller::new(queue.clone(), reconciler());
    queue.add("boom".to_owned());
    controller.process_next_work_item().await; // panics, recovered: an error
    controller.process_next_work_item().await; // the retry, 5ms later
    // ANCHOR_END: recovered

    // ANCHOR: propagated
    println!();
    println!("RecoverPanic off:");
    let queue = LoggingQueue::default();
    let options = Options { recover_panic: false, ..Options::default() };
    let controller = Controller::with_options(queue.clone(), reconciler(), options);
    queue.add("boom".to_owned());
    // A worker is a task; its panic comes back as a JoinError.
    let worker = tokio::spawn(async move { controller.process_next_work_item().await });
    match worker.await {
        Err(err) if err.is_panic() => println!("the panic left the worker: {}", panic_message(&*err.into_panic())),
        other => println!("the worker did not panic: {other:?}"),
    }
    // ANCHOR_END: propagated
}
