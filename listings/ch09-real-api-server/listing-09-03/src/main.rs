// Listing 9-3: listing 9-2 again, with the one change that matters: the
// worker takes a `Lease` instead of a bare key. The error path is the same
// early return, but the lease's `Drop` calls `done`, so the rate-limited
// retry of cm-stuck comes back, reads the latest update, and the stall
// cannot happen.
//
// With a control plane up (`cargo xtask cluster up`):
//
// ```text
// KUBECONFIG=target/cluster/kubeconfig cargo run -p listing-09-03
// ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};
use cluster_support::{
    Cache, config_map, enqueue_every_change, set_data, step_of, until,
};
use faithful_workqueue::default_rate_limiters::default_typed_controller_rate_limiter;
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
    let Some(lease) = queue.lease().await else { return false };
    if sync_handler(&lease, cache, last).is_err() {
        queue.add_rate_limited(lease.clone());
        return true; // the same early return; dropping `lease` calls done
    }
    queue.forget(&lease);
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
    let ns = cluster_support::namespace(&client, "listing-09-03").await?;
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

    for step in 1..=UPDATES {
        set_data(&api, "cm-stuck", "step", &step.to_string()).await?;
        set_data(&api, "cm-ok", "step", &step.to_string()).await?;
    }
    // cm-stuck still fails every time, but each retry reads its latest data.
    let both = || {
        last_step("cm-ok") == Some(UPDATES)
            && last_step("cm-stuck") == Some(UPDATES)
    };
    until(&mut processed, both, "the reconciles of both objects' last updates")
        .await?;

    println!(
        "after {UPDATES} updates to each object through the API server, with the lease:"
    );
    println!("{:<10} last step reconciled", "object");
    for name in ["cm-ok", "cm-stuck"] {
        println!("{name:<10} {}", last_step(name).unwrap_or_default());
    }
    queue.shut_down();
    Ok(())
}
