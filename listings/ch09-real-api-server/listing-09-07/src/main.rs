// Listing 9-7: kube-runtime's own `Controller` on real watches.
// `Controller::new(Api<ConfigMap>, watcher::Config::default())` runs
// against the API server, each time twice side by side on the same objects:
// once as it is, once with the same reconciler inside
// `kube-reconcile-guard`.
//
// A and B: cm-hang's first reconcile awaits a future that never completes.
// Then each object is updated twenty times through the API server,
// alternately. Without the guard, cm-hang's updates reach the controller's
// store but are never reconciled, while cm-ok's are: kube-runtime's form of
// the stall. With the guard, the reconcile times out after 2 seconds, the
// timeout is a failure that is retried, and cm-hang's later reconcile reads
// its last update.
//
// C and D: cm-panic's first reconcile panics. Without the guard the panic
// is raised again in the task that polls the controller's stream, and the
// whole controller (watch, store and context) is gone: cm-ok's updates,
// made afterwards, are never reconciled either. With the guard the panic is
// a failure that is retried, and the controller goes on.
//
// With a control plane up (`cargo xtask cluster up`):
//
// ```text
// KUBECONFIG=target/cluster/kubeconfig cargo run -p listing-09-07
// ```

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Result, bail};
use cluster_support::{config_map, set_data, until, within};
use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::controller::{self, Action};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Controller, watcher};
use kube::{Api, ResourceExt};
use kube_reconcile_guard::{Guard, error_policy};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const UPDATES: u32 = 20;

/// The guard's reconcile timeout (its backoff is the default: 5ms doubling).
const TIMEOUT: Duration = Duration::from_secs(2);

/// What one controller's reconciles read, how many each object had, and the
/// errors its stream yielded.
struct Record {
    last: Mutex<BTreeMap<String, u32>>,
    runs: Mutex<BTreeMap<String, u32>>,
    errors: Mutex<Vec<String>>,
    changed: UnboundedSender<()>,
}

impl Record {
    /// Notes the step a reconcile read; true on the object's first reconcile.
    fn reconciling(&self, name: &str, step: u32) -> bool {
        self.last.lock().unwrap().insert(name.to_owned(), step);
        let mut runs = self.runs.lock().unwrap();
        let runs = runs.entry(name.to_owned()).or_default();
        *runs += 1;
        let _ = self.changed.send(());
        *runs == 1
    }

    fn error(&self, error: String) {
        self.errors.lock().unwrap().push(error);
        let _ = self.changed.send(());
    }
}

/// The context of one controller's reconciles. `_alive` goes with the last
/// clone of the context: once it is dropped, nothing can reconcile again.
struct Ctx {
    record: Arc<Record>,
    _alive: oneshot::Sender<()>,
}

fn step_of(cm: &ConfigMap) -> u32 {
    cm.data
        .as_ref()
        .and_then(|data| data.get("step")?.parse().ok())
        .unwrap_or_default()
}

// ANCHOR: reconcile
/// Notes the step it read. The first reconcile of cm-hang never returns, as
/// a call without a timeout that nobody answers; the first of cm-panic panics.
async fn reconcile(
    cm: Arc<ConfigMap>,
    ctx: Arc<Ctx>,
) -> Result<Action, Infallible> {
    let name = cm.name_any();
    let first = ctx.record.reconciling(&name, step_of(&cm));
    if first && name == "cm-hang" {
        std::future::pending::<()>().await;
    }
    if first && name == "cm-panic" {
        panic!("boom");
    }
    Ok(Action::await_change())
}
// ANCHOR_END: reconcile

/// One controller: what its reconciles read, its store, the task that polls
/// its stream, and a receiver that completes when its context is dropped.
struct Running {
    ns: String,
    record: Arc<Record>,
    store: Store<ConfigMap>,
    task: JoinHandle<()>,
    gone: oneshot::Receiver<()>,
}

impl Running {
    fn start(
        api: &Api<ConfigMap>,
        changed: &UnboundedSender<()>,
        guarded: bool,
    ) -> Running {
        let record = Arc::new(Record {
            last: Mutex::default(),
            runs: Mutex::default(),
            errors: Mutex::default(),
            changed: changed.clone(),
        });
        let (alive, gone) = oneshot::channel();
        let ctx = Arc::new(Ctx { record: record.clone(), _alive: alive });
        // ANCHOR: controllers
        let controller =
            Controller::new(api.clone(), watcher::Config::default());
        let store = controller.store();
        let task = if guarded {
            let guard = Guard::builder()
                .timeout(TIMEOUT)
                .forget_when_gone(controller.store())
                .build();
            drive(
                controller.run(guard.wrap(reconcile), error_policy, ctx),
                record.clone(),
            )
        } else {
            let never = |_: Arc<ConfigMap>,
                         e: &Infallible,
                         _: Arc<Ctx>|
             -> Action { match *e {} };
            drive(controller.run(reconcile, never, ctx), record.clone())
        };
        // ANCHOR_END: controllers
        Running {
            ns: api.namespace().unwrap_or_default().to_owned(),
            record,
            store,
            task,
            gone,
        }
    }

    /// The step the object's latest reconcile read.
    fn last(&self, name: &str) -> Option<u32> {
        self.record.last.lock().unwrap().get(name).copied()
    }

    /// The step of the object in the controller's store (what its watch delivered).
    fn stored(&self, name: &str) -> Option<u32> {
        self.store
            .get(&ObjectRef::new(name).within(&self.ns))
            .map(|cm| step_of(&cm))
    }

    /// How many reconciles of the object have started.
    fn runs(&self, name: &str) -> u32 {
        self.record.runs.lock().unwrap().get(name).copied().unwrap_or_default()
    }

    fn errors(&self) -> Vec<String> {
        self.record.errors.lock().unwrap().clone()
    }

    fn print(&self, title: &str, objects: [&str; 2], task: &str) {
        println!("{title}");
        println!(
            "after {UPDATES} updates to each object through the API server:"
        );
        println!(
            "{:<10} {:<13} last step reconciled",
            "object", "in the store"
        );
        for name in objects {
            let show = |step: Option<u32>| {
                step.map_or("none".to_owned(), |s| s.to_string())
            };
            println!(
                "{name:<10} {:<13} {}",
                show(self.stored(name)),
                show(self.last(name))
            );
        }
        match self.errors()[..] {
            [] => println!("errors from the controller's stream: none"),
            ref errors => {
                println!("errors from the controller's stream:");
                for e in errors {
                    println!("  {e}");
                }
            }
        }
        println!("the controller's task: {task}");
    }
}

/// Polls a controller's stream in a task of its own, noting the reconcilers'
/// errors (other errors, such as a watch that had to restart, go to stderr).
fn drive<E: std::error::Error + Send + 'static>(
    results: impl Stream<
        Item = Result<
            (ObjectRef<ConfigMap>, Action),
            controller::Error<E, watcher::Error>,
        >,
    > + Send
    + 'static,
    record: Arc<Record>,
) -> JoinHandle<()> {
    tokio::spawn(results.for_each(move |result| {
        match result {
            Err(controller::Error::ReconcilerFailed(e, obj)) => {
                record.error(format!("{}: {e}", obj.name))
            }
            Err(other) => eprintln!("listing-09-07: {other}"),
            Ok(_) => {}
        }
        futures::future::ready(())
    }))
}

/// `UPDATES` updates to each object, alternately, `faulty` first.
async fn update_both(api: &Api<ConfigMap>, faulty: &str) -> Result<()> {
    for step in 1..=UPDATES {
        set_data(api, faulty, "step", &step.to_string()).await?;
        set_data(api, "cm-ok", "step", &step.to_string()).await?;
    }
    Ok(())
}

/// The panic message of a task that died of one, without the task id (which
/// depends on how many tasks ran before).
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    let text = match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .unwrap_or_default(),
    };
    match (text.find("Id("), text.find("), ")) {
        (Some(a), Some(b)) if a < b => {
            format!("{}Id(..){}", &text[..a], &text[b + 1..])
        }
        _ => text,
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let client = cluster_support::client().await?;
    let (changed, mut changes) = unbounded_channel();
    println!("Controller::new(Api<ConfigMap>, watcher::Config::default())");
    println!(
        "against the API server: A and B side by side on the same objects,"
    );
    println!("then C and D likewise, in a namespace of their own.");
    println!();

    // ANCHOR: stall
    let ns = cluster_support::namespace(&client, "listing-09-07").await?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    config_map(&api, "cm-ok", "step", "0").await?;
    let (a, b) = (
        Running::start(&api, &changed, false),
        Running::start(&api, &changed, true),
    );
    let both = |name: &str, step| {
        a.last(name) == Some(step) && b.last(name) == Some(step)
    };
    until(&mut changes, || both("cm-ok", 0), "the first reconciles of cm-ok")
        .await?;
    config_map(&api, "cm-hang", "step", "0").await?;
    until(
        &mut changes,
        || both("cm-hang", 0),
        "the first reconciles of cm-hang",
    )
    .await?;

    update_both(&api, "cm-hang").await?;
    // A: cm-ok's last update reconciled. One watch delivers the updates in
    // order, so by then A's store holds cm-hang's last update too.
    let a_done = || {
        a.last("cm-ok") == Some(UPDATES) && a.stored("cm-hang") == Some(UPDATES)
    };
    until(&mut changes, a_done, "A's reconcile of cm-ok's last update").await?;
    // B: cm-hang timed out once, was retried, and read its last update.
    let b_done = || {
        both("cm-ok", UPDATES)
            && b.last("cm-hang") == Some(UPDATES)
            && !b.errors().is_empty()
    };
    until(&mut changes, b_done, "B's reconciles of both objects' last updates")
        .await?;
    // ANCHOR_END: stall

    for (c, name) in [(&a, "A"), (&b, "B")] {
        if c.task.is_finished() {
            bail!("{name}'s controller task ended");
        }
    }
    a.print(
        "A. cm-hang's first reconcile never returns",
        ["cm-ok", "cm-hang"],
        "running",
    );
    println!();
    let title = format!(
        "B. the same, inside kube-reconcile-guard (timeout {TIMEOUT:?})"
    );
    b.print(&title, ["cm-ok", "cm-hang"], "running");
    println!();
    a.task.abort();
    b.task.abort();

    // ANCHOR: panic
    let ns = cluster_support::namespace(&client, "listing-09-07").await?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    config_map(&api, "cm-ok", "step", "0").await?;
    let (mut c, d) = (
        Running::start(&api, &changed, false),
        Running::start(&api, &changed, true),
    );
    let both = |name: &str, step| {
        c.last(name) == Some(step) && d.last(name) == Some(step)
    };
    until(&mut changes, || both("cm-ok", 0), "the first reconciles of cm-ok")
        .await?;
    config_map(&api, "cm-panic", "step", "0").await?;

    // C: the task that polls the controller's stream dies of the panic, and
    // the controller's context goes with it.
    let died =
        match within("the end of C's controller task", &mut c.task).await? {
            Err(e) if e.is_panic() => {
                // unwrap's message: what it was called on after a colon.
                let message = panic_message(e.into_panic());
                match message.split_once(": ") {
                    Some((what, value)) => {
                        format!("died, of the panic:\n  {what}:\n    {value}")
                    }
                    None => format!("died, of the panic:\n  {message}"),
                }
            }
            Err(e) => bail!("C's controller task was cancelled: {e}"),
            Ok(()) => bail!("C's controller task ended without a panic"),
        };
    let _ = within("C's reconcile context to be dropped", &mut c.gone).await?;
    // D: the panic is a failure, and the guard's retry (no update yet) runs.
    until(
        &mut changes,
        || d.runs("cm-panic") == 2 && !d.errors().is_empty(),
        "D's retry of cm-panic",
    )
    .await?;

    update_both(&api, "cm-panic").await?;
    let d_done = || {
        d.last("cm-ok") == Some(UPDATES) && d.last("cm-panic") == Some(UPDATES)
    };
    until(&mut changes, d_done, "D's reconciles of both objects' last updates")
        .await?;
    // ANCHOR_END: panic

    if d.task.is_finished() {
        bail!("D's controller task ended");
    }
    c.print(
        "C. cm-panic's first reconcile panics; the updates come after the task died",
        ["cm-ok", "cm-panic"],
        &died,
    );
    println!(
        "the controller's context: dropped with it, so nothing reconciles them again"
    );
    println!();
    d.print(
        "D. the same, inside kube-reconcile-guard",
        ["cm-ok", "cm-panic"],
        "running",
    );
    d.task.abort();
    Ok(())
}
