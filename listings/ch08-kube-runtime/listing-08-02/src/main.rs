// kube-runtime's silent stall: a reconcile future that never resolves. The
// real `applier`, a store filled by hand, triggers from a channel, tokio's
// paused clock. Every run is bounded by a timeout, so the demonstration
// reports the stall instead of hanging.

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
struct TimedOut(Duration);

impl std::fmt::Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "reconcile timed out after {:?}", self.0)
    }
}

impl std::error::Error for TimedOut {}

fn configmap(name: &str) -> ConfigMap {
    let metadata = ObjectMeta {
        name: Some(name.into()),
        namespace: Some("default".into()),
        ..Default::default()
    };
    ConfigMap { metadata, ..Default::default() }
}

struct Scenario {
    title: &'static str,
    concurrency: u16,
    timeout: Option<Duration>,
    triggers: &'static [(u64, &'static str)],
    close_at: u64,
}

/// Per object: the times its reconciles started and how they ended.
type Log = Mutex<BTreeMap<&'static str, (Vec<Duration>, Vec<Duration>)>>;

fn at(d: Duration) -> String {
    format!("{:.3}s", d.as_secs_f64())
}

fn list(times: &[Duration]) -> String {
    if times.is_empty() {
        "none".to_owned()
    } else {
        times.iter().map(|t| at(*t)).collect::<Vec<_>>().join(", ")
    }
}

const BOUND: Duration = Duration::from_secs(120);

async fn run(s: &Scenario) {
    let (reader, mut writer) = reflector::store::<ConfigMap>();
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(configmap("cm-hang")));
    writer.apply_watcher_event(&Event::InitApply(configmap("cm-ok")));
    writer.apply_watcher_event(&Event::InitDone);
    let start = Instant::now();
    let log: Arc<Log> = Arc::default();

    // ANCHOR: reconcile
    let timeout = s.timeout;
    let reconcile = move |obj: Arc<ConfigMap>,
                          log: Arc<Log>|
          -> BoxFuture<'static, Result<Action, TimedOut>> {
        let name = if obj.metadata.name.as_deref() == Some("cm-hang") {
            "cm-hang"
        } else {
            "cm-ok"
        };
        log.lock().unwrap().entry(name).or_default().0.push(start.elapsed());
        let work = async move {
            if name == "cm-hang" {
                // Waits for an answer that never comes.
                std::future::pending::<()>().await;
            }
            Ok(Action::requeue(Duration::from_secs(10)))
        };
        Box::pin(async move {
            let result = match timeout {
                None => work.await,
                // The fix: give up after `limit`; the error frees the object.
                Some(limit) => tokio::time::timeout(limit, work)
                    .await
                    .unwrap_or(Err(TimedOut(limit))),
            };
            log.lock()
                .unwrap()
                .entry(name)
                .or_default()
                .1
                .push(start.elapsed());
            result
        })
    };
    let error_policy = |_: Arc<ConfigMap>, _: &TimedOut, _: Arc<Log>| {
        Action::requeue(Duration::from_secs(100))
    };
    let config = Config::default().concurrency(s.concurrency);
    // ANCHOR_END: reconcile

    let (tx, rx) = mpsc::unbounded::<ObjectRef<ConfigMap>>();
    let feed = async move {
        for (secs, name) in s.triggers {
            sleep_until(start + Duration::from_secs(*secs)).await;
            tx.unbounded_send(ObjectRef::new(name).within("default")).unwrap();
        }
        sleep_until(start + Duration::from_secs(s.close_at)).await;
        drop(tx);
    };
    // ANCHOR: bound
    let stream = applier(
        reconcile,
        error_policy,
        log.clone(),
        reader,
        rx.map(Ok::<_, Infallible>),
        config,
    );
    let (_, ended) = tokio::join!(
        feed,
        tokio::time::timeout(BOUND, stream.for_each(|_| async {}))
    );
    // ANCHOR_END: bound
    let ended_at = start.elapsed();
    drop(writer);

    println!("{}", s.title);
    let triggers = |name: &str| {
        let t: Vec<String> = s
            .triggers
            .iter()
            .filter(|t| t.1 == name)
            .map(|t| format!("{}s", t.0))
            .collect();
        format!("{name} at {}", t.join(", "))
    };
    let limit = s.timeout.map_or("no timeout".to_owned(), |d| {
        format!("timeout {}s", d.as_secs())
    });
    println!(
        "  concurrency {}, {limit}, queue closed at {}s",
        s.concurrency, s.close_at
    );
    println!("  triggers: {}; {}", triggers("cm-hang"), triggers("cm-ok"));
    let log = log.lock().unwrap();
    for name in ["cm-hang", "cm-ok"] {
        let (started, ended) = log.get(name).cloned().unwrap_or_default();
        println!(
            "  {name:<8} reconciles: {}, started at: {}",
            started.len(),
            list(&started)
        );
        if name == "cm-hang" {
            println!("  {:<8} ended at: {}", "", list(&ended));
        }
    }
    match ended {
        Ok(()) => println!("  the stream ended at {}", at(ended_at)),
        Err(_) => println!(
            "  at {} the stream was still running; the demonstration stopped waiting",
            at(ended_at)
        ),
    }
    println!();
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: scenarios
    let stall = &[
        (0, "cm-hang"),
        (1, "cm-ok"),
        (5, "cm-hang"),
        (15, "cm-hang"),
        (25, "cm-hang"),
    ];
    let frozen = &[(0, "cm-hang"), (1, "cm-ok")];
    let twenty = Some(Duration::from_secs(20));
    for s in [
        Scenario {
            title: "A. one object stalls",
            concurrency: 0,
            timeout: None,
            triggers: stall,
            close_at: 40,
        },
        Scenario {
            title: "B. the whole controller stalls",
            concurrency: 1,
            timeout: None,
            triggers: frozen,
            close_at: 40,
        },
        Scenario {
            title: "C. A with a reconcile timeout",
            concurrency: 0,
            timeout: twenty,
            triggers: stall,
            close_at: 45,
        },
        Scenario {
            title: "D. B with a reconcile timeout",
            concurrency: 1,
            timeout: twenty,
            triggers: frozen,
            close_at: 45,
        },
    ] {
        run(&s).await;
    }
    // ANCHOR_END: scenarios
}
