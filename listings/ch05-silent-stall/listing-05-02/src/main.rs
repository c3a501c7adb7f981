// The stall, collection by collection: once Done is skipped, the key sits in
// the processing set for good, and every new event only re-marks it dirty.

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
    let obj = queue.get().await.expect("obj is queued");
    show("Get() -> \"obj\"", &queue);
    queue.forget(&obj);
    show("Forget(\"obj\")", &queue);
    // No Done. Events keep arriving:
    queue.add("obj");
    show("Add(\"obj\")", &queue);
    for _ in 0..99 {
        queue.add("obj");
    }
    show("Add(\"obj\") x99 more", &queue);
    queue.add("other");
    let other = queue.get().await.expect("other is queued");
    queue.done(&other);
    show("other: Add, Get, Done", &queue); // the rest of the queue is fine
    // ANCHOR_END: calls
}
