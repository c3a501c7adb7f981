// The same calls on client-go's queue and on controller-runtime's priority
// queue, and what each holds after every call: client-go's FIFO, dirty set
// and processing set; the priority queue's ready entries, waiting entries
// and locked keys. Its Go twin reads the real queues' collections and
// prints the same bytes; `cargo xtask bless` draws the chapter's diagram
// (diagram.svg) from this output.

use std::time::Duration;

use faithful_workqueue::default_rate_limiters::default_typed_controller_rate_limiter;
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::PriorityQueue;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use tokio::time::Instant;

type Key = &'static str;

fn list(
    open: &str,
    keys: impl IntoIterator<Item = String>,
    close: &str,
) -> String {
    format!("{open}{}{close}", keys.into_iter().collect::<Vec<_>>().join(" "))
}

/// One row: the call, then each queue's collections and its `Len()`.
fn show(
    call: &str,
    client_go: &RateLimitingQueue<Key>,
    pq: &PriorityQueue<Key>,
    start: Instant,
) {
    let (c, p) = (client_go.queue().debug_state(), pq.debug_state());
    let strings =
        |keys: &[Key]| keys.iter().map(|k| k.to_string()).collect::<Vec<_>>();
    let waiting = p
        .waiting
        .iter()
        .map(|(k, at)| format!("{k}@{}", GoDuration(*at - start)));
    println!(
        "{call:<19}| {:<6} {:<6} {:<10} {:<4}| {:<6} {:<8} {:<6} {}",
        list("[", strings(&c.fifo), "]"),
        list("{", strings(&c.dirty), "}"),
        list("{", strings(&c.processing), "}"),
        client_go.len(),
        list("[", strings(&p.ready), "]"),
        list("[", waiting, "]"),
        list("{", strings(&p.locked), "}"),
        pq.len(),
    );
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let start = Instant::now();
    let client_go =
        RateLimitingQueue::new(default_typed_controller_rate_limiter());
    let pq = PriorityQueue::new();
    let show = |call: &str| show(call, &client_go, &pq, start);
    println!(
        "{:<19}| {:<6} {:<6} {:<10} {:<4}| {:<6} {:<8} {:<6} Len",
        "call",
        "FIFO",
        "dirty",
        "processing",
        "Len",
        "ready",
        "waiting",
        "locked"
    );

    // ANCHOR: calls
    // Every call goes to both queues; each row is what both hold after it.
    for key in ["a", "b", "a"] {
        client_go.add(key);
        pq.add(key);
        show(&format!("add {key}"));
    }
    let (got, got_pq) = (client_go.get().await, pq.get().await);
    assert_eq!(got, got_pq, "both hand out the same key");
    show(&format!("get -> {}", got.unwrap()));
    client_go.add("a");
    pq.add("a");
    show("add a (while held)");
    client_go.add_after("c", Duration::from_millis(10));
    pq.add_after("c", Duration::from_millis(10));
    show("add_after c 10ms");
    client_go.done(&"a");
    pq.done(&"a");
    show("done a");
    let (got, got_pq) = (client_go.get().await, pq.get().await);
    assert_eq!(got, got_pq);
    show(&format!("get -> {}", got.unwrap()));
    client_go.done(&"b");
    pq.done(&"b");
    show("done b");
    tokio::time::advance(Duration::from_millis(10)).await;
    show("10ms later");
    for _ in 0..2 {
        let (got, got_pq) = (client_go.get().await, pq.get().await);
        assert_eq!(got, got_pq);
        show(&format!("get -> {}", got.unwrap()));
    }
    for key in ["a", "c"] {
        client_go.done(&key);
        pq.done(&key);
        show(&format!("done {key}"));
    }
    // ANCHOR_END: calls
}
