// Listing 9-8: a fault. kube-apiserver is killed and started again on the
// same etcd while listing 9-1's informer and worker run. kube-rs's watcher
// does not list again after a broken watch: it watches again from the last
// resource version it saw, and lists only if the server says that version
// is gone. So the objects it already had are not reconciled again, and
// nothing is lost: an object created after the restart is reconciled as
// usual. client-go listed again in this restart (after some watch failures
// its reflector does, after others it resumes too); the Go twin prints its
// own output.
//
// The restart is the control plane's: the listing signals the supervisor
// whose PID is in `CLUSTER_SUPERVISOR_PID` (`cargo xtask cluster up` prints
// it). With a control plane up:
//
// ```text
// KUBECONFIG=target/cluster/kubeconfig CLUSTER_SUPERVISOR_PID=<pid> cargo run -p listing-09-08
// ```

use std::collections::BTreeMap;

use anyhow::Result;
use cluster_support::informer::{Priorities, header, row};
use cluster_support::{config_map, restart_api_server};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

#[tokio::main]
async fn main() -> Result<()> {
    let client = cluster_support::client().await?;
    let ns = cluster_support::namespace(&client, "listing-09-08").await?;
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);
    config_map(&api, "cm-a", "step", "initial").await?;
    config_map(&api, "cm-b", "step", "initial").await?;
    let mut c = Priorities::start(api.clone(), None);

    header();
    // ANCHOR: phases
    let first = c
        .first("the reconciles of the initial list", &["cm-a", "cm-b"])
        .await?;
    row("create, in the initial list", "cm-a", Some(first["cm-a"]));
    row("create, in the initial list", "cm-b", Some(first["cm-b"]));

    // Every reconcile from here on comes from the restart or after it.
    restart_api_server().await?;
    config_map(&api, "cm-c", "step", "created").await?;
    // The watch delivers cm-c only once it is back, after any re-list; then
    // wait until nothing is queued or running.
    let mut since = BTreeMap::new();
    loop {
        let s = c.next_seen("the reconciles after the restart").await?;
        let queue_empty = s.queue_empty;
        since.entry(s.name).or_insert(s.priority);
        if since.contains_key("cm-c") && queue_empty {
            break;
        }
    }
    for name in ["cm-a", "cm-b"] {
        row("after the restart, unchanged", name, since.get(name).copied());
    }
    row("create, after the restart", "cm-c", since.get("cm-c").copied());
    // ANCHOR_END: phases
    c.queue.shut_down();
    Ok(())
}
