// The silent stall of chapter 5, seen through controller-runtime's workqueue
// metrics: the one signal a key whose Done never comes gives. Its Go twin runs
// client-go's queue with controller-runtime's metrics provider and prints the
// same bytes.

use std::sync::Arc;
use std::time::Duration;

use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::prometheus::{WorkqueueMetricsProvider, samples};
use faithful_workqueue::queue::QueueConfig;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use prometheus_client::registry::Registry;
use tokio::time::Instant;

/// The value of one `stall` series in a scrape.
fn read(registry: &Registry, family: &str) -> f64 {
    samples(registry)
        .into_iter()
        .find(|(series, _)| {
            series.starts_with(&format!("{family}{{"))
                && series.contains(r#"name="stall""#)
        })
        .map_or(0.0, |(_, value)| value)
}

/// Lets the queue's 500ms metrics task run at the current instant.
async fn settle() {
    for _ in 0..8 {
        tokio::task::yield_now().await;
    }
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: stall
    let mut registry = Registry::default();
    let provider = Arc::new(WorkqueueMetricsProvider::register(&mut registry));
    let queue = RateLimitingQueue::with_config(
        priority_queue_default_rate_limiter(),
        QueueConfig::named("stall").metrics_provider(provider),
    );
    queue.add("obj");
    let obj = queue.get().await.expect("obj is queued");
    let got_at = Instant::now();
    queue.forget(&obj);
    // ... and no queue.done(&obj). Events keep coming:
    for _ in 0..100 {
        queue.add("obj");
    }
    // ANCHOR_END: stall

    // ANCHOR: watch
    let row = |a: &str, b: &str, c: &str, d: &str, e: &str, f: &str| {
        println!("{a:<9}{b:<7}{c:<7}{d:<6}{e:<17}{f}")
    };
    // The two gauges in seconds: workqueue_unfinished_work_seconds and
    // workqueue_longest_running_processor_seconds.
    row("time", "Len()", "depth", "adds", "unfinished_work", "longest_running");
    for at in [1, 10, 60].map(Duration::from_secs) {
        tokio::time::advance(got_at + at - Instant::now()).await;
        settle().await;
        row(
            &GoDuration(at).to_string(),
            &queue.len().to_string(),
            &read(&registry, "workqueue_depth").to_string(),
            &read(&registry, "workqueue_adds_total").to_string(),
            &read(&registry, "workqueue_unfinished_work_seconds").to_string(),
            &read(&registry, "workqueue_longest_running_processor_seconds")
                .to_string(),
        );
    }
    println!();
    println!("no error, no log line: only the two unfinished-work gauges grow");
    // ANCHOR_END: watch

    // ANCHOR: done
    // A second key is taken at 1m; obj's done finally comes at 1m30s.
    println!();
    queue.add("other");
    let _other = queue.get().await.expect("other is queued"); // held until the end
    let other_at = Instant::now();
    for (at, done) in [(90_000, true), (90_500, false)]
        .map(|(ms, d)| (Duration::from_millis(ms), d))
    {
        tokio::time::advance(got_at + at - Instant::now()).await;
        settle().await;
        let longest =
            read(&registry, "workqueue_longest_running_processor_seconds");
        row(
            &GoDuration(at).to_string(),
            &queue.len().to_string(),
            &read(&registry, "workqueue_depth").to_string(),
            &read(&registry, "workqueue_adds_total").to_string(),
            &read(&registry, "workqueue_unfinished_work_seconds").to_string(),
            &longest.to_string(),
        );
        if done {
            queue.done(&obj);
            println!(
                "done(obj) at {}; other, taken at {}, is still held",
                GoDuration(at),
                GoDuration(other_at - got_at)
            );
        } else if longest == (Instant::now() - other_at).as_secs_f64() {
            println!("the longest-running gauge fell to other's age, not to 0");
        }
    }
    // ANCHOR_END: done
}
