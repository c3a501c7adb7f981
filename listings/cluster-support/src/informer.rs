//! A small informer for ConfigMaps: a kube-rs watcher, a cache, and the
//! crate's event handler, with client-go's order of things; and the
//! controller of listings 9-1 and 9-8 built on it (the chapter shows
//! [`inform`]).

use std::collections::{BTreeMap, BTreeSet};
use std::pin::pin;
use std::time::Duration;

use anyhow::Result;
use faithful_workqueue::handler::EnqueueRequestForObject;
use faithful_workqueue::priorityqueue::PriorityQueue;
use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use tokio::sync::mpsc::{
    UnboundedReceiver, UnboundedSender, unbounded_channel,
};
use tokio::time::{Instant, Interval, interval_at};

use crate::Cache;

// ANCHOR: informer
/// What an informer does between the watch and the event handler. The
/// cache is updated before the handler runs, as in client-go, so the worker
/// that gets the key reads the object the event was about (or a newer one).
/// With `resync`, every cached object is delivered again on that period.
pub async fn inform(
    api: Api<ConfigMap>,
    cache: Cache,
    queue: PriorityQueue<String>,
    resync: Option<Duration>,
) -> Result<()> {
    let handler = EnqueueRequestForObject;
    let mut events =
        pin!(watcher(api, watcher::Config::default()).default_backoff());
    let mut resync =
        resync.map(|period| interval_at(Instant::now() + period, period));
    let mut synced = false; // only the first list is "the initial list"
    let mut listed = BTreeSet::new(); // what a (re-)list returned
    loop {
        tokio::select! {
            event = events.try_next() => match event {
                // The watch lost its connection or its place:
                // `default_backoff` waits, and the watcher carries on, with
                // a new list if it must. Nothing for the handler; say it on
                // stderr.
                Err(error) => eprintln!("watch: {error}"),
                Ok(Some(watcher::Event::Init)) => listed.clear(),
                Ok(Some(
                    watcher::Event::InitApply(cm) | watcher::Event::Apply(cm),
                )) => {
                    let name = cm.name_any();
                    let new_rv = cm.resource_version().unwrap_or_default();
                    listed.insert(name.clone());
                    let old = cache.lock().unwrap().insert(name.clone(), cm);
                    match old {
                        None => handler.create(&queue, name, !synced),
                        Some(old) => {
                            let old_rv =
                                old.resource_version().unwrap_or_default();
                            handler.update(&queue, name, &old_rv, &new_rv)
                        }
                    }
                }
                Ok(Some(watcher::Event::InitDone)) => {
                    // A re-list after a lost watch: what it no longer
                    // returns was deleted.
                    let gone: Vec<String> = cache
                        .lock()
                        .unwrap()
                        .keys()
                        .filter(|name| !listed.contains(*name))
                        .cloned()
                        .collect();
                    for name in gone {
                        cache.lock().unwrap().remove(&name);
                        handler.delete(&queue, name);
                    }
                    synced = true;
                }
                Ok(Some(watcher::Event::Delete(cm))) => {
                    cache.lock().unwrap().remove(&cm.name_any());
                    handler.delete(&queue, cm.name_any());
                }
                Ok(None) => return Ok(()),
            },
            // A resync: every cached object again, as an update whose old
            // and new resource versions are the same.
            () = tick(&mut resync) => {
                let cached: Vec<(String, String)> = cache
                    .lock()
                    .unwrap()
                    .iter()
                    .map(|(name, cm)| {
                        let rv = cm.resource_version().unwrap_or_default();
                        (name.clone(), rv)
                    })
                    .collect();
                for (name, rv) in cached {
                    handler.update(&queue, name, &rv, &rv);
                }
            }
        }
    }
}
// ANCHOR_END: informer

/// The next tick of the resync timer, or never without one.
async fn tick(resync: &mut Option<Interval>) {
    match resync {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// One reconcile: the object, the priority it was handed out with, the
/// "step" its data said when the worker read it from the cache, and whether
/// the queue was empty meanwhile. With one worker, an empty queue while a
/// key is processed means nothing is left once it is done.
#[derive(Debug)]
pub struct Seen {
    pub name: String,
    pub step: String,
    pub priority: i32,
    pub queue_empty: bool,
}

/// The controller of listings 9-1 and 9-8 (the Go twins have it in
/// `listings/internal/priorities`): [`inform`] feeding a priority queue, and
/// one worker that reports each reconcile.
pub struct Priorities {
    pub queue: PriorityQueue<String>,
    reconciles: UnboundedReceiver<Seen>,
}

impl Priorities {
    /// Starts the informer (resyncing every `resync`, if given) and the worker.
    pub fn start(api: Api<ConfigMap>, resync: Option<Duration>) -> Priorities {
        let cache = Cache::default();
        let queue = PriorityQueue::new();
        let (seen, reconciles) = unbounded_channel();
        tokio::spawn(inform(api, cache.clone(), queue.clone(), resync));
        tokio::spawn(work(queue.clone(), cache, seen));
        Priorities { queue, reconciles }
    }

    /// The next reconcile, within [`BOUND`](crate::BOUND).
    pub async fn next_seen(&mut self, what: &str) -> Result<Seen> {
        crate::receive(&mut self.reconciles, what).await
    }

    /// The priority of the next reconcile of `name` that read `step`.
    pub async fn next(&mut self, name: &str, step: &str) -> Result<i32> {
        let what = format!("a reconcile of {name} reading step {step:?}");
        loop {
            let s = self.next_seen(&what).await?;
            if s.name == name && s.step == step {
                return Ok(s.priority);
            }
        }
    }

    /// Collects reconciles until each of `names` has had one; the priority of
    /// the first of each.
    pub async fn first(
        &mut self,
        what: &str,
        names: &[&str],
    ) -> Result<BTreeMap<String, i32>> {
        let mut first = BTreeMap::new();
        while names.iter().any(|n| !first.contains_key(*n)) {
            let s = self.next_seen(what).await?;
            first.entry(s.name).or_insert(s.priority);
        }
        Ok(first)
    }
}

// ANCHOR: worker
/// One worker: get the key with its priority, read the object, done.
async fn work(
    queue: PriorityQueue<String>,
    cache: Cache,
    seen: UnboundedSender<Seen>,
) {
    while let Some((name, priority)) = queue.get_with_priority().await {
        let step = cache
            .lock()
            .unwrap()
            .get(&name)
            .and_then(|cm| cm.data.as_ref()?.get("step").cloned());
        if let Some(step) = step {
            let _ = seen.send(Seen {
                name: name.clone(),
                step,
                priority,
                queue_empty: queue.is_empty(),
            });
        }
        queue.done(&name);
    }
}
// ANCHOR_END: worker

/// One row of the listings' table, or "not reconciled" in place of a
/// priority.
pub fn row(event: &str, name: &str, priority: Option<i32>) {
    match priority {
        Some(priority) => println!("{event:<40} {name:<6} {priority}"),
        None => println!("{event:<40} {name:<6} not reconciled"),
    }
}

/// The table's header.
pub fn header() {
    println!("{:<40} {:<6} priority", "event", "object");
}
