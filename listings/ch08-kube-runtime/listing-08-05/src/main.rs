// The chapter's comparison, as observed: each situation runs briefly on
// tokio's paused clock, against faithful-workqueue (controller-runtime on
// client-go's rate-limiting queue, and on its default priority queue), the
// real kube-runtime applier and Controller, and kube-runtime with
// kube-reconcile-guard. Every cell is built from what the run recorded.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use faithful_workqueue::controller::Controller as GoController;
use faithful_workqueue::default_rate_limiters::{
    default_typed_controller_rate_limiter, priority_queue_default_rate_limiter,
};
use faithful_workqueue::go_duration::GoDuration;
use faithful_workqueue::priorityqueue::{PriorityInterface, PriorityQueue};
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use faithful_workqueue::reconcile::{ReconcileResult, terminal_error};
use futures::channel::mpsc;
use futures::future::BoxFuture;
use futures::{StreamExt, TryFuture};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{Controller, WatchStreamExt, applier};
use kube_reconcile_guard::{Guard, GuardError, error_policy};
use tokio::time::{Instant, sleep, sleep_until, timeout};

#[derive(Debug)]
struct Oops(&'static str);

impl std::fmt::Display for Oops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Oops {}

fn configmap(name: &str) -> ConfigMap {
    let metadata = ObjectMeta {
        name: Some(name.into()),
        namespace: Some("default".into()),
        ..Default::default()
    };
    ConfigMap { metadata, ..Default::default() }
}

fn name(obj: &ConfigMap) -> String {
    obj.metadata.name.clone().unwrap()
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// When each object's reconciles were called, from the start of its run.
#[derive(Default)]
struct Calls {
    start: Mutex<Option<Instant>>,
    at: Mutex<BTreeMap<String, Vec<Duration>>>,
}

impl Calls {
    fn of(&self, name: &str) -> Vec<Duration> {
        self.at.lock().unwrap().get(name).cloned().unwrap_or_default()
    }
    fn record(&self, name: &str) {
        let at = self.start.lock().unwrap().unwrap().elapsed();
        self.at.lock().unwrap().entry(name.to_owned()).or_default().push(at);
    }
}

type Fut<E> = BoxFuture<'static, Result<Action, E>>;

/// Runs the real `applier` over `objects`, with `triggers` (seconds, name),
/// for `horizon` of virtual time, and returns who was reconciled when.
async fn applier_run<R, F, P>(
    objects: &[&str],
    triggers: &[(u64, &str)],
    config: Config,
    mut reconcile: R,
    policy: P,
    horizon: Duration,
) -> Arc<Calls>
where
    R: FnMut(Arc<ConfigMap>, Arc<Calls>) -> F,
    F: TryFuture<Ok = Action> + Unpin,
    F::Error: std::error::Error + 'static,
    P: Fn(Arc<ConfigMap>, &F::Error, Arc<Calls>) -> Action,
{
    let (reader, mut writer) = reflector::store::<ConfigMap>();
    writer.apply_watcher_event(&Event::Init);
    for o in objects {
        writer.apply_watcher_event(&Event::InitApply(configmap(o)));
    }
    writer.apply_watcher_event(&Event::InitDone);
    let calls = Arc::new(Calls::default());
    let start = Instant::now();
    *calls.start.lock().unwrap() = Some(start);
    let (tx, rx) = mpsc::unbounded::<ObjectRef<ConfigMap>>();
    let recorded = move |obj: Arc<ConfigMap>, calls: Arc<Calls>| {
        calls.record(&name(&obj));
        reconcile(obj, calls)
    };
    let stream = applier(
        recorded,
        policy,
        calls.clone(),
        reader,
        rx.map(Ok::<_, Infallible>),
        config,
    );
    let feed = async {
        for (at, name) in triggers {
            sleep_until(start + secs(*at)).await;
            tx.unbounded_send(ObjectRef::new(name).within("default")).unwrap();
        }
        std::future::pending::<()>().await;
    };
    let _ = timeout(
        horizon,
        futures::future::join(feed, stream.for_each(|_| async {})),
    )
    .await;
    drop(writer);
    calls
}

/// Under `Controller::run` (for_stream over the real reflector): was the
/// controller still alive after `cm-panic`'s reconcile panicked, and when was
/// `cm-panic` reconciled?
async fn controller_panic<F>(
    reconcile: fn(Arc<ConfigMap>, Arc<Calls>) -> F,
) -> (bool, Vec<Duration>)
where
    F: TryFuture<Ok = Action> + Send + 'static,
    F::Error: std::error::Error + Send + 'static,
    GuardOrFixed: Policy<F::Error>,
{
    let (reader, writer) = reflector::store::<ConfigMap>();
    let (events, watch) =
        mpsc::unbounded::<Result<Event<ConfigMap>, watcher::Error>>();
    let controller = Controller::for_stream(
        reflector::reflector(writer, watch).applied_objects(),
        reader,
    );
    let calls = Arc::new(Calls::default());
    *calls.start.lock().unwrap() = Some(Instant::now());
    let recorded = move |obj: Arc<ConfigMap>, calls: Arc<Calls>| {
        calls.record(&name(&obj));
        reconcile(obj, calls)
    };
    let task = tokio::spawn(
        controller
            .run(
                recorded,
                <GuardOrFixed as Policy<F::Error>>::policy,
                calls.clone(),
            )
            .for_each(|_| async {}),
    );
    for event in
        [Event::Init, Event::InitApply(configmap("cm-panic")), Event::InitDone]
    {
        events.unbounded_send(Ok(event)).unwrap();
    }
    sleep(secs(5)).await;
    let alive = !task.is_finished();
    drop(events);
    let _ = timeout(secs(60), task).await;
    (alive, calls.of("cm-panic"))
}

/// The error policy a plain kube-runtime controller would have (a fixed
/// delay), or the guard's.
struct GuardOrFixed;

trait Policy<E> {
    fn policy(obj: Arc<ConfigMap>, err: &E, calls: Arc<Calls>) -> Action;
}

impl Policy<Oops> for GuardOrFixed {
    fn policy(_: Arc<ConfigMap>, _: &Oops, _: Arc<Calls>) -> Action {
        Action::requeue(FIXED)
    }
}

impl Policy<GuardError<Oops>> for GuardOrFixed {
    fn policy(
        obj: Arc<ConfigMap>,
        err: &GuardError<Oops>,
        calls: Arc<Calls>,
    ) -> Action {
        error_policy(obj, err, calls)
    }
}

/// The delay of the hand-written error policies of plain kube-runtime ("kube").
const FIXED: Duration = Duration::from_secs(5);

fn fixed<E>(_: Arc<ConfigMap>, _: &E, _: Arc<Calls>) -> Action {
    Action::requeue(FIXED)
}

fn waits(at: &[Duration], n: usize) -> String {
    let w: Vec<String> = at
        .windows(2)
        .take(n)
        .map(|w| GoDuration(w[1] - w[0]).to_string())
        .collect();
    w.join(", ")
}

fn first_capped(at: &[Duration], cap: Duration) -> String {
    match at.windows(2).position(|w| w[1] - w[0] >= cap) {
        Some(i) => format!("{} from #{}", GoDuration(cap), i + 1),
        None => "never capped".to_owned(),
    }
}

fn count_after(at: &[Duration], from: Duration) -> usize {
    at.iter().filter(|t| **t >= from).count()
}

fn slow_first(obj: Arc<ConfigMap>, calls: Arc<Calls>) -> Fut<Oops> {
    let first = calls.of(&name(&obj)).len() == 1;
    Box::pin(async move {
        if first {
            sleep(secs(10)).await;
        }
        Ok(Action::await_change())
    })
}

/// The first reconcile takes 10s and asks to be requeued in 60s; later ones succeed.
fn slow_first_requeue(obj: Arc<ConfigMap>, calls: Arc<Calls>) -> Fut<Oops> {
    let first = calls.of(&name(&obj)).len() == 1;
    Box::pin(async move {
        if first {
            sleep(secs(10)).await;
            return Ok(Action::requeue(secs(60)));
        }
        Ok(Action::await_change())
    })
}

fn hang_or_requeue(obj: Arc<ConfigMap>, _: Arc<Calls>) -> Fut<Oops> {
    let hang = name(&obj) == "cm-hang";
    Box::pin(async move {
        if hang {
            std::future::pending::<()>().await;
        }
        Ok(Action::requeue(secs(10)))
    })
}

fn panics(_: Arc<ConfigMap>, _: Arc<Calls>) -> Fut<Oops> {
    Box::pin(async {
        sleep(secs(2)).await;
        panic!("boom");
    })
}

fn guarded_panics(
    obj: Arc<ConfigMap>,
    calls: Arc<Calls>,
) -> Fut<GuardError<Oops>> {
    thread_local! {
        static GUARD: Guard<ConfigMap, Oops> = Guard::builder().build();
    }
    GUARD.with(|g| (g.wrap(panics))(obj, calls))
}

fn always_fails(_: Arc<ConfigMap>, _: Arc<Calls>) -> Fut<Oops> {
    Box::pin(async { Err(Oops("connection refused")) })
}

fn invalid(_: Arc<ConfigMap>, _: Arc<Calls>) -> Fut<Oops> {
    Box::pin(async { Err(Oops("invalid spec")) })
}

/// Fails, fails, succeeds, fails: what does the wait after the success look like?
fn fail_fail_ok_fail(obj: Arc<ConfigMap>, calls: Arc<Calls>) -> Fut<Oops> {
    let n = calls.of(&name(&obj)).len();
    Box::pin(async move {
        if n == 3 {
            Ok(Action::requeue(Duration::from_millis(1)))
        } else {
            Err(Oops("flaky"))
        }
    })
}

fn flaky_after_ok(at: &[Duration]) -> (Duration, Duration) {
    // at[0..]: fail, fail, ok, fail, (next): the wait after the first failure
    // and after the first failure that followed a success.
    (at[1] - at[0], at[4] - at[3])
}

/// The controller-runtime runs: the same situations on `queue()`, a fresh
/// queue per situation (client-go's rate-limiting queue, or the priority queue).
async fn go_column<Q: PriorityInterface<&'static str> + Clone>(
    queue: impl Fn() -> Q,
) -> BTreeMap<&'static str, String> {
    let mut cells = BTreeMap::new();

    // ANCHOR: client_go
    // Dirty while processing: three adds while the key is held.
    let q = queue();
    q.add("obj");
    let key = q.get().await.unwrap();
    for _ in 0..3 {
        q.add("obj");
    }
    let while_held = q.len();
    q.done(&key);
    let after = q.len();
    cells.insert(
        "dirty",
        format!("{} adds: Len {while_held}, then {after} run after Done", 3),
    );

    // A trigger while the key is held, then the reconcile asks for
    // RequeueAfter(60s).
    let q = queue();
    let start = Instant::now();
    let runs: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let r = runs.clone();
    let c = GoController::new(q.clone(), move |_: &'static str| {
        let first = r.lock().unwrap().is_empty();
        r.lock().unwrap().push(start.elapsed());
        async move {
            if first {
                sleep(secs(10)).await;
                return Ok(ReconcileResult::requeue_after(secs(60)));
            }
            Ok(ReconcileResult::done())
        }
    });
    q.add("obj");
    let trigger = async {
        sleep(secs(2)).await;
        q.add("obj");
    };
    let _ = timeout(
        secs(120),
        futures::future::join(trigger, async {
            while c.process_next_work_item().await {}
        }),
    )
    .await;
    cells.insert("requeue", runs_at(&runs.lock().unwrap()));
    // ANCHOR_END: client_go

    // The stall: Get without Done.
    let q = queue();
    q.add("obj");
    let _held = q.get().await.unwrap();
    q.add("obj");
    q.add("other");
    let other = q.get().await;
    let again = timeout(secs(60), q.get()).await;
    q.shut_down();
    cells.insert(
        "stall",
        format!(
            "no Done: obj {}, {} runs",
            if again.is_err() { "never again" } else { "again" },
            other.unwrap()
        ),
    );

    // One worker, a reconcile that never returns.
    let q = queue();
    let seen: Arc<Mutex<Vec<&str>>> = Arc::default();
    let s = seen.clone();
    let c = GoController::new(q.clone(), move |key: &'static str| {
        s.lock().unwrap().push(key);
        async move {
            if key == "hang" {
                std::future::pending::<()>().await;
            }
            Ok(ReconcileResult::done())
        }
    });
    q.add("hang");
    q.add("ok");
    let _ =
        timeout(secs(60), async { while c.process_next_work_item().await {} })
            .await;
    let ok_ran = seen.lock().unwrap().contains(&"ok");
    cells.insert(
        "frozen",
        format!(
            "1 worker hung: others {}",
            if ok_ran { "run" } else { "never run" }
        ),
    );

    // A panic, with controller-runtime's default RecoverPanic.
    let q = queue();
    let c = GoController::new(q.clone(), |_: &'static str| async {
        panic!("boom");
        #[allow(unreachable_code)]
        Ok(ReconcileResult::done())
    });
    q.add("obj");
    c.process_next_work_item().await;
    cells.insert(
        "panic",
        format!("recovered: error, retry #{} queued", q.num_requeues(&"obj")),
    );

    // Backoff, measured through the queue.
    let attempts: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let a = attempts.clone();
    let q = queue();
    let c = GoController::new(q.clone(), move |_: &'static str| {
        a.lock().unwrap().push(Instant::now());
        async { Err(anyhow!("connection refused")) }
    });
    q.add("obj");
    while attempts.lock().unwrap().len() < 21 {
        c.process_next_work_item().await;
    }
    let attempts = attempts.lock().unwrap().clone();
    let at: Vec<Duration> = attempts.iter().map(|t| *t - attempts[0]).collect();
    cells.insert(
        "backoff",
        format!("{}; {}", waits(&at, 3), first_capped(&at, secs(1000))),
    );

    // A terminal error.
    let q = queue();
    let calls = Arc::new(AtomicUsize::new(0));
    let n = calls.clone();
    let c = GoController::new(q.clone(), move |_: &'static str| {
        n.fetch_add(1, Ordering::SeqCst);
        async { Err(terminal_error(anyhow!("invalid spec"))) }
    });
    q.add("obj");
    let _ =
        timeout(secs(60), async { while c.process_next_work_item().await {} })
            .await;
    cells.insert(
        "terminal",
        format!(
            "TerminalError: {} requeues in 1m",
            calls.load(Ordering::SeqCst) - 1
        ),
    );

    // Forget: the limiter's count, not the queue.
    let q = queue();
    q.add_rate_limited("obj");
    q.add_rate_limited("obj");
    sleep(secs(1)).await;
    let (count, len) = (q.num_requeues(&"obj"), q.len());
    q.forget(&"obj");
    cells.insert(
        "forget",
        format!(
            "count {count}->{}, Len {len}->{}",
            q.num_requeues(&"obj"),
            q.len()
        ),
    );
    cells
}

/// "runs at 0s, 10s, 1m10s": when each reconcile started.
fn runs_at(at: &[Duration]) -> String {
    let at: Vec<String> =
        at.iter().map(|t| GoDuration(*t).to_string()).collect();
    format!("runs at {}", at.join(", "))
}

async fn kube_column(guarded: bool) -> BTreeMap<&'static str, String> {
    let mut cells = BTreeMap::new();
    let guard = || {
        Guard::<ConfigMap, Oops>::builder()
            .timeout(secs(20))
            .terminal_if(|e: &Oops| e.0 == "invalid spec")
            .build()
    };
    let cfg = Config::default;
    macro_rules! run {
        ($objects:expr, $triggers:expr, $config:expr, $reconcile:expr, $horizon:expr) => {
            if guarded {
                let g = guard();
                applier_run(
                    $objects,
                    $triggers,
                    $config,
                    g.wrap($reconcile),
                    error_policy,
                    $horizon,
                )
                .await
            } else {
                applier_run(
                    $objects, $triggers, $config, $reconcile, fixed, $horizon,
                )
                .await
            }
        };
    }

    // ANCHOR: kube
    let calls = run!(
        &["obj"],
        &[(0, "obj"), (2, "obj"), (3, "obj"), (4, "obj")],
        cfg(),
        slow_first,
        secs(60)
    );
    let after = count_after(&calls.of("obj"), secs(10));
    cells.insert("dirty", format!("3 triggers: {after} run right after"));

    let calls = run!(
        &["obj"],
        &[(0, "obj"), (2, "obj")],
        cfg(),
        slow_first_requeue,
        secs(120)
    );
    cells.insert("requeue", runs_at(&calls.of("obj")));

    let triggers = &[(0, "cm-hang"), (1, "cm-ok"), (5, "cm-hang")];
    let calls =
        run!(&["cm-hang", "cm-ok"], triggers, cfg(), hang_or_requeue, secs(60));
    let hang = calls.of("cm-hang");
    cells.insert(
        "stall",
        match hang.get(1) {
            None => format!(
                "hung: obj silent, other ran {}x",
                calls.of("cm-ok").len()
            ),
            Some(t) => format!("timed out, re-run at {}", GoDuration(*t)),
        },
    );
    // ANCHOR_END: kube

    let calls = run!(
        &["cm-hang", "cm-ok"],
        &[(0, "cm-hang"), (1, "cm-ok")],
        cfg().concurrency(1),
        hang_or_requeue,
        secs(60)
    );
    cells.insert(
        "frozen",
        match calls.of("cm-ok").first() {
            None => "concurrency(1): others never run".to_owned(),
            Some(t) => {
                format!("concurrency(1): others run at {}", GoDuration(*t))
            }
        },
    );

    let (alive, at) = if guarded {
        controller_panic(guarded_panics).await
    } else {
        controller_panic(panics).await
    };
    cells.insert(
        "panic",
        if alive {
            // The reconcile panics 2s after it starts.
            format!(
                "error, retried {} after it",
                GoDuration(at[1] - at[0] - secs(2))
            )
        } else {
            "the whole controller dies".to_owned()
        },
    );

    let calls = run!(&["obj"], &[(0, "obj")], cfg(), always_fails, secs(3000));
    let at = calls.of("obj");
    cells.insert(
        "backoff",
        format!("{}; {}", waits(&at, 3), first_capped(&at, secs(1000))),
    );

    let calls = run!(&["obj"], &[(0, "obj")], cfg(), invalid, secs(60));
    cells.insert(
        "terminal",
        format!("invalid spec: {} requeues in 1m", calls.of("obj").len() - 1),
    );

    let calls =
        run!(&["obj"], &[(0, "obj")], cfg(), fail_fail_ok_fail, secs(120));
    let (first, after_ok) = flaky_after_ok(&calls.of("obj"));
    let tail = if guarded {
        format!("{} again", GoDuration(after_ok))
    } else {
        GoDuration(after_ok).to_string()
    };
    cells.insert(
        "forget",
        format!("wait {}, after a success {tail}", GoDuration(first)),
    );
    cells
}

const ROWS: [(&str, &str); 8] = [
    ("dirty", "dirty while processing"),
    ("requeue", "trigger, then requeue 60s"),
    ("stall", "the stall (one object)"),
    ("frozen", "the stall (one worker)"),
    ("panic", "a panic"),
    ("backoff", "per-object backoff"),
    ("terminal", "a terminal error"),
    ("forget", "Forget / a success"),
];

/// The four runs' short labels, in the order each situation lists them; the
/// legend under the situations says what each one ran.
const RUNS: [&str; 4] = ["client-go", "priority", "kube", "guard"];

/// The widest line the legend may print: the output fits a page and a phone.
const WIDTH: usize = 52;

/// `text` broken between words into lines of at most `WIDTH` columns, the
/// lines after the first indented by two.
fn wrap(text: &str) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let last = lines.last_mut().unwrap();
        if last.is_empty() {
            last.push_str(word);
        } else if last.len() + 1 + word.len() > WIDTH {
            lines.push(format!("  {word}"));
        } else {
            last.push(' ');
            last.push_str(word);
        }
    }
    lines
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let client_go = go_column(|| {
        RateLimitingQueue::new(default_typed_controller_rate_limiter())
    })
    .await;
    let priority = go_column(|| {
        PriorityQueue::with_rate_limiter(priority_queue_default_rate_limiter())
    })
    .await;
    let kube = kube_column(false).await;
    let guarded = kube_column(true).await;
    let runs = [&client_go, &priority, &kube, &guarded];
    let pad = RUNS.map(str::len).into_iter().max().unwrap();
    // One block per situation: its name, then what each run recorded.
    for (k, situation) in ROWS {
        println!("{situation}");
        for (label, cells) in RUNS.iter().zip(runs) {
            println!("  {label:<pad$}  {}", cells[k]);
        }
        println!();
    }
    let legend = [
        "client-go: controller-runtime on client-go's queue (UsePriorityQueue=false)".to_owned(),
        "priority: controller-runtime on the priority queue (its default)".to_owned(),
        format!("kube: kube-runtime, error policy requeue({})", GoDuration(FIXED)),
        "guard: kube-runtime + the guard: timeout 20s, backoff 5ms doubling to 1000s".to_owned(),
    ];
    for line in legend.iter().flat_map(|entry| wrap(entry)) {
        println!("{line}");
    }
}
