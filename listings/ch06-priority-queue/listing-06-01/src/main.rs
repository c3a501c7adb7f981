// The priority queue's ordering rules, one step at a time: what Len() says
// after each call and what Get hands out. Its Go twin drives controller-runtime's
// real priority queue through the same steps and prints the same lines.

use std::time::Duration;

use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::{AddOpts, LOW_PRIORITY, PriorityQueue};

/// How long the stall demonstration waits (virtual time: free).
const PATIENCE: Duration = Duration::from_millis(500);

fn at(priority: i32) -> AddOpts {
    AddOpts { priority: Some(priority), ..AddOpts::default() }
}

/// Prints one step: what was done, then Len() after it.
fn step(queue: &PriorityQueue<&'static str>, what: &str) {
    println!("{what:<44}Len()={}", queue.len());
}

async fn get(queue: &PriorityQueue<&'static str>) -> &'static str {
    let (key, priority) =
        queue.get_with_priority().await.expect("not shut down");
    step(queue, &format!("get -> {key:?} (priority {priority})"));
    key
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: order
    let queue = PriorityQueue::new();
    // The initial list arrives at LowPriority, as controller-runtime's
    // handlers enqueue it.
    queue.add_with_opts(at(LOW_PRIORITY), ["a", "b", "c"]);
    step(&queue, "add a, b, c at LowPriority (-100)");
    queue.add("b"); // a real change to b: priority 0 beats -100
    step(&queue, "add b (priority 0)");
    queue.add_with_opts(at(10), ["d"]);
    step(&queue, "add d at priority 10");
    queue.add_with_opts(at(LOW_PRIORITY), ["d"]); // never lowers a priority
    step(&queue, "add d at LowPriority again");
    queue.add_after("e", Duration::from_secs(1));
    step(&queue, "add_after e 1s (waiting: not counted)");
    // ANCHOR_END: order

    // ANCHOR: locked
    let d = get(&queue).await;
    queue.add_with_opts(at(10), [d]); // an event for d while d is processed
    step(&queue, "add d at priority 10 while d is processing");
    let b = get(&queue).await; // d is held back; the keys behind it are not
    queue.done(&b);
    queue.done(&d); // now the re-added d can be handed out
    step(&queue, "done b, done d");
    let d = get(&queue).await;
    queue.done(&d);
    // ANCHOR_END: locked

    // ANCHOR: ready
    tokio::time::advance(Duration::from_secs(1)).await;
    step(
        &queue,
        &format!("{} later: e is ready", GoDuration(Duration::from_secs(1))),
    );
    let e = get(&queue).await; // priority 0 beats the initial list's -100
    queue.done(&e);
    for _ in 0..2 {
        let key = get(&queue).await;
        queue.done(&key);
    }
    // ANCHOR_END: ready

    // ANCHOR: stall
    queue.add_after("g", Duration::from_secs(10));
    queue.add_after("g", Duration::from_secs(2)); // the earliest readiness wins
    step(&queue, "add_after g 10s, then add_after g 2s");
    tokio::time::advance(Duration::from_secs(2)).await;
    step(&queue, "2s later: g is ready");
    let g = get(&queue).await;
    for _ in 0..100 {
        queue.add(g); // and no done: the stall of chapter 5
    }
    step(&queue, "no done for g; 100 more add g");
    let stalled = tokio::time::timeout(PATIENCE, queue.get_with_priority())
        .await
        .is_err();
    println!(
        "{:<44}{}",
        "get with only g queued",
        if stalled { "timed out after 500ms" } else { "returned" }
    );
    // ANCHOR_END: stall

    // ANCHOR: shutdown
    queue.shut_down();
    queue.add("f");
    step(&queue, "shut_down, then add f (ignored)");
    println!(
        "get after shut_down returns at once: shutdown={}",
        queue.get_with_priority().await.is_none()
    );
    // No drain: a fresh queue with a ready, unlocked key, shut down.
    let fresh = PriorityQueue::new();
    fresh.add("h");
    step(&fresh, "new queue: add h");
    fresh.shut_down();
    step(&fresh, "shut_down");
    println!(
        "get returns at once, h not handed out: shutdown={}",
        fresh.get_with_priority().await.is_none()
    );
    // ANCHOR_END: shutdown
}
