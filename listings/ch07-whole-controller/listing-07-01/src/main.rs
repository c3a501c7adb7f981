// A whole controller, end to end: an event source (a channel), the default
// priority queue and limiter, one worker, the reconcile switch, controller-
// runtime's metrics, and a graceful shutdown. Its Go twin runs the real
// controller-runtime controller on the same script and prints the same bytes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use faithful_workqueue::controller::{Controller, Options};
use faithful_workqueue::prometheus::{
    ControllerMetrics, WorkqueueMetricsProvider, samples,
};
use faithful_workqueue::reconcile::{ReconcileResult, terminal_error};
use prometheus_client::registry::Registry;
use tokio::sync::{Notify, mpsc};

type Key = &'static str;

/// The metric families the table shows (histograms by their sample count).
const SHOWN: [&str; 12] = [
    "controller_runtime_active_workers",
    "controller_runtime_max_concurrent_reconciles",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_reconcile_panics_total",
    "controller_runtime_reconcile_time_seconds_count",
    "controller_runtime_reconcile_total",
    "controller_runtime_terminal_reconcile_errors_total",
    "workqueue_adds_total",
    "workqueue_depth",
    "workqueue_queue_duration_seconds_count",
    "workqueue_retries_total",
    "workqueue_work_duration_seconds_count",
];

// ANCHOR: script
/// The same script as listing 1-1: each key misbehaves once.
async fn reconcile(
    key: Key,
    attempt: usize,
) -> anyhow::Result<ReconcileResult> {
    let first = attempt == 1;
    let (shown, outcome) = match key {
        "fail" if first => {
            ("error: connection refused", Err(anyhow!("connection refused")))
        }
        "terminal" => (
            "terminal error: spec.replicas must be >= 0",
            Err(terminal_error(anyhow!("spec.replicas must be >= 0"))),
        ),
        "later" if first => (
            "requeue after 30ms",
            Ok(ReconcileResult::requeue_after(Duration::from_millis(30))),
        ),
        "boom" if first => {
            println!("reconcile {key:?} #{attempt} -> panic");
            panic!("boom");
        }
        _ => ("success", Ok(ReconcileResult::done())),
    };
    println!("reconcile {key:?} #{attempt} -> {shown}");
    outcome
}
// ANCHOR_END: script

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    std::panic::set_hook(Box::new(|_| {})); // the recovered panic stays quiet

    // ANCHOR: controller
    let mut registry = Registry::default();
    let options = Options {
        name: "demo".to_owned(),
        metrics: Some(ControllerMetrics::register(&mut registry)),
        workqueue_metrics: Some(Arc::new(WorkqueueMetricsProvider::register(
            &mut registry,
        ))),
        ..Options::default() // priority queue on, panics recovered, one worker
    };
    // ANCHOR_END: controller

    let attempts: Arc<Mutex<HashMap<Key, usize>>> = Arc::default();
    let finished = Arc::new(AtomicUsize::new(0));
    let all_done = Arc::new(Notify::new());
    let reconciler = {
        let (finished, all_done) = (finished.clone(), all_done.clone());
        move |key: Key| {
            let attempt = {
                let mut attempts = attempts.lock().unwrap();
                let n = attempts.entry(key).or_insert(0);
                *n += 1;
                *n
            };
            let (finished, all_done) = (finished.clone(), all_done.clone());
            async move {
                // Counts the reconcile when it ends, however it ends.
                struct Count(Arc<AtomicUsize>, Arc<Notify>);
                impl Drop for Count {
                    fn drop(&mut self) {
                        if self.0.fetch_add(1, Ordering::SeqCst) + 1 == 8 {
                            self.1.notify_one();
                        }
                    }
                }
                let _count = Count(finished, all_done);
                reconcile(key, attempt).await
            }
        }
    };
    // ANCHOR: controller
    let controller =
        Arc::new(Controller::new_typed_unmanaged(reconciler, options));

    let (events, source) = mpsc::channel(16);
    for key in ["ok", "fail", "terminal", "later", "boom"] {
        events.send(key).await.expect("the source is open");
    }
    // Runs until all eight reconciles have ended, then shuts down gracefully.
    controller.start(source, async move { all_done.notified().await }).await;
    // ANCHOR_END: controller

    // ANCHOR: metrics
    println!();
    println!("metrics after shutdown:");
    for (series, value) in samples(&registry) {
        let family = series.split('{').next().unwrap_or_default();
        if SHOWN.contains(&family) && series.contains(r#"controller="demo""#) {
            println!("{series} {value}");
        }
    }
    // ANCHOR_END: metrics
}
