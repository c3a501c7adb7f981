// A key whose `done` never comes: every later add lands in the dirty set, and
// `get` never hands the key out again. The key goes through a hand-written
// worker with the classic bug: on the path where the sync fails for good, it
// forgets the key and returns before the `done` at its end.

use std::time::Duration;

use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;

type Queue = RateLimitingQueue<&'static str>;

/// How long the demonstration waits before calling the key stalled. The stall
/// itself is permanent; on the paused clock this wait costs no time.
const PATIENCE: Duration = Duration::from_millis(500);

// ANCHOR: worker
/// A worker written by hand, with the bug this chapter is about: when the
/// sync fails for good, it forgets the key (no retry would help) and
/// returns, and the `done` at the end is never reached.
async fn process_next_work_item(
    queue: &Queue,
    sync: impl Fn(&str) -> anyhow::Result<()>,
) -> bool {
    let Some(key) = queue.get().await else {
        return false;
    };
    if let Err(err) = sync(key) {
        println!("   sync({key:?}) failed: {err}; Forget, return without Done");
        queue.forget(&key);
        return true; // the bug: no queue.done(&key) on this path
    }
    queue.forget(&key);
    queue.done(&key);
    true
}
// ANCHOR_END: worker

/// The two syncs the worker is given: one that succeeds, one that fails for
/// good (no retry would fix an invalid spec).
fn sync_ok(_: &str) -> anyhow::Result<()> {
    Ok(())
}

fn sync_invalid(_: &str) -> anyhow::Result<()> {
    anyhow::bail!("spec.replicas must be >= 0")
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: healthy
    let queue = Queue::new(priority_queue_default_rate_limiter());
    println!("healthy: Get -> Forget -> Done");
    queue.add("obj");
    process_next_work_item(&queue, sync_ok).await;
    queue.add("obj");
    let again = tokio::time::timeout(PATIENCE, queue.get())
        .await
        .expect("a done key is handed out again");
    let obj = again.expect("not shut down");
    println!("   Add(\"obj\") again, then Get() returns {obj:?}");
    queue.done(&obj);
    // ANCHOR_END: healthy

    // ANCHOR: stall
    let queue = Queue::new(priority_queue_default_rate_limiter());
    println!();
    println!("stall: Get -> Forget, Done never called");
    queue.add("obj");
    process_next_work_item(&queue, sync_invalid).await;
    for _ in 0..100 {
        queue.add("obj");
    }
    println!("   100 more Add(\"obj\") calls, then Len()={}", queue.len());
    match tokio::time::timeout(PATIENCE, queue.get()).await {
        Err(_elapsed) => {
            println!(
                "   Get() timed out after {}: \"obj\" is never handed out again",
                GoDuration(PATIENCE)
            )
        }
        Ok(item) => println!("   unexpected: Get() returned {item:?}"),
    }
    // ANCHOR_END: stall
}
