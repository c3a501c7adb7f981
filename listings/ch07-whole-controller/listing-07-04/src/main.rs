// The scrape itself: what a Prometheus server reads from a controller built
// with faithful-workqueue, in the text exposition format, after a short run
// (one key that succeeds, one that fails once). On the paused clock every
// duration is zero, so each histogram observation lands in its first bucket.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::anyhow;
use faithful_workqueue::controller::{Controller, Options};
use faithful_workqueue::prometheus::{ControllerMetrics, WorkqueueMetricsProvider, encode};
use faithful_workqueue::reconcile::ReconcileResult;
use prometheus_client::registry::Registry;
use tokio::sync::{Notify, mpsc};

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: scrape
    let mut registry = Registry::default();
    let options = Options {
        name: "demo".to_owned(),
        metrics: Some(ControllerMetrics::register(&mut registry)),
        workqueue_metrics: Some(Arc::new(WorkqueueMetricsProvider::register(&mut registry))),
        ..Options::default()
    };
    // ANCHOR_END: scrape
    let failed_once = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(Notify::new());
    let reconciler = {
        let finished = finished.clone();
        move |key: &'static str| {
            let first_failure = key == "fail" && failed_once.fetch_add(1, Ordering::SeqCst) == 0;
            let finished = finished.clone();
            async move {
                if first_failure {
                    return Err(anyhow!("connection refused"));
                }
                if key == "fail" {
                    finished.notify_one(); // the retry succeeded: the run is over
                }
                Ok(ReconcileResult::done())
            }
        }
    };
    // ANCHOR: scrape
    let controller = Arc::new(Controller::new_typed_unmanaged(reconciler, options));
    let (events, source) = mpsc::channel(4);
    events.send("ok").await.expect("open");
    events.send("fail").await.expect("open");
    controller.start(source, async move { finished.notified().await }).await;
    print!("{}", encode(&registry));
    // ANCHOR_END: scrape
}
