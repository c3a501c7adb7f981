// Done called twice: the second Done finds the key dirty but no longer
// processing, and pushes it onto the FIFO a second time. Two gets then hand
// the same key to two workers at once.

use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::queue::QueueState;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;

fn set(items: &[&str], open: char, close: char) -> String {
    format!("{open}{}{close}", items.join(" "))
}

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

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    println!(
        "{:<22}{:<10}{:<10}{:<12}Len()",
        "call", "FIFO", "dirty", "processing"
    );
    // ANCHOR: calls
    let queue = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    queue.add("obj");
    show("Add(\"obj\")", &queue);
    let a = queue.get().await.expect("obj is queued");
    show("A: Get() -> \"obj\"", &queue);
    queue.add("obj"); // an event arrives while A works
    show("Add(\"obj\")", &queue);
    queue.done(&a);
    show("A: Done(\"obj\")", &queue);
    queue.done(&a); // the bug: a second Done
    show("A: Done(\"obj\") again", &queue);
    let b = queue.get().await.expect("obj is queued");
    show("B: Get() -> \"obj\"", &queue);
    let c = queue.get().await.expect("obj is queued twice");
    show("C: Get() -> \"obj\"", &queue);
    println!("B holds {b:?} and C holds {c:?}, at the same time");
    queue.done(&b);
    show("B: Done(\"obj\")", &queue); // C still works on obj
    // ANCHOR_END: calls
}
