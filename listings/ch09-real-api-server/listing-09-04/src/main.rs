// Listing 9-4: the stall as a Prometheus server would see it. The crate's
// controller, fed by a kube-rs watcher, serves its metrics over HTTP on
// 127.0.0.1, and its reconcile of cm-hang never returns. Two GETs of
// /metrics, the second once the gauges have moved on, show the
// unfinished-work gauges growing.
//
// With SCRAPES_DIR set, the two scrapes are also written there whole, for
// `promtool check metrics` (the suite does that).
//
// With a control plane up (`cargo xtask cluster up`):
//
// ```text
// KUBECONFIG=target/cluster/kubeconfig cargo run -p listing-09-04
// ```

use std::pin::pin;
use std::sync::Arc;

use anyhow::{Context, Result};
use cluster_support::{config_map, receive, scrape};
use faithful_workqueue::controller::{Controller, Options};
use faithful_workqueue::prometheus::{
    ControllerMetrics, WorkqueueMetricsProvider, encode, encode_prometheus_text,
};
use faithful_workqueue::reconcile::ReconcileResult;
use futures::TryStreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use prometheus_client::registry::Registry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

// ANCHOR: serve
/// Serves `GET /metrics` (any request, really) with the registry's
/// exposition, one connection at a time: enough for a scrape. OpenMetrics to
/// a scraper that asks for it (as Prometheus does), the classic text format
/// otherwise, as client_golang's handler does.
async fn serve_metrics(listener: TcpListener, registry: Arc<Registry>) {
    while let Ok((mut conn, _)) = listener.accept().await {
        let mut request = [0u8; 4096];
        let n = conn.read(&mut request).await.unwrap_or(0);
        let wants_open_metrics = String::from_utf8_lossy(&request[..n])
            .contains("application/openmetrics-text");
        let (body, content_type) = if wants_open_metrics {
            (
                encode(&registry),
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )
        } else {
            (
                encode_prometheus_text(&registry),
                "text/plain; version=0.0.4; charset=utf-8",
            )
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = conn.write_all(head.as_bytes()).await;
        let _ = conn.write_all(body.as_bytes()).await;
    }
}
// ANCHOR_END: serve

/// A plain HTTP GET; `None` if anything goes wrong (the caller retries).
async fn http_get(address: &str, path: &str) -> Option<String> {
    let mut conn = TcpStream::connect(address).await.ok()?;
    conn.write_all(format!("GET {path} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n\r\n").as_bytes())
        .await
        .ok()?;
    let mut response = String::new();
    conn.read_to_string(&mut response).await.ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_owned())
}

#[tokio::main]
async fn main() -> Result<()> {
    let client = cluster_support::client().await?;
    let ns = cluster_support::namespace(&client, "listing-09-04").await?;
    let api: Api<ConfigMap> = Api::namespaced(client, &ns);
    config_map(&api, "cm-ok", "step", "0").await?;

    // ANCHOR: controller
    let mut registry = Registry::default();
    let options = Options {
        name: "configmap".to_owned(),
        metrics: Some(ControllerMetrics::register(&mut registry)),
        workqueue_metrics: Some(Arc::new(WorkqueueMetricsProvider::register(
            &mut registry,
        ))),
        ..Options::default()
    };
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding 127.0.0.1:0")?;
    let address = listener.local_addr()?.to_string();
    tokio::spawn(serve_metrics(listener, Arc::new(registry)));

    let (reconciled_ok, mut reconciled) = mpsc::unbounded_channel();
    let (hanging, mut hangs) = mpsc::unbounded_channel();
    let reconciler = move |name: String| {
        let (reconciled_ok, hanging) = (reconciled_ok.clone(), hanging.clone());
        async move {
            if name == "cm-hang" {
                let _ = hanging.send(());
                // A call without a timeout that never answers.
                std::future::pending::<()>().await;
            }
            let _ = reconciled_ok.send(());
            Ok(ReconcileResult::done())
        }
    };
    let controller =
        Arc::new(Controller::new_typed_unmanaged(reconciler, options));
    // ANCHOR_END: controller

    // The source: every object the watch lists or changes, by name.
    let (requests, source) = mpsc::channel(16);
    tokio::spawn(async move {
        let mut events = pin!(
            watcher(api.clone(), watcher::Config::default())
                .default_backoff()
                .applied_objects()
        );
        while let Ok(Some(cm)) = events.try_next().await {
            if requests.send(cm.name_any()).await.is_err() {
                return;
            }
        }
    });
    tokio::spawn(controller.start(source, std::future::pending()));

    // cm-hang is created once cm-ok was reconciled: with one worker (the
    // default), a hang holds up every key queued behind it.
    receive(&mut reconciled, "the reconcile of cm-ok").await?;
    let api: Api<ConfigMap> =
        Api::namespaced(cluster_support::client().await?, &ns);
    config_map(&api, "cm-hang", "step", "0").await?;
    receive(&mut hangs, "the reconcile of cm-hang to start").await?;

    // ANCHOR: scrapes
    let get = || http_get(&address, "/metrics");
    let longest = |s: &str| {
        scrape::value(
            s,
            "workqueue_longest_running_processor_seconds",
            "configmap",
            &[],
        )
    };
    let ok_once = |s: &str| {
        scrape::value(
            s,
            "controller_runtime_reconcile_total",
            "configmap",
            &[r#"result="success""#],
        ) == 1.0
    };
    // The gauges are updated every 500ms; wait for the first update that
    // saw cm-hang held, then for a later one.
    let first = scrape::until(
        get,
        |s| longest(s) > 0.0 && ok_once(s),
        "a scrape with cm-hang held and cm-ok reconciled",
    )
    .await?;
    let second = scrape::until(
        get,
        |s| longest(s) > longest(&first),
        "a later update of the gauges",
    )
    .await?;
    // ANCHOR_END: scrapes
    save(&first, &second)?;
    scrape::compare(&first, &second, "configmap")
}

/// Writes both scrapes into SCRAPES_DIR, when it is set.
fn save(first: &str, second: &str) -> Result<()> {
    let Some(dir) = std::env::var_os("SCRAPES_DIR") else { return Ok(()) };
    for (i, s) in [first, second].into_iter().enumerate() {
        let path = std::path::Path::new(&dir)
            .join(format!("listing-09-04-rust-{}.txt", i + 1));
        std::fs::write(&path, s)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
