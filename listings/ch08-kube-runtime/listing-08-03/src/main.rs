// A reconciler that panics, under the real `Controller::run`: the controller
// is built with `Controller::for_stream` over the real `reflector()`, fed by
// a channel of watcher events instead of an API server, on tokio's paused
// clock. Without protection the panic takes the whole controller down; inside
// `catch_unwind` it becomes an error, and the error policy retries it.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::mpsc;
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{Controller, WatchStreamExt, reflector};
use tokio::time::{Instant, sleep, sleep_until};

#[derive(Debug)]
struct Panicked(String);

impl std::fmt::Display for Panicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "reconcile panicked: {}", self.0)
    }
}

impl std::error::Error for Panicked {}

fn configmap(name: &str) -> ConfigMap {
    let metadata = ObjectMeta {
        name: Some(name.into()),
        namespace: Some("default".into()),
        ..Default::default()
    };
    ConfigMap { metadata, ..Default::default() }
}

struct Log {
    start: Instant,
    events: Mutex<BTreeMap<String, Vec<String>>>,
}

impl Log {
    fn record(&self, name: &str, what: &str) {
        let line = format!(
            "{:<9}{what}",
            format!("{:.3}s", self.start.elapsed().as_secs_f64())
        );
        self.events
            .lock()
            .unwrap()
            .entry(name.to_owned())
            .or_default()
            .push(line);
    }
}

fn message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    // Task ids depend on how many tasks ran before; they are not part of the story.
    match (text.find("Id("), text.find("), ")) {
        (Some(a), Some(b)) if a < b => {
            format!("{}Id(..){}", &text[..a], &text[b + 1..])
        }
        _ => text,
    }
}

// ANCHOR: reconcile
fn reconcile(
    obj: Arc<ConfigMap>,
    log: Arc<Log>,
) -> BoxFuture<'static, Result<Action, Panicked>> {
    let name = obj.metadata.name.clone().unwrap();
    Box::pin(async move {
        log.record(&name, "reconcile starts");
        if name == "cm-panic" {
            sleep(Duration::from_secs(2)).await;
            log.record(&name, "panics");
            panic!("boom");
        }
        Ok(Action::await_change())
    })
}

// The protection: the panic becomes an error.
fn caught(
    obj: Arc<ConfigMap>,
    log: Arc<Log>,
) -> BoxFuture<'static, Result<Action, Panicked>> {
    Box::pin(AssertUnwindSafe(reconcile(obj, log)).catch_unwind().map(
        |result| match result {
            Ok(result) => result,
            Err(payload) => Err(Panicked(message(&*payload))),
        },
    ))
}
// ANCHOR_END: reconcile

async fn run(title: &str, catch: bool, later_applies: &[u64], close_at: u64) {
    println!("{title}");
    let start = Instant::now();
    let log = Arc::new(Log { start, events: Mutex::default() });
    // ANCHOR: controller
    let (reader, writer) = reflector::store::<ConfigMap>();
    let (events, watch) =
        mpsc::unbounded::<Result<Event<ConfigMap>, watcher::Error>>();
    let objects = reflector(writer, watch).applied_objects();
    let controller = Controller::for_stream(objects, reader);
    let error_policy = |obj: Arc<ConfigMap>, err: &Panicked, log: Arc<Log>| {
        log.record(
            obj.metadata.name.as_deref().unwrap(),
            &format!("error policy: requeue(30s) after {err}"),
        );
        Action::requeue(Duration::from_secs(30))
    };
    let run = controller.run(
        if catch { caught } else { reconcile },
        error_policy,
        log.clone(),
    );
    let task = tokio::spawn(run.for_each(|_| async {}));
    // ANCHOR_END: controller

    for event in [
        Event::Init,
        Event::InitApply(configmap("cm-good")),
        Event::InitApply(configmap("cm-panic")),
        Event::InitDone,
    ] {
        events.unbounded_send(Ok(event)).unwrap();
    }
    let mut undelivered = Vec::new();
    for secs in later_applies {
        sleep_until(start + Duration::from_secs(*secs)).await;
        if events
            .unbounded_send(Ok(Event::Apply(configmap("cm-good"))))
            .is_err()
        {
            undelivered.push(format!("{secs}s"));
        }
    }
    sleep_until(start + Duration::from_secs(close_at)).await;
    drop(events); // the fake watcher ends
    let bound = tokio::time::timeout(Duration::from_secs(60), task).await;
    let ended_at = start.elapsed().as_secs_f64();

    for (name, lines) in log.events.lock().unwrap().iter() {
        println!("  {name}");
        for line in lines {
            println!("    {line}");
        }
    }
    if !undelivered.is_empty() {
        println!(
            "  Apply(cm-good) at {} not delivered: nothing receives the watcher's events",
            undelivered.join(", ")
        );
    }
    match bound {
        Ok(Ok(())) => println!(
            "  the controller task ended normally at {ended_at:.3}s, after the watcher closed"
        ),
        Ok(Err(e)) if e.is_panic() => {
            // The message is unwrap's: what it was called on after a colon.
            let message = message(&*e.into_panic());
            println!("  the controller task died, of the panic:");
            match message.split_once(": ") {
                Some((what, value)) => println!("    {what}:\n      {value}"),
                None => println!("    {message}"),
            }
        }
        Ok(Err(e)) => println!("  the controller task was cancelled: {e}"),
        Err(_) => println!(
            "  the controller task was still running at {ended_at:.3}s"
        ),
    }
    println!();
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // The panic messages themselves go to stderr, through the default hook.
    run("A. Controller::run, the reconciler panics at 2s", false, &[1, 5], 10)
        .await;
    run("B. the same reconciler inside catch_unwind", true, &[10], 40).await;
}
