// kube-runtime's dirty-while-processing: a request for an object that is
// being reconciled is held, and runs once, right after the reconcile ends.
// The real `applier` runs with no API server: a reflector store filled by
// hand, a channel of `ObjectRef`s as triggers, tokio's paused clock.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use kube::runtime::applier;
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::Event;
use tokio::time::{Instant, sleep_until};

#[derive(Debug)]
struct Failed;

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("failed")
    }
}

impl std::error::Error for Failed {}

fn configmap(name: &str) -> ConfigMap {
    let metadata = ObjectMeta {
        name: Some(name.into()),
        namespace: Some("default".into()),
        ..Default::default()
    };
    ConfigMap { metadata, ..Default::default() }
}

/// What each reconcile did, per object, in the order it happened.
#[derive(Default)]
struct Log {
    start: Mutex<Option<Instant>>,
    events: Mutex<BTreeMap<String, Vec<(Duration, String)>>>,
}

impl Log {
    fn record(&self, name: &str, what: String) {
        let at = self.start.lock().unwrap().unwrap().elapsed();
        self.events
            .lock()
            .unwrap()
            .entry(name.to_owned())
            .or_default()
            .push((at, what));
    }
}

fn at(d: Duration) -> String {
    format!("{:.3}s", d.as_secs_f64())
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: store
    let (reader, mut writer) = reflector::store::<ConfigMap>();
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(configmap("cm-b")));
    writer.apply_watcher_event(&Event::InitApply(configmap("cm-c")));
    // Swaps the objects in; the runner may start.
    writer.apply_watcher_event(&Event::InitDone);
    // ANCHOR_END: store

    // ANCHOR: reconcile
    let calls: Arc<Mutex<BTreeMap<String, u32>>> = Arc::default();
    let reconcile = move |obj: Arc<ConfigMap>,
                          log: Arc<Log>|
          -> BoxFuture<'static, Result<Action, Failed>> {
        let name = obj.metadata.name.clone().unwrap();
        let n = {
            let mut calls = calls.lock().unwrap();
            let n = calls.entry(name.clone()).or_default();
            *n += 1;
            *n
        };
        Box::pin(async move {
            if name == "cm-b" && n == 1 {
                log.record(&name, format!("reconcile #{n} starts, takes 10s"));
                tokio::time::sleep(Duration::from_secs(10)).await;
                log.record(
                    &name,
                    format!("reconcile #{n} returns requeue(60s)"),
                );
                return Ok(Action::requeue(Duration::from_secs(60)));
            }
            log.record(
                &name,
                format!("reconcile #{n} starts and returns await_change"),
            );
            Ok(Action::await_change())
        })
    };
    let error_policy =
        |_: Arc<ConfigMap>, _: &Failed, _: Arc<Log>| Action::await_change();
    // ANCHOR_END: reconcile

    // ANCHOR: triggers
    let triggers =
        [(0, "cm-b"), (1, "cm-c"), (2, "cm-b"), (3, "cm-b"), (4, "cm-b")];
    let close_at = Duration::from_secs(100);
    let (tx, rx) = mpsc::unbounded::<ObjectRef<ConfigMap>>();
    let queue = rx.map(Ok::<_, Infallible>);
    let log = Arc::new(Log::default());
    let start = Instant::now();
    *log.start.lock().unwrap() = Some(start);
    let feed = async move {
        for (secs, name) in triggers {
            sleep_until(start + Duration::from_secs(secs)).await;
            tx.unbounded_send(ObjectRef::new(name).within("default")).unwrap();
        }
        sleep_until(start + close_at).await;
        drop(tx); // the queue ends: the applier shuts down gracefully
    };
    let run = applier(
        reconcile,
        error_policy,
        log.clone(),
        reader,
        queue,
        Config::default(),
    )
    .for_each(|_| async {});
    let (_, ended) =
        tokio::join!(feed, tokio::time::timeout(Duration::from_secs(300), run));
    // ANCHOR_END: triggers
    let ended_at = start.elapsed();
    drop(writer);

    let list = |name: &str| {
        let secs: Vec<String> = triggers
            .iter()
            .filter(|t| t.1 == name)
            .map(|t| format!("{}s", t.0))
            .collect();
        format!("{name} at {}", secs.join(", "))
    };
    println!(
        "triggers: {}; {}; queue closed at {}s",
        list("cm-b"),
        list("cm-c"),
        close_at.as_secs()
    );
    println!();
    let events = log.events.lock().unwrap();
    for (name, seq) in events.iter() {
        println!("{name}");
        for (t, what) in seq {
            println!("  {:<9}{what}", at(*t));
        }
    }
    println!();

    // What the sequence of cm-b shows, read from the log rather than assumed.
    let b = &events["cm-b"];
    let first_end = b.iter().find(|e| e.1.contains("#1 returns")).unwrap().0;
    let during = triggers
        .iter()
        .filter(|t| {
            t.1 == "cm-b" && t.0 > 0 && Duration::from_secs(t.0) < first_end
        })
        .count();
    let after: Vec<&(Duration, String)> = b
        .iter()
        .filter(|e| e.0 >= first_end && e.1.contains("starts"))
        .collect();
    println!("what the log of cm-b shows:");
    println!(
        "  {during} triggers arrived during reconcile #1, which ended at {}",
        at(first_end)
    );
    println!(
        "  {} reconcile followed them, at {}",
        after.len(),
        at(after[0].0)
    );
    let due = first_end + Duration::from_secs(60);
    let later =
        b.iter().filter(|e| e.0 > first_end + Duration::from_secs(1)).count();
    if later == 0 {
        println!(
            "  reconcile #1's requeue(60s), due at {}, never ran: none after #2",
            at(due)
        );
    } else {
        println!(
            "  reconcile #1's requeue(60s), due at {}, led to {later} more",
            at(due)
        );
    }
    match ended {
        Ok(()) => println!(
            "the applier stream ended at {}, when the queue closed",
            at(ended_at)
        ),
        Err(_) => {
            println!("the applier stream was still running at {}", at(ended_at))
        }
    }
}
