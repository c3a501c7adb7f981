// Listing 9-9: the depth metric's cardinality cap. The crate's controller,
// with default options (so the priority queue), is fed by a kube-rs watcher
// and an event handler of the listing's own: each ConfigMap created is
// enqueued at the priority its "priority" label names. While the only
// worker is held by the reconcile of cm-gate (priority 0), thirty more
// objects are created with priorities 1 to 30, one more distinct priority
// than the 25 the depth metric gives series of their own. Three scrapes of
// the registry (with thirty objects queued, after the queue drained, and
// with one more object queued behind a second gate) show `workqueue_depth`
// by priority.
//
// With SCRAPES_DIR set, the three scrapes are also written there whole, for
// `promtool check metrics` (the suite does that).
//
// With a control plane up (`cargo xtask cluster up`):
//
// ```text
// KUBECONFIG=target/cluster/kubeconfig cargo run -p listing-09-09
// ```

use std::collections::BTreeSet;
use std::pin::pin;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use cluster_support::{labeled_config_map, receive, scrape};
use faithful_workqueue::controller::{Controller, DefaultQueue, Options};
use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue};
use faithful_workqueue::prometheus::{
    ControllerMetrics, WorkqueueMetricsProvider, encode_prometheus_text,
};
use faithful_workqueue::reconcile::ReconcileResult;
use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use prometheus_client::registry::Registry;
use tokio::sync::{Semaphore, mpsc};

/// How many objects queue up behind the gate, at priorities 1 to `OBJECTS`.
/// With the gate's 0, that is `OBJECTS + 1` distinct priorities.
const OBJECTS: usize = 30;

// ANCHOR: handler
/// The event handler: each object created is enqueued at the priority its
/// label names (an object without one is not enqueued).
fn enqueue_at_label(queue: &PriorityQueue<String>, cm: &ConfigMap) {
    let Some(priority) =
        cm.labels().get("priority").and_then(|p| p.parse().ok())
    else {
        return;
    };
    queue.add_with_opts(
        AddOpts { priority: Some(priority), ..AddOpts::default() },
        [cm.name_any()],
    );
}

/// The watch, calling the handler for each object it sees for the first
/// time: a create (the namespace is new, so the initial list is empty).
async fn watch(api: Api<ConfigMap>, queue: PriorityQueue<String>) {
    let mut seen = BTreeSet::new();
    let mut events = pin!(
        watcher(api, watcher::Config::default())
            .default_backoff()
            .applied_objects()
    );
    while let Ok(Some(cm)) = events.try_next().await {
        if seen.insert(cm.name_any()) {
            enqueue_at_label(&queue, &cm);
        }
    }
}
// ANCHOR_END: handler

#[tokio::main]
async fn main() -> Result<()> {
    let client = cluster_support::client().await?;
    let ns = cluster_support::namespace(&client, "listing-09-09").await?;
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);

    let mut registry = Registry::default();
    let options = Options {
        name: "configmap".to_owned(),
        metrics: Some(ControllerMetrics::register(&mut registry)),
        workqueue_metrics: Some(Arc::new(WorkqueueMetricsProvider::register(
            &mut registry,
        ))),
        ..Options::default()
    };
    let registry = Arc::new(registry);
    let (held_tx, mut held) = mpsc::unbounded_channel();
    let (reconciled_tx, mut reconciled) = mpsc::unbounded_channel();
    let release = Arc::new(Semaphore::new(0));
    let reconciler = {
        let release = release.clone();
        move |name: String| {
            let (held_tx, reconciled_tx, release) =
                (held_tx.clone(), reconciled_tx.clone(), release.clone());
            async move {
                if name.starts_with("cm-gate") {
                    let _ = held_tx.send(name.clone());
                    // The only worker waits here until main lets it go.
                    release
                        .acquire()
                        .await
                        .context("the gate closed")?
                        .forget();
                }
                let _ = reconciled_tx.send(name);
                Ok(ReconcileResult::done())
            }
        }
    };
    let controller =
        Arc::new(Controller::new_typed_unmanaged(reconciler, options));
    let DefaultQueue::Priority(queue) = controller.queue().clone() else {
        bail!("the default queue is the priority queue");
    };
    tokio::spawn(watch(api.clone(), queue));
    // No source: the watch enqueues through the handler itself.
    let (_, source) = mpsc::channel(1);
    tokio::spawn(controller.start(source, std::future::pending()));

    let get = || {
        let registry = registry.clone();
        async move { Some(encode_prometheus_text(&registry)) }
    };
    let depth = |s: &str| scrape::value(s, "workqueue_depth", "configmap", &[]);
    // ANCHOR: phases
    // The gate takes the only worker; then thirty objects queue up behind it.
    labeled_config_map(&api, "cm-gate", "priority", "0").await?;
    receive(&mut held, "the reconcile of cm-gate to start").await?;
    for p in 1..=OBJECTS {
        labeled_config_map(
            &api,
            &format!("cm-{p:02}"),
            "priority",
            &p.to_string(),
        )
        .await?;
    }
    let queued = scrape::until(
        get,
        |s| depth(s) == OBJECTS as f64,
        "all 30 objects queued behind cm-gate",
    )
    .await?;

    // Release the gate; every object is reconciled and the queue is empty.
    release.add_permits(1);
    let mut done = BTreeSet::new();
    while done.len() < OBJECTS + 1 {
        done.insert(
            receive(
                &mut reconciled,
                "the reconciles of cm-gate and the 30 objects",
            )
            .await?,
        );
    }
    let drained =
        scrape::until(get, |s| depth(s) == 0.0, "an empty queue").await?;

    // A second gate, and one more object at priority 1, which has a series.
    labeled_config_map(&api, "cm-gate-2", "priority", "0").await?;
    receive(&mut held, "the reconcile of cm-gate-2 to start").await?;
    labeled_config_map(&api, "cm-late", "priority", "1").await?;
    let again = scrape::until(
        get,
        |s| depth(s) == 1.0,
        "cm-late queued behind cm-gate-2",
    )
    .await?;
    // ANCHOR_END: phases
    release.add_permits(1);
    while receive(&mut reconciled, "the reconcile of cm-late").await?
        != "cm-late"
    {}
    save(&[&queued, &drained, &again])?;
    print_depth(&[&queued, &drained, &again]);
    Ok(())
}

/// Prints `workqueue_depth` by priority label for the three scrapes: numeric
/// priorities ascending, then any other label value.
fn print_depth(scrapes: &[&str]) {
    let series: Vec<_> = scrapes
        .iter()
        .map(|s| {
            scrape::by_label(s, "workqueue_depth", "configmap", "priority")
        })
        .collect();
    let mut order: Vec<&String> = series
        .iter()
        .flat_map(|s| s.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    order.sort_by_key(|label| match label.parse::<i64>() {
        Ok(n) => (0, n, String::new()),
        Err(_) => (1, 0, (*label).clone()),
    });
    println!(r#"workqueue_depth{{controller="configmap"}} by priority label,"#);
    println!("from three GETs of /metrics:");
    println!("  queued:  cm-gate (priority 0) in its reconcile,");
    println!("           cm-01..cm-30 (priorities 1..30) queued behind it");
    println!("  drained: all 31 reconciled, the queue empty");
    println!("  again:   cm-gate-2 (priority 0) in its reconcile,");
    println!("           cm-late (priority 1) queued behind it");
    println!(
        "{:<28} {:>8} {:>8} {:>8}",
        "priority", "queued", "drained", "again"
    );
    let mut sums = vec![0.0; scrapes.len()];
    for label in &order {
        print!("{label:<28}");
        for (i, s) in series.iter().enumerate() {
            let v = s.get(*label).copied().unwrap_or(0.0);
            sums[i] += v;
            print!(" {v:>8}");
        }
        println!();
    }
    print!("{:<28}", "sum (the queue's length)");
    for sum in sums {
        print!(" {sum:>8}");
    }
    println!();
    println!("distinct priority label values: {}", order.len());
}

/// Writes the scrapes into SCRAPES_DIR, when it is set.
fn save(scrapes: &[&str]) -> Result<()> {
    let Some(dir) = std::env::var_os("SCRAPES_DIR") else { return Ok(()) };
    for (i, s) in scrapes.iter().enumerate() {
        let path = std::path::Path::new(&dir)
            .join(format!("listing-09-09-rust-{}.txt", i + 1));
        std::fs::write(&path, s)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
