// Listing 9-2: the stall, end to end. A kube-rs watcher feeds the crate's
// rate-limiting queue, as sample-controller's informer feeds client-go's,
// and one worker's error path requeues the key but forgets `done`.
//
// cm-stuck fails to reconcile, so its first reconcile takes the error path
// and the key stays in the processing set for good. Then each object is
// updated twenty times through the API server, alternately. The listing
// waits until cm-ok's twentieth update was reconciled and nothing else is
// queued or running: by then the watch has delivered every update of
// cm-stuck too (one watch, in order), and none of them was reconciled.
//
// With a control plane up (`cargo xtask cluster up`):
//
// ```text
// KUBECONFIG=target/cluster/kubeconfig cargo run -p listing-09-02
// ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};
use cluster_support::{
    Cache, config_map, enqueue_every_change, set_data, step_of, until,
};
use faithful_workqueue::default_rate_limiters::default_typed_controller_rate_limiter;
use faithful_workqueue::queue::QueueState;
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

const UPDATES: u32 = 20;

/// The last step each object's reconcile read.
type Last = Arc<Mutex<BTreeMap<String, u32>>>;

// ANCHOR: worker
async fn process_next_work_item(
    queue: &RateLimitingQueue<String>,
    cache: &Cache,
    last: &Last,
) -> bool {
    let Some(key) = queue.get().await else { return false };
    if sync_handler(&key, cache, last).is_err() {
        queue.add_rate_limited(key);
        return true; // the bug: this path never calls queue.done(&key)
    }
    queue.forget(&key);
    queue.done(&key);
    true
}
// ANCHOR_END: worker

/// Notes the step it read; cm-stuck's data is never valid.
fn sync_handler(name: &str, cache: &Cache, last: &Last) -> Result<()> {
    let Some(step) = step_of(cache, name) else { return Ok(()) };
    last.lock().unwrap().insert(name.to_owned(), step);
    if name == "cm-stuck" {
        bail!("cm-stuck: invalid data");
    }
    Ok(())
}

async fn worker(
    queue: RateLimitingQueue<String>,
    cache: Cache,
    last: Last,
    processed: UnboundedSender<()>,
) {
    while process_next_work_item(&queue, &cache, &last).await {
        let _ = processed.send(());
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let client = cluster_support::client().await?;
    let ns = cluster_support::namespace(&client, "listing-09-02").await?;
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);
    config_map(&api, "cm-ok", "step", "0").await?;
    config_map(&api, "cm-stuck", "step", "0").await?;

    let (cache, last) = (Cache::default(), Last::default());
    let queue = RateLimitingQueue::new(default_typed_controller_rate_limiter());
    enqueue_every_change(api.clone(), cache.clone(), queue.clone()).await?;
    let (tx, mut processed) = unbounded_channel();
    tokio::spawn(worker(queue.clone(), cache, last.clone(), tx));
    let last_step = |name: &str| last.lock().unwrap().get(name).copied();
    until(
        &mut processed,
        || last_step("cm-ok").is_some() && last_step("cm-stuck").is_some(),
        "the first reconciles",
    )
    .await?;

    // ANCHOR: updates
    for step in 1..=UPDATES {
        set_data(&api, "cm-stuck", "step", &step.to_string()).await?;
        set_data(&api, "cm-ok", "step", &step.to_string()).await?;
    }
    // Done with cm-ok's last update, and nothing else waiting or running.
    let settled = || {
        last_step("cm-ok") == Some(UPDATES)
            && queue.is_empty()
            && queue.queue().debug_state().processing.len() == 1
    };
    until(&mut processed, settled, "the reconcile of cm-ok's last update")
        .await?;
    // ANCHOR_END: updates

    println!("after {UPDATES} updates to each object through the API server:");
    println!("{:<10} last step reconciled", "object");
    for name in ["cm-ok", "cm-stuck"] {
        println!("{name:<10} {}", last_step(name).unwrap_or_default());
    }
    let QueueState { fifo, dirty, processing } = queue.queue().debug_state();
    println!(
        "queue: FIFO [{}]  dirty {{{}}}  processing {{{}}}  Len() {}",
        fifo.join(" "),
        dirty.join(" "),
        processing.join(" "),
        queue.len()
    );
    queue.shut_down();
    Ok(())
}
