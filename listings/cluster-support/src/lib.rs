//! What every listing of the API-server chapter needs and no reader needs to
//! see (the Go twins have the same in `listings/internal/apiserver`).
//!
//! These listings run against a real kube-apiserver, so they are the only
//! ones that wait in real time. Every wait is bounded and ends on observed
//! state; one that runs out is an error naming the listing and what it
//! waited for. They print nothing that varies between runs: no resource
//! versions, UIDs, timestamps, ports or namespace names.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

pub mod informer;

use std::pin::pin;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, anyhow};
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;
use futures::TryStreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};

/// How long any one wait may take. Generous: the suite runs these listings
/// on a busy two-core machine.
pub const BOUND: Duration = Duration::from_secs(60);

/// A client for the control plane that `KUBECONFIG` names (`cargo xtask
/// cluster up` writes one; the suite sets it).
pub async fn client() -> Result<Client> {
    if std::env::var_os("KUBECONFIG").is_none() {
        return Err(anyhow!(
            "KUBECONFIG is not set: start a control plane with `cargo xtask cluster up` and use the kubeconfig it prints"
        ));
    }
    Client::try_default()
        .await
        .context("connecting to the API server named by KUBECONFIG")
}

/// Creates a namespace with a random name and returns the name. The name
/// varies, so it is never printed. envtest runs no namespace controller, so a
/// deleted namespace would stay `Terminating`: a fresh one per run keeps runs
/// apart instead.
pub async fn namespace(client: &Client, prefix: &str) -> Result<String> {
    let name = format!("{prefix}-{:08x}", std::process::id() ^ random_bits());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .with_context(|| format!("creating namespace {name}"))?;
    Ok(name)
}

/// A few bits that differ between runs (no `rand` dependency for this).
fn random_bits() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher =
        std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    hasher.finish() as u32
}

/// Creates a ConfigMap with one data entry.
pub async fn config_map(
    api: &Api<ConfigMap>,
    name: &str,
    key: &str,
    value: &str,
) -> Result<()> {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(key.to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    };
    api.create(&PostParams::default(), &cm)
        .await
        .with_context(|| format!("creating ConfigMap {name}"))?;
    Ok(())
}

/// Creates a ConfigMap with one label and no data.
pub async fn labeled_config_map(
    api: &Api<ConfigMap>,
    name: &str,
    label: &str,
    value: &str,
) -> Result<()> {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(BTreeMap::from([(
                label.to_owned(),
                value.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    api.create(&PostParams::default(), &cm)
        .await
        .with_context(|| format!("creating ConfigMap {name}"))?;
    Ok(())
}

/// Sets one data entry of a ConfigMap (a read, then an update).
pub async fn set_data(
    api: &Api<ConfigMap>,
    name: &str,
    key: &str,
    value: &str,
) -> Result<()> {
    let mut cm = api
        .get(name)
        .await
        .with_context(|| format!("reading ConfigMap {name}"))?;
    cm.data
        .get_or_insert_with(BTreeMap::new)
        .insert(key.to_owned(), value.to_owned());
    api.replace(name, &PostParams::default(), &cm)
        .await
        .with_context(|| format!("updating ConfigMap {name}"))?;
    Ok(())
}

/// Awaits `future` for at most [`BOUND`]; running out is an error that says
/// what was awaited.
pub async fn within<T>(
    what: &str,
    future: impl Future<Output = T>,
) -> Result<T> {
    tokio::time::timeout(BOUND, future)
        .await
        .map_err(|_| anyhow!("waited {}s for {what}", BOUND.as_secs()))
}

/// The next value from `rx`, within [`BOUND`].
pub async fn receive<T>(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<T>,
    what: &str,
) -> Result<T> {
    within(what, rx.recv())
        .await?
        .ok_or_else(|| anyhow!("the channel closed while waiting for {what}"))
}

/// An informer's cache: object name to object.
pub type Cache = Arc<Mutex<BTreeMap<String, ConfigMap>>>;

/// The informer of client-go's sample-controller, for ConfigMaps: every
/// object the watch lists or changes goes into `cache`, then its name into
/// `queue` (sample-controller's `AddFunc` and `UpdateFunc` both enqueue).
/// Returns once the initial list is in the cache (`WaitForCacheSync`); the
/// watch goes on in a task of its own.
pub async fn enqueue_every_change(
    api: Api<ConfigMap>,
    cache: Cache,
    queue: RateLimitingQueue<String>,
) -> Result<()> {
    let (synced_tx, synced_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut synced = Some(synced_tx);
        let mut events =
            pin!(watcher(api, watcher::Config::default()).default_backoff());
        loop {
            let event = match events.try_next().await {
                Ok(Some(event)) => event,
                Ok(None) => return,
                // `default_backoff` waits, and the watcher carries on.
                Err(error) => {
                    eprintln!("watch: {error}");
                    continue;
                }
            };
            match event {
                watcher::Event::InitApply(cm) | watcher::Event::Apply(cm) => {
                    let name = cm.name_any();
                    cache.lock().unwrap().insert(name.clone(), cm);
                    queue.add(name);
                }
                watcher::Event::Delete(cm) => {
                    cache.lock().unwrap().remove(&cm.name_any());
                }
                watcher::Event::InitDone => {
                    if let Some(tx) = synced.take() {
                        let _ = tx.send(());
                    }
                }
                watcher::Event::Init => {}
            }
        }
    });
    within("the informer's initial list", synced_rx)
        .await?
        .context("the watch ended before its initial list")
}

/// The "step" entry of a cached ConfigMap's data, as a number.
pub fn step_of(cache: &Cache, name: &str) -> Option<u32> {
    cache.lock().unwrap().get(name)?.data.as_ref()?.get("step")?.parse().ok()
}

/// Waits until `cond` holds, checking it again each time `changed` yields;
/// at most [`BOUND`] in all. Running out is an error naming `what`.
pub async fn until(
    changed: &mut tokio::sync::mpsc::UnboundedReceiver<()>,
    mut cond: impl FnMut() -> bool,
    what: &str,
) -> Result<()> {
    within(what, async {
        while !cond() {
            if changed.recv().await.is_none() {
                return Err(anyhow!(
                    "the channel closed while waiting for {what}"
                ));
            }
        }
        Ok(())
    })
    .await?
}

/// Reading a Prometheus text exposition (listing 9-4; the Go twins have the
/// same in `listings/internal/scrape`).
pub mod scrape {
    use std::collections::BTreeMap;
    use std::future::Future;
    use std::time::Duration;

    use anyhow::{Result, bail};

    /// The sum of the samples of `metric` whose labels include
    /// `controller="<controller>"` and every one of `matchers` (such as
    /// `result="success"`); 0 when there is none.
    pub fn value(
        scrape: &str,
        metric: &str,
        controller: &str,
        matchers: &[&str],
    ) -> f64 {
        let controller = format!("controller=\"{controller}\"");
        scrape
            .lines()
            .filter_map(|line| {
                line.strip_prefix(metric)?.strip_prefix('{')?.split_once("} ")
            })
            .filter(|(labels, _)| {
                let labels: Vec<&str> = labels.split(',').collect();
                labels.contains(&controller.as_str())
                    && matchers.iter().all(|m| labels.contains(m))
            })
            .filter_map(|(_, value)| {
                value.split_whitespace().next()?.parse::<f64>().ok()
            })
            .sum()
    }

    /// For each value of `label` among the samples of `metric` whose labels
    /// include `controller="<controller>"`, the sample's value.
    pub fn by_label(
        scrape: &str,
        metric: &str,
        controller: &str,
        label: &str,
    ) -> BTreeMap<String, f64> {
        let controller = format!("controller=\"{controller}\"");
        let prefix = format!("{label}=");
        scrape
            .lines()
            .filter_map(|line| {
                line.strip_prefix(metric)?.strip_prefix('{')?.split_once("} ")
            })
            .filter(|(labels, _)| labels.split(',').any(|l| l == controller))
            .filter_map(|(labels, value)| {
                let value =
                    value.split_whitespace().next()?.parse::<f64>().ok()?;
                let wanted =
                    labels.split(',').find_map(|l| l.strip_prefix(&prefix))?;
                Some((wanted.trim_matches('"').to_owned(), value))
            })
            .collect()
    }

    /// Scrapes with `get` every 100ms until `cond` holds, for at most
    /// [`BOUND`](crate::BOUND), and returns that scrape.
    pub async fn until<F: Future<Output = Option<String>>>(
        mut get: impl FnMut() -> F,
        cond: impl Fn(&str) -> bool,
        what: &str,
    ) -> Result<String> {
        let deadline = tokio::time::Instant::now() + crate::BOUND;
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        loop {
            tick.tick().await;
            if let Some(s) = get().await.filter(|s| cond(s)) {
                return Ok(s);
            }
            if tokio::time::Instant::now() > deadline {
                bail!(
                    "scraped /metrics for {}s without seeing {what}",
                    crate::BOUND.as_secs()
                );
            }
        }
    }

    /// Prints, for the metrics the chapter discusses, how the second scrape
    /// compares with the first.
    pub fn compare(first: &str, second: &str, controller: &str) -> Result<()> {
        println!(
            "GET /metrics twice while a reconcile has not returned (controller={controller:?}):"
        );
        println!("{:<52} second scrape", "metric");
        for m in [
            "workqueue_longest_running_processor_seconds",
            "workqueue_unfinished_work_seconds",
        ] {
            let (a, b) = (
                value(first, m, controller, &[]),
                value(second, m, controller, &[]),
            );
            let verdict = if b > a {
                "higher"
            } else if b < a {
                "lower"
            } else {
                "the same"
            };
            println!("{m:<52} {verdict}");
        }
        for (name, matcher) in [
            ("controller_runtime_reconcile_total", Some(r#"result="success""#)),
            ("controller_runtime_active_workers", None),
            ("workqueue_depth", None),
        ] {
            let matchers: Vec<&str> = matcher.into_iter().collect();
            let label = match matcher {
                Some(m) => format!("{name}{{{m}}}"),
                None => name.to_owned(),
            };
            let (a, b) = (
                value(first, name, controller, &matchers),
                value(second, name, controller, &matchers),
            );
            println!("{label:<52} {b}, as in the first");
            if a != b {
                bail!("{label} changed between the scrapes");
            }
        }
        Ok(())
    }
}

/// Asks the cluster supervisor (`CLUSTER_SUPERVISOR_PID`; `cargo xtask
/// cluster up` prints it) to kill kube-apiserver and start it again on the
/// same etcd, and waits (at most [`BOUND`]) until the supervisor reports the
/// new server healthy: the count of restarts in the file beside the
/// kubeconfig goes up by one.
pub async fn restart_api_server() -> Result<()> {
    let pid = std::env::var("CLUSTER_SUPERVISOR_PID").ok().and_then(|p| p.parse::<u32>().ok()).ok_or_else(|| {
        anyhow!("CLUSTER_SUPERVISOR_PID is not set to the PID of the cluster supervisor (`cargo xtask cluster up` prints it)")
    })?;
    let mut count_file =
        std::env::var_os("KUBECONFIG").context("KUBECONFIG is not set")?;
    count_file.push(".restarts");
    let count = || {
        std::fs::read_to_string(&count_file)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .unwrap_or(0)
    };
    let before = count();
    let status = std::process::Command::new("kill")
        .args(["-USR1", &pid.to_string()])
        .status()?;
    anyhow::ensure!(
        status.success(),
        "signalling the cluster supervisor (PID {pid}) failed: {status}"
    );
    within("the cluster supervisor to restart kube-apiserver", async {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        while count() <= before {
            tick.tick().await;
        }
    })
    .await
}
