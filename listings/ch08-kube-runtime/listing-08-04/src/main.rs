// The retry curve a failing object actually lives through under kube-runtime
// with kube-reconcile-guard: the real `applier`, a store filled by hand,
// tokio's paused clock. Nothing here computes a delay; it reads the clock at
// each attempt. Then: what a new trigger does during a backoff wait.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use faithful_workqueue::go_duration::GoDuration;
use futures::StreamExt;
use futures::channel::mpsc;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use kube::runtime::applier;
use kube::runtime::controller::{Action, Config, Error};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::Event;
use kube_reconcile_guard::{Guard, error_policy};
use tokio::time::{Instant, sleep_until};

#[derive(Debug)]
struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection refused")
    }
}

impl std::error::Error for Refused {}

const SHOWN: [usize; 12] = [1, 2, 4, 8, 10, 12, 14, 16, 18, 19, 20, 22];
const ATTEMPTS: usize = 23;

fn configmap(name: &str) -> ConfigMap {
    let metadata = ObjectMeta {
        name: Some(name.into()),
        namespace: Some("default".into()),
        ..Default::default()
    };
    ConfigMap { metadata, ..Default::default() }
}

type Attempts = Arc<Mutex<Vec<Instant>>>;

/// Runs an always-failing `web` through the guarded applier, with one trigger
/// at each of `triggers` (seconds from the start), until `stop`. Returns the
/// attempt times and, for each failure, the count and backoff the guard chose.
async fn run(
    triggers: &[Duration],
    stop: impl Fn(usize, Duration) -> bool,
) -> (Vec<Instant>, Vec<(u32, Duration)>, Instant) {
    let (reader, mut writer) = reflector::store::<ConfigMap>();
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(configmap("web")));
    writer.apply_watcher_event(&Event::InitDone);

    // ANCHOR: guarded
    let attempts: Attempts = Arc::default();
    let guard = Guard::builder().forget_when_gone(reader.clone()).build();
    let reconcile = guard.wrap(|_: Arc<ConfigMap>, attempts: Attempts| {
        attempts.lock().unwrap().push(Instant::now());
        async { Err::<Action, _>(Refused) }
    });
    let (tx, rx) = mpsc::unbounded::<ObjectRef<ConfigMap>>();
    let queue = rx.map(Ok::<_, Infallible>);
    let results = applier(
        reconcile,
        error_policy,
        attempts.clone(),
        reader,
        queue,
        Config::default(),
    );
    // ANCHOR_END: guarded

    let start = Instant::now();
    let feed = async {
        for at in triggers {
            sleep_until(start + *at).await;
            tx.unbounded_send(ObjectRef::new("web").within("default")).unwrap();
        }
    };
    let mut chosen = Vec::new();
    let consume = async {
        let mut results = std::pin::pin!(results);
        while let Some(result) = results.next().await {
            if let Err(Error::ReconcilerFailed(err, _)) = result {
                chosen.push((err.count(), err.retry_after().unwrap()));
            }
            if stop(chosen.len(), start.elapsed()) {
                break;
            }
        }
    };
    futures::join!(feed, consume);
    drop(writer);
    let attempts = attempts.lock().unwrap().clone();
    (attempts, chosen, start)
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: measure
    let (attempts, _, _) =
        run(&[Duration::ZERO], |failures, _| failures == ATTEMPTS).await;
    println!("{:<10}{:>15}{:>22}", "failure", "waited", "reconciled again at");
    for failure in SHOWN {
        let waited = attempts[failure] - attempts[failure - 1];
        let again_at = attempts[failure] - attempts[0];
        println!(
            "{failure:<10}{:>15}{:>22}",
            GoDuration(waited),
            GoDuration(again_at)
        );
    }
    // ANCHOR_END: measure
    println!();
    println!("attempts observed: {}", attempts.len());
    println!();

    // ANCHOR: trigger
    // The same object; one more trigger at 1m30s, in the middle of a wait.
    let nudge = Duration::from_secs(90);
    let (attempts, chosen, start) =
        run(&[Duration::ZERO, nudge], |_, t| t > Duration::from_secs(300))
            .await;
    // ANCHOR_END: trigger
    let at: Vec<Duration> = attempts.iter().map(|t| *t - start).collect();
    let before = at.iter().filter(|t| **t < nudge).count();
    let (count, wait) = chosen[before - 1];
    let due = at[before - 1] + wait;
    println!(
        "a trigger at {}, during the {} wait after failure #{count}",
        GoDuration(nudge),
        GoDuration(wait),
    );
    println!("  the retry it waited for was due at {}", GoDuration(due));
    let (next_count, next_wait) = chosen[before];
    println!(
        "  reconciled at {}: failure #{next_count}, retry in {}",
        GoDuration(at[before]),
        GoDuration(next_wait)
    );
    let ran_at_due = at.contains(&due);
    println!("  next reconcile at {}", GoDuration(at[before + 1]));
    println!(
        "  at {}: {}",
        GoDuration(due),
        if ran_at_due {
            "the old retry ran too"
        } else {
            "none, the trigger took the retry's place"
        }
    );
    let later: Vec<String> = (before + 1..at.len())
        .map(|i| format!("#{} at {}", chosen[i].0, GoDuration(at[i])))
        .collect();
    println!("the guard's count goes on from there: {}", later.join(", "));
}
