//! Listing 13-1: the priority each event gives a key, with a kube-rs watcher
//! feeding the crate's event handler and priority queue.
//!
//! Two ConfigMaps exist before the watch starts. `inform` does what
//! client-go's informer does between the watch and the handlers: it keeps a
//! cache, calls the handler with the old object's resource version on an
//! update, and resyncs every 4 seconds. One worker hands each key out with
//! its priority and reads the object from the cache, as a reconciler would.
//!
//! With a control plane up (`cargo xtask cluster up`):
//!
//! ```text
//! KUBECONFIG=target/cluster/kubeconfig cargo run -p listing-13-01
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Result, bail};
use cluster_support::{config_map, receive, set_data};
use faithful_workqueue::handler::EnqueueRequestForObject;
use faithful_workqueue::priorityqueue::PriorityQueue;
use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::time::{Instant, interval_at};

/// The resync period. The phases before the resync take well under a second.
const RESYNC: Duration = Duration::from_secs(4);

/// The informer's cache: object name to object.
type Cache = Arc<Mutex<BTreeMap<String, ConfigMap>>>;

/// One reconcile: the object, the priority it was handed out with, and the
/// "step" its data said when the worker read it from the cache.
struct Seen {
    name: String,
    step: String,
    priority: i32,
}

// ANCHOR: informer
/// What an informer does between the watch and the event handler. The
/// cache is updated before the handler runs, as in client-go, so the worker
/// that gets the key reads the object the event was about (or a newer one).
async fn inform(api: Api<ConfigMap>, cache: Cache, queue: PriorityQueue<String>) -> Result<()> {
    let handler = EnqueueRequestForObject;
    let mut events = pin!(watcher(api, watcher::Config::default()).default_backoff());
    let mut resync = interval_at(Instant::now() + RESYNC, RESYNC);
    let mut synced = false; // only the first list is "the initial list"
    let mut listed = BTreeSet::new(); // what a (re-)list returned
    loop {
        tokio::select! {
            event = events.try_next() => match event? {
                Some(watcher::Event::Init) => listed.clear(),
                Some(watcher::Event::InitApply(cm) | watcher::Event::Apply(cm)) => {
                    let (name, new_rv) = (cm.name_any(), cm.resource_version().unwrap_or_default());
                    listed.insert(name.clone());
                    let old = cache.lock().unwrap().insert(name.clone(), cm);
                    match old {
                        None => handler.create(&queue, name, !synced),
                        Some(old) => handler.update(&queue, name, &old.resource_version().unwrap_or_default(), &new_rv),
                    }
                }
                Some(watcher::Event::InitDone) => {
                    // A re-list after a lost watch: what it no longer returns was deleted.
                    let gone: Vec<String> =
                        cache.lock().unwrap().keys().filter(|name| !listed.contains(*name)).cloned().collect();
                    for name in gone {
                        cache.lock().unwrap().remove(&name);
                        handler.delete(&queue, name);
                    }
                    synced = true;
                }
                Some(watcher::Event::Delete(cm)) => {
                    cache.lock().unwrap().remove(&cm.name_any());
                    handler.delete(&queue, cm.name_any());
                }
                None => return Ok(()),
            },
            // A resync: every cached object again, as an update whose old
            // and new resource versions are the same.
            _ = resync.tick() => {
                let cached: Vec<(String, String)> = cache.lock().unwrap().iter()
                    .map(|(name, cm)| (name.clone(), cm.resource_version().unwrap_or_default()))
                    .collect();
                for (name, rv) in cached {
                    handler.update(&queue, name, &rv, &rv);
                }
            }
        }
    }
}
// ANCHOR_END: informer

// ANCHOR: worker
/// One worker: get the key with its priority, read the object, done.
async fn work(queue: PriorityQueue<String>, cache: Cache, seen: UnboundedSender<Seen>) {
    while let Some((name, priority)) = queue.get_with_priority().await {
        let step = cache.lock().unwrap().get(&name).and_then(|cm| cm.data.as_ref()?.get("step").cloned());
        if let Some(step) = step {
            let _ = seen.send(Seen { name: name.clone(), step, priority });
        }
        queue.done(&name);
    }
}
// ANCHOR_END: worker

#[tokio::main]
async fn main() -> Result<()> {
    let client = cluster_support::client().await?;
    let ns = cluster_support::namespace(&client, "listing-13-01").await?;
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);

    // ANCHOR: before
    config_map(&api, "cm-a", "step", "initial").await?;
    config_map(&api, "cm-b", "step", "initial").await?;
    // ANCHOR_END: before

    let cache = Cache::default();
    let queue = PriorityQueue::new();
    let (tx, mut reconciles) = unbounded_channel();
    let started = Instant::now();
    let informer = tokio::spawn(inform(api.clone(), cache.clone(), queue.clone()));
    tokio::spawn(work(queue.clone(), cache, tx));

    let row = |event: &str, name: &str, priority: i32| println!("{event:<40} {name:<6} {priority}");
    println!("{:<40} {:<6} priority", "event", "object");

    // ANCHOR: phases
    // The initial list: both objects existed before the watch started.
    let mut first = BTreeMap::new();
    while first.len() < 2 {
        let s = receive(&mut reconciles, "the reconciles of the initial list").await?;
        first.entry(s.name).or_insert(s.priority);
    }
    row("create, in the initial list", "cm-a", first["cm-a"]);
    row("create, in the initial list", "cm-b", first["cm-b"]);

    config_map(&api, "cm-c", "step", "created").await?;
    row("create, after the start", "cm-c", next(&mut reconciles, "cm-c", "created").await?);

    set_data(&api, "cm-a", "step", "changed").await?;
    row("update, resource version changed", "cm-a", next(&mut reconciles, "cm-a", "changed").await?);
    if started.elapsed() >= RESYNC {
        bail!("the phases before the resync took {:?}, longer than the resync period", started.elapsed());
    }

    // The resync: every object again.
    let mut resynced = BTreeMap::new();
    while resynced.len() < 3 {
        let s = receive(&mut reconciles, "the reconciles of the first resync").await?;
        resynced.entry(s.name).or_insert(s.priority);
    }
    for name in ["cm-a", "cm-b", "cm-c"] {
        row("update, resync (same resource version)", name, resynced[name]);
    }
    // ANCHOR_END: phases

    informer.abort();
    queue.shut_down();
    Ok(())
}

/// The priority of the next reconcile of `name` that read `step`.
async fn next(reconciles: &mut tokio::sync::mpsc::UnboundedReceiver<Seen>, name: &str, step: &str) -> Result<i32> {
    let what = format!("a reconcile of {name} reading step {step:?}");
    loop {
        let s = receive(reconciles, &what).await?;
        if s.name == name && s.step == step {
            return Ok(s.priority);
        }
    }
}
