// What the queue's three collections hold after each call, read from the
// queue's real state: the FIFO (what Get hands out next), the dirty set (what
// needs processing) and the processing set (handed out, not yet done).

use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::queue::QueueState;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;

fn set(items: &[&str], open: char, close: char) -> String {
    format!("{open}{}{close}", items.join(" "))
}

// ANCHOR: show
/// One row: the call, then the three collections and Len().
fn show(call: &str, queue: &RateLimitingQueue<&'static str>) {
    let QueueState { fifo, dirty, processing } = queue.queue().debug_state();
    println!(
        "{call:<22}{:<10}{:<10}{:<12}{}",
        set(&fifo, '[', ']'),
        set(&dirty, '{', '}'),
        set(&processing, '{', '}'),
        queue.len()
    );
}
// ANCHOR_END: show

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    println!(
        "{:<22}{:<10}{:<10}{:<12}Len()",
        "call", "FIFO", "dirty", "processing"
    );
    // ANCHOR: calls
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    queue.add("a");
    show("Add(\"a\")", &queue);
    queue.add("b");
    show("Add(\"b\")", &queue);
    queue.forget(&"a");
    show("Forget(\"a\")", &queue); // nothing moves
    let a = queue.get().await.expect("a is queued");
    show("Get() -> \"a\"", &queue);
    queue.add("a");
    show("Add(\"a\")", &queue); // dirty only: a is being processed
    queue.forget(&a);
    show("Forget(\"a\")", &queue); // still nothing moves
    queue.done(&a);
    show("Done(\"a\")", &queue); // dirty a goes back to the FIFO
    // ANCHOR_END: calls
}
