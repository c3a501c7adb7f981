// Listing 9-1: the priority each event gives a key, with a kube-rs watcher
// feeding the crate's event handler and priority queue.
//
// Two ConfigMaps exist before the watch starts. `inform` (in
// `cluster-support`) does what client-go's informer does between the watch
// and the handlers: it keeps a cache, calls the handler with the old
// object's resource version on an update, and here resyncs every 4 seconds.
// One worker hands each key out with its priority and reads the object from
// the cache, as a reconciler would.
//
// With a control plane up (`cargo xtask cluster up`):
//
// ```text
// KUBECONFIG=target/cluster/kubeconfig cargo run -p listing-09-01
// ```

use std::time::Duration;

use anyhow::{Result, bail};
use cluster_support::informer::{Priorities, header, row};
use cluster_support::{config_map, set_data};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use tokio::time::Instant;

/// The resync period. The phases before the resync take well under a second.
const RESYNC: Duration = Duration::from_secs(4);

#[tokio::main]
async fn main() -> Result<()> {
    let client = cluster_support::client().await?;
    let ns = cluster_support::namespace(&client, "listing-09-01").await?;
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);
    config_map(&api, "cm-a", "step", "initial").await?;
    config_map(&api, "cm-b", "step", "initial").await?;

    let started = Instant::now();
    let mut c = Priorities::start(api.clone(), Some(RESYNC));

    header();
    // ANCHOR: phases
    // The initial list: both objects existed before the watch started.
    let first = c
        .first("the reconciles of the initial list", &["cm-a", "cm-b"])
        .await?;
    row("create, in the initial list", "cm-a", Some(first["cm-a"]));
    row("create, in the initial list", "cm-b", Some(first["cm-b"]));

    config_map(&api, "cm-c", "step", "created").await?;
    row(
        "create, after the start",
        "cm-c",
        Some(c.next("cm-c", "created").await?),
    );

    set_data(&api, "cm-a", "step", "changed").await?;
    row(
        "update, resource version changed",
        "cm-a",
        Some(c.next("cm-a", "changed").await?),
    );
    if started.elapsed() >= RESYNC {
        bail!(
            "the phases before the resync took {:?}, longer than the resync period",
            started.elapsed()
        );
    }

    // The resync: every object again.
    let resynced = c
        .first("the reconciles of the first resync", &["cm-a", "cm-b", "cm-c"])
        .await?;
    for name in ["cm-a", "cm-b", "cm-c"] {
        row(
            "update, resync (same resource version)",
            name,
            Some(resynced[name]),
        );
    }
    // ANCHOR_END: phases
    c.queue.shut_down();
    Ok(())
}
