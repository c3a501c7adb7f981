//! The guard's promises, checked by calling a wrapped reconciler directly and
//! through kube-runtime's real `applier` on tokio's paused clock.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;
use kube::runtime::applier;
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::Event;
use kube_reconcile_guard::{Backoff, Failure, Guard, GuardError, error_policy};
use tokio::time::Instant;

#[derive(Debug)]
struct Oops(&'static str);

impl std::fmt::Display for Oops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Oops {}

fn cm(name: &str, uid: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(uid.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn key(name: &str) -> ObjectRef<ConfigMap> {
    ObjectRef::new(name).within("default")
}

const MS: fn(u64) -> Duration = Duration::from_millis;

#[test]
fn the_curve_is_client_gos() {
    let b = Backoff::default();
    let expected = [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560];
    for (n, ms) in expected.iter().enumerate() {
        assert_eq!(b.delay(n as u32 + 1), MS(*ms), "failure #{}", n + 1);
    }
    assert_eq!(b.delay(18), MS(655_360));
    assert_eq!(
        b.delay(19),
        Duration::from_secs(1000),
        "#19 is the first capped failure"
    );
    assert_eq!(b.delay(0), MS(5), "0 counts as the first failure");
    for n in [20, 41, 42, 64, 1000, u32::MAX] {
        assert_eq!(b.delay(n), Duration::from_secs(1000), "failure #{n}");
    }
}

#[test]
fn the_overflow_guard_returns_the_cap_instead_of_a_wrapped_value() {
    // With a cap too large to hide it: 5ms · 2^40 still fits in i64 nanoseconds,
    // 5ms · 2^41 does not, and must give the cap rather than a short wait.
    let huge = Duration::from_secs(u64::MAX / 4);
    let b = Backoff::new(MS(5), huge);
    assert_eq!(b.delay(41), Duration::from_nanos(5_000_000u64 << 40));
    assert_eq!(b.delay(42), huge);
    assert_eq!(b.delay(u32::MAX), huge);
}

#[tokio::test(start_paused = true)]
async fn failures_back_off_and_a_success_resets() {
    let outcomes = Arc::new(Mutex::new(vec![false, false, false, true, false]));
    let guard = Guard::<ConfigMap, Oops>::builder().build();
    let o = outcomes.clone();
    let mut reconcile = guard.wrap(move |_: Arc<ConfigMap>, _: Arc<()>| {
        let ok = o.lock().unwrap().remove(0);
        async move {
            if ok { Ok(Action::await_change()) } else { Err(Oops("transient")) }
        }
    });
    let obj = Arc::new(cm("a", "1"));
    let mut seen = Vec::new();
    for _ in 0..5 {
        match reconcile(obj.clone(), Arc::new(())).await {
            Ok(_) => seen.push(None),
            Err(e) => seen.push(e.retry_after()),
        }
    }
    assert_eq!(
        seen,
        [Some(MS(5)), Some(MS(10)), Some(MS(20)), None, Some(MS(5))]
    );
    assert_eq!(guard.failures(&key("a")), 1);
}

#[tokio::test(start_paused = true)]
async fn a_terminal_error_is_not_retried_and_keeps_the_count() {
    let guard = Guard::<ConfigMap, Oops>::builder()
        .terminal_if(|e| e.0 == "invalid")
        .build();
    let errors = Arc::new(Mutex::new(vec!["transient", "invalid"]));
    let e2 = errors.clone();
    let mut reconcile = guard.wrap(move |_: Arc<ConfigMap>, _: Arc<()>| {
        let e = e2.lock().unwrap().remove(0);
        async move { Err::<Action, _>(Oops(e)) }
    });
    let obj = Arc::new(cm("a", "1"));
    let first = reconcile(obj.clone(), Arc::new(())).await.unwrap_err();
    assert_eq!(first.action(), Action::requeue(MS(5)));
    let terminal = reconcile(obj, Arc::new(())).await.unwrap_err();
    assert!(terminal.is_terminal());
    assert_eq!(terminal.action(), Action::await_change());
    assert_eq!(terminal.count(), 1);
    assert_eq!(
        terminal.to_string(),
        "terminal error, not retried until the object changes: invalid"
    );
    assert_eq!(
        error_policy(Arc::new(cm("a", "1")), &terminal, Arc::new(())),
        Action::await_change()
    );
}

#[tokio::test(start_paused = true)]
async fn a_hung_reconcile_times_out_and_counts_as_a_failure() {
    let guard = Guard::<ConfigMap, Oops>::builder()
        .timeout(Duration::from_secs(20))
        .build();
    let mut reconcile = guard.wrap(|_: Arc<ConfigMap>, _: Arc<()>| {
        futures::future::pending::<Result<Action, Oops>>()
    });
    let start = Instant::now();
    let err =
        reconcile(Arc::new(cm("a", "1")), Arc::new(())).await.unwrap_err();
    assert_eq!(start.elapsed(), Duration::from_secs(20));
    assert!(
        matches!(err.failure(), Failure::TimedOut(d) if *d == Duration::from_secs(20))
    );
    assert_eq!(
        err.to_string(),
        "failure #1, retry in 5ms: reconcile timed out after 20s"
    );
}

#[tokio::test(start_paused = true)]
async fn panics_become_failures_whether_before_or_after_the_first_await() {
    let guard = Guard::<ConfigMap, Oops>::builder().build();
    let calls = Arc::new(AtomicU32::new(0));
    let c = calls.clone();
    let mut reconcile = guard.wrap(move |_: Arc<ConfigMap>, _: Arc<()>| {
        if c.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("boom before the future");
        }
        async {
            tokio::task::yield_now().await;
            panic!("boom inside the future");
            #[allow(unreachable_code)]
            Ok::<Action, Oops>(Action::await_change())
        }
    });
    let obj = Arc::new(cm("a", "1"));
    let first: GuardError<Oops> =
        reconcile(obj.clone(), Arc::new(())).await.unwrap_err();
    assert!(
        matches!(first.failure(), Failure::Panicked(m) if m == "boom before the future")
    );
    let second = reconcile(obj, Arc::new(())).await.unwrap_err();
    assert_eq!(
        second.to_string(),
        "failure #2, retry in 10ms: reconcile panicked: boom inside the future"
    );
}

#[tokio::test(start_paused = true)]
async fn counts_of_objects_gone_from_the_store_are_dropped() {
    let (reader, mut writer) = reflector::store::<ConfigMap>();
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(cm("a", "1")));
    writer.apply_watcher_event(&Event::InitApply(cm("b", "2")));
    writer.apply_watcher_event(&Event::InitDone);
    let guard =
        Guard::<ConfigMap, Oops>::builder().forget_when_gone(reader).build();
    let mut reconcile = guard.wrap(|_: Arc<ConfigMap>, _: Arc<()>| async {
        Err::<Action, _>(Oops("x"))
    });
    let _ = reconcile(Arc::new(cm("a", "1")), Arc::new(())).await;
    let _ = reconcile(Arc::new(cm("b", "2")), Arc::new(())).await;
    assert_eq!(guard.tracked(), 2);
    writer.apply_watcher_event(&Event::Delete(cm("a", "1")));
    let _ = reconcile(Arc::new(cm("b", "2")), Arc::new(())).await;
    assert_eq!(guard.tracked(), 1, "a's count went with a");
    assert_eq!(guard.failures(&key("b")), 2);
}

#[tokio::test(start_paused = true)]
async fn the_deletion_hooks_forget_and_a_new_uid_starts_afresh() {
    let guard = Guard::<ConfigMap, Oops>::builder().build();
    let mut reconcile = guard.wrap(|_: Arc<ConfigMap>, _: Arc<()>| async {
        Err::<Action, _>(Oops("x"))
    });
    for _ in 0..3 {
        let _ = reconcile(Arc::new(cm("a", "1")), Arc::new(())).await;
    }
    assert_eq!(guard.failures(&key("a")), 3);
    // Deleted and created again under the same name: a different uid.
    let err =
        reconcile(Arc::new(cm("a", "2")), Arc::new(())).await.unwrap_err();
    assert_eq!(err.count(), 1);
    guard.observe(&Event::Delete(cm("a", "2")));
    assert_eq!(guard.tracked(), 0);
    let _ = reconcile(Arc::new(cm("a", "3")), Arc::new(())).await;
    guard.forget(&key("a"));
    assert_eq!(guard.tracked(), 0);
}

#[tokio::test(start_paused = true)]
async fn under_the_real_applier_the_retries_follow_the_curve() {
    let (reader, mut writer) = reflector::store::<ConfigMap>();
    writer.apply_watcher_event(&Event::Init);
    writer.apply_watcher_event(&Event::InitApply(cm("a", "1")));
    writer.apply_watcher_event(&Event::InitDone);
    let guard = Guard::<ConfigMap, Oops>::builder()
        .forget_when_gone(reader.clone())
        .build();
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let a = attempts.clone();
    let reconcile = guard.wrap(move |_: Arc<ConfigMap>, _: Arc<()>| {
        a.lock().unwrap().push(Instant::now());
        async { Err::<Action, _>(Oops("connection refused")) }
    });
    let queue = futures::stream::iter([Ok::<_, Infallible>(key("a"))])
        .chain(futures::stream::pending());
    let results = applier(
        reconcile,
        error_policy,
        Arc::new(()),
        reader,
        queue,
        Config::default(),
    );
    let errors: Vec<_> = results.take(6).collect().await;
    let attempts = attempts.lock().unwrap();
    let gaps: Vec<Duration> =
        attempts.windows(2).map(|w| w[1] - w[0]).collect();
    // On the paused clock a requeue fires exactly when it is due.
    assert_eq!(gaps, [MS(5), MS(10), MS(20), MS(40), MS(80)]);
    let last = errors.last().unwrap().as_ref().unwrap_err().to_string();
    assert!(
        last.ends_with(
            "failed: failure #6, retry in 160ms: connection refused"
        ),
        "{last}"
    );
}

#[test]
fn the_wrapped_future_is_send_for_controller_run() {
    fn assert_send<T: Send + 'static>(_: &T) {}
    let guard = Guard::<ConfigMap, Oops>::builder().build();
    let mut reconcile = guard.wrap(|_: Arc<ConfigMap>, _: Arc<()>| async {
        Ok::<_, Oops>(Action::await_change())
    });
    let fut = reconcile(Arc::new(cm("a", "1")), Arc::new(()));
    assert_send(&fut);
}
