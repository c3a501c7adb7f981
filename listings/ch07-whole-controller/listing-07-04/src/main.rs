// The scrape itself: what a Prometheus server reads from a controller built
// with faithful-workqueue, in the text exposition format, after a short run
// (one key that succeeds, one that fails once). On the paused clock every
// duration is zero, so each histogram observation lands in its first bucket.
// It is printed family by family, so that it fits a page: each family's
// name and type, its help text, then each sample as the scrape writes it,
// less the family's name.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::anyhow;
use faithful_workqueue::controller::{Controller, Options};
use faithful_workqueue::prometheus::{
    ControllerMetrics, WorkqueueMetricsProvider, encode,
};
use faithful_workqueue::reconcile::ReconcileResult;
use prometheus_client::registry::Registry;
use tokio::sync::{Notify, mpsc};

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    // ANCHOR: scrape
    let mut registry = Registry::default();
    let options = Options {
        name: "demo".to_owned(),
        metrics: Some(ControllerMetrics::register(&mut registry)),
        workqueue_metrics: Some(Arc::new(WorkqueueMetricsProvider::register(
            &mut registry,
        ))),
        ..Options::default()
    };
    // ANCHOR_END: scrape
    let failed_once = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(Notify::new());
    let reconciler = {
        let finished = finished.clone();
        move |key: &'static str| {
            let first_failure = key == "fail"
                && failed_once.fetch_add(1, Ordering::SeqCst) == 0;
            let finished = finished.clone();
            async move {
                if first_failure {
                    return Err(anyhow!("connection refused"));
                }
                if key == "fail" {
                    finished.notify_one(); // the retry succeeded: the run is over
                }
                Ok(ReconcileResult::done())
            }
        }
    };
    // ANCHOR: scrape
    let controller =
        Arc::new(Controller::new_typed_unmanaged(reconciler, options));
    let (events, source) = mpsc::channel(4);
    events.send("ok").await.expect("open");
    events.send("fail").await.expect("open");
    controller.start(source, async move { finished.notified().await }).await;
    print_by_family(&encode(&registry));
    // ANCHOR_END: scrape
}

/// The width of the page the scrape is printed for.
const WIDTH: usize = 80;

/// `scrape`, in the text exposition format, as a table: for each family the
/// name and type its `# TYPE` line declares, its `# HELP` text as comment
/// lines wrapped to the page, then its samples, each without the family's
/// name (`_total{…}`, `_bucket{…}`), the values in a column. A line outside
/// a family (`# EOF`) is printed as it is. Nothing is left out, so the Go
/// twin puts the scrape back together from this to compare it with Go's.
fn print_by_family(scrape: &str) {
    // Each line of the table: text, or a sample's series and value.
    let mut table: Vec<(String, Option<&str>)> = Vec::new();
    let mut family = "";
    let mut help = "";
    for line in scrape.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            help = rest.split_once(' ').map_or("", |(_, text)| text);
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("# TYPE name type");
            family = name;
            table.push((format!("{name} {kind}"), None));
            let mut comment = String::new();
            for word in help.split(' ') {
                if !comment.is_empty()
                    && 4 + comment.len() + 1 + word.len() > WIDTH
                {
                    table.push((format!("  # {comment}"), None));
                    comment.clear();
                }
                if !comment.is_empty() {
                    comment.push(' ');
                }
                comment.push_str(word);
            }
            table.push((format!("  # {comment}"), None));
        } else if let Some(sample) =
            line.strip_prefix(family).filter(|_| !family.is_empty())
        {
            let (series, value) =
                sample.rsplit_once(' ').expect("a sample has a value");
            table.push((format!("  {series}"), Some(value)));
        } else {
            table.push((line.to_owned(), None));
        }
    }
    let column = table
        .iter()
        .filter(|(_, value)| value.is_some())
        .map(|(series, _)| series.len())
        .max()
        .unwrap_or(0);
    for (text, value) in table {
        match value {
            Some(value) => println!("{text:<column$} {value}"),
            None => println!("{text}"),
        }
    }
}
