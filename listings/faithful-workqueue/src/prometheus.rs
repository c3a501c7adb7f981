//! controller-runtime's metrics, with its exact names and labels, in a
//! [`prometheus_client`] registry: the controller's own
//! (`pkg/internal/controller/metrics/metrics.go`) and the work queue's
//! (`pkg/internal/metrics/workqueue.go`).
//!
//! ```
//! use faithful_workqueue::prometheus::{ControllerMetrics, WorkqueueMetricsProvider, encode};
//! use faithful_workqueue::priorityqueue::PriorityQueue;
//! use faithful_workqueue::queue::QueueConfig;
//! use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
//! use prometheus_client::registry::Registry;
//! use std::sync::Arc;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let mut registry = Registry::default();
//! let _controller = ControllerMetrics::register(&mut registry);
//! let provider = Arc::new(WorkqueueMetricsProvider::register(&mut registry));
//! let queue = PriorityQueue::with_config(
//!     priority_queue_default_rate_limiter(),
//!     QueueConfig::named("demo").metrics_provider(provider),
//! );
//! queue.add("default/web");
//! let scrape = encode(&registry);
//! assert!(scrape.contains(r#"workqueue_adds_total{controller="demo",name="demo"} 1"#));
//! assert!(scrape.contains(r#"workqueue_depth{controller="demo",name="demo",priority="0"} 1"#));
//! # }
//! ```

use std::collections::BTreeSet;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::metrics::{
    CounterMetric, DepthMetricWithPriority, GaugeMetric, HistogramMetric,
    MetricsProvider, SettableGaugeMetric,
};

/// A label set, sorted by label name as Go's exposition prints it.
///
/// ```
/// use faithful_workqueue::prometheus::{samples, Labels};
/// use prometheus_client::metrics::{counter::Counter, family::Family};
/// use prometheus_client::registry::Registry;
///
/// let family = Family::<Labels, Counter>::default();
/// let labels: Labels = vec![("controller".into(), "web".into()), ("result".into(), "success".into())];
/// family.get_or_create(&labels).inc();
/// let mut registry = Registry::default();
/// registry.register("demo", "A demo counter", family);
/// assert_eq!(samples(&registry), [(r#"demo_total{controller="web",result="success"}"#.to_owned(), 1.0)]);
/// ```
pub type Labels = Vec<(String, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// The text exposition of `registry` (OpenMetrics text, which Prometheus
/// scrapes), with each family's series sorted by their labels.
///
/// prometheus-client keeps a family's series in a hash map, so its own output
/// lists them in a different order in every process; sorting makes a scrape
/// comparable from run to run. A histogram's lines stay together, in bucket
/// order.
///
/// ```
/// use faithful_workqueue::prometheus::{ControllerMetrics, encode};
/// use prometheus_client::registry::Registry;
///
/// let mut registry = Registry::default();
/// ControllerMetrics::register(&mut registry).init("demo", 1);
/// let text = encode(&registry);
/// let results: Vec<&str> = text.lines().filter(|l| l.starts_with("controller_runtime_reconcile_total")).collect();
/// assert!(results[0].contains(r#"result="error""#));
/// assert!(results[3].contains(r#"result="success""#));
/// assert!(text.ends_with("# EOF\n"));
/// ```
pub fn encode(registry: &Registry) -> String {
    let mut raw = String::new();
    prometheus_client::encoding::text::encode(&mut raw, registry)
        .expect("writing to a String cannot fail");
    let mut out = String::with_capacity(raw.len());
    let mut samples: Vec<&str> = Vec::new();
    let flush = |samples: &mut Vec<&str>, out: &mut String| {
        // Stable: lines of one series (a histogram's buckets) keep their order.
        samples.sort_by_key(|line| series_labels(line));
        for line in samples.drain(..) {
            out.push_str(line);
            out.push('\n');
        }
    };
    for line in raw.lines() {
        if line.starts_with('#') {
            flush(&mut samples, &mut out);
            out.push_str(line);
            out.push('\n');
        } else {
            samples.push(line);
        }
    }
    flush(&mut samples, &mut out);
    out
}

/// The same exposition in Prometheus's classic text format (version 0.0.4),
/// for a scraper that does not ask for OpenMetrics, and for `promtool check
/// metrics`, which reads only this format.
///
/// The two formats differ where this crate's metrics are concerned in two
/// ways: OpenMetrics names a counter family without its `_total` suffix on
/// the `# HELP` and `# TYPE` lines (the samples carry it), and ends with
/// `# EOF`. The classic format names the family as its samples are named,
/// and has no end marker.
///
/// ```
/// use faithful_workqueue::prometheus::{ControllerMetrics, encode_prometheus_text};
/// use prometheus_client::registry::Registry;
///
/// let mut registry = Registry::default();
/// ControllerMetrics::register(&mut registry).init("demo", 1);
/// let text = encode_prometheus_text(&registry);
/// assert!(text.contains("# TYPE controller_runtime_reconcile_total counter\n"));
/// assert!(!text.contains("# EOF"));
/// ```
pub fn encode_prometheus_text(registry: &Registry) -> String {
    let open_metrics = encode(registry);
    let counters: Vec<&str> = open_metrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(open_metrics.len());
    for line in open_metrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(&name)
                .then(|| format!("{prefix}{name}_total {tail}"))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// A sample line's labels without `le`, which tells a histogram's buckets apart.
fn series_labels(line: &str) -> String {
    let Some(open) = line.find('{') else { return String::new() };
    let close = line[open..].find('}').map_or(line.len(), |c| open + c);
    line[open + 1..close]
        .split(',')
        .filter(|l| !l.starts_with("le="))
        .collect::<Vec<_>>()
        .join(",")
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// The reconcile-time buckets of `controller_runtime_reconcile_time_seconds`.
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5,
    0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5,
    5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
];

/// The controller's metrics (`controller_runtime_*`), labelled by controller.
///
/// ```
/// use faithful_workqueue::controller::{Controller, Options};
/// use faithful_workqueue::priorityqueue::PriorityQueue;
/// use faithful_workqueue::prometheus::{samples, ControllerMetrics};
/// use faithful_workqueue::reconcile::ReconcileResult;
/// use prometheus_client::registry::Registry;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// async fn failing(_: &'static str) -> anyhow::Result<ReconcileResult> {
///     anyhow::bail!("connection refused")
/// }
/// let mut registry = Registry::default();
/// let metrics = ControllerMetrics::register(&mut registry);
/// let options = Options { name: "web".into(), metrics: Some(metrics), ..Options::default() };
/// let c = Controller::with_options(PriorityQueue::new(), failing, options);
/// c.reconcile_handler("default/web", 0).await;
/// let all = samples(&registry);
/// assert!(all.contains(&(r#"controller_runtime_reconcile_total{controller="web",result="error"}"#.to_owned(), 1.0)));
/// assert!(all.contains(&(r#"controller_runtime_reconcile_errors_total{controller="web"}"#.to_owned(), 1.0)));
/// # }
/// ```
#[derive(Clone)]
pub struct ControllerMetrics {
    reconcile_total: Family<Labels, Counter>,
    reconcile_errors: Family<Labels, Counter>,
    terminal_reconcile_errors: Family<Labels, Counter>,
    reconcile_panics: Family<Labels, Counter>,
    reconcile_timeouts: Family<Labels, Counter>,
    reconcile_time: Family<Labels, Histogram>,
    max_concurrent_reconciles: Family<Labels, Gauge>,
    active_workers: Family<Labels, Gauge>,
}

impl ControllerMetrics {
    /// Registers the controller metrics in `registry`.
    ///
    /// ```
    /// use faithful_workqueue::prometheus::{samples, ControllerMetrics};
    /// use prometheus_client::registry::Registry;
    ///
    /// let mut registry = Registry::default();
    /// let metrics = ControllerMetrics::register(&mut registry);
    /// assert!(samples(&registry).is_empty()); // no series until a controller reports ...
    /// metrics.init("web", 1);
    /// assert!(!samples(&registry).is_empty()); // ... or starts
    /// ```
    pub fn register(registry: &mut Registry) -> Self {
        let m = Self {
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            terminal_reconcile_errors: Family::default(),
            reconcile_panics: Family::default(),
            reconcile_timeouts: Family::default(),
            reconcile_time: Family::new_with_constructor(|| {
                Histogram::new(RECONCILE_TIME_BUCKETS)
            }),
            max_concurrent_reconciles: Family::default(),
            active_workers: Family::default(),
        };
        // A counter's registered name gets `_total` in the exposition.
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            m.reconcile_total.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            m.reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_terminal_reconcile_errors",
            "Total number of terminal reconciliation errors per controller",
            m.terminal_reconcile_errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            m.reconcile_panics.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            m.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            m.max_concurrent_reconciles.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            m.active_workers.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_timeouts",
            "Total number of reconciliation timeouts per controller",
            m.reconcile_timeouts.clone(),
        );
        m
    }

    /// Sets every series of `controller` to its starting value, as upstream's
    /// `initMetrics` does when a controller starts.
    ///
    /// ```
    /// use faithful_workqueue::prometheus::{samples, ControllerMetrics};
    /// use prometheus_client::registry::Registry;
    ///
    /// let mut registry = Registry::default();
    /// ControllerMetrics::register(&mut registry).init("web", 4);
    /// let all = samples(&registry);
    /// let value = |series: &str| all.iter().find(|(s, _)| s == series).map(|(_, v)| *v);
    /// assert_eq!(value(r#"controller_runtime_reconcile_total{controller="web",result="success"}"#), Some(0.0));
    /// assert_eq!(value(r#"controller_runtime_reconcile_timeouts_total{controller="web"}"#), Some(0.0));
    /// assert_eq!(value(r#"controller_runtime_active_workers{controller="web"}"#), Some(0.0));
    /// assert_eq!(value(r#"controller_runtime_max_concurrent_reconciles{controller="web"}"#), Some(4.0));
    /// ```
    pub fn init(&self, controller: &str, max_concurrent_reconciles: usize) {
        for result in ["error", "requeue_after", "requeue", "success"] {
            let _ = self.reconcile_total.get_or_create(&labels(&[
                ("controller", controller),
                ("result", result),
            ]));
        }
        let c = labels(&[("controller", controller)]);
        let _ = self.reconcile_errors.get_or_create(&c);
        let _ = self.terminal_reconcile_errors.get_or_create(&c);
        let _ = self.reconcile_panics.get_or_create(&c);
        let _ = self.reconcile_timeouts.get_or_create(&c);
        self.max_concurrent_reconciles
            .get_or_create(&c)
            .set(max_concurrent_reconciles as i64);
        self.active_workers.get_or_create(&c).set(0);
    }

    pub(crate) fn result(&self, controller: &str, result: &str) {
        self.reconcile_total
            .get_or_create(&labels(&[
                ("controller", controller),
                ("result", result),
            ]))
            .inc();
    }
    pub(crate) fn error(&self, controller: &str) {
        self.reconcile_errors
            .get_or_create(&labels(&[("controller", controller)]))
            .inc();
    }
    pub(crate) fn terminal_error(&self, controller: &str) {
        self.terminal_reconcile_errors
            .get_or_create(&labels(&[("controller", controller)]))
            .inc();
    }
    pub(crate) fn panic(&self, controller: &str) {
        self.reconcile_panics
            .get_or_create(&labels(&[("controller", controller)]))
            .inc();
    }
    pub(crate) fn timeout(&self, controller: &str) {
        self.reconcile_timeouts
            .get_or_create(&labels(&[("controller", controller)]))
            .inc();
    }
    pub(crate) fn reconcile_time(&self, controller: &str, seconds: f64) {
        self.reconcile_time
            .get_or_create(&labels(&[("controller", controller)]))
            .observe(seconds);
    }
    pub(crate) fn active_workers(&self, controller: &str, delta: i64) {
        self.active_workers
            .get_or_create(&labels(&[("controller", controller)]))
            .inc_by(delta);
    }
}

/// The most distinct priorities `workqueue_depth` gets a series for. When one
/// more shows up, every later update, for any priority, goes to
/// `priority="exceeded_cardinality_limit"`, as upstream.
///
/// ```
/// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
/// use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue};
/// use faithful_workqueue::prometheus::{encode, WorkqueueMetricsProvider, PRIORITY_CARDINALITY_LIMIT};
/// use faithful_workqueue::queue::QueueConfig;
/// use prometheus_client::registry::Registry;
/// use std::sync::Arc;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let mut registry = Registry::default();
/// let provider = Arc::new(WorkqueueMetricsProvider::register(&mut registry));
/// let config = QueueConfig::named("q").metrics_provider(provider);
/// let q = PriorityQueue::with_config(priority_queue_default_rate_limiter(), config);
/// for priority in 0..=PRIORITY_CARDINALITY_LIMIT as i32 {
///     q.add_with_opts(AddOpts { priority: Some(priority), ..AddOpts::default() }, [priority]);
/// }
/// let scrape = encode(&registry);
/// assert!(scrape.contains(r#"workqueue_depth{controller="q",name="q",priority="24"} 1"#));
/// assert!(!scrape.contains(r#"priority="25""#)); // the 26th priority ...
/// assert!(scrape.contains(r#"workqueue_depth{controller="q",name="q",priority="exceeded_cardinality_limit"} 1"#));
/// # }
/// ```
pub const PRIORITY_CARDINALITY_LIMIT: usize = 25;

/// controller-runtime's workqueue metrics provider: `workqueue_*` labelled
/// with `name` and `controller` (both the queue's name), depth also by
/// `priority` (`""` for client-go's queue).
///
/// ```
/// use faithful_workqueue::prometheus::{encode, WorkqueueMetricsProvider};
/// use faithful_workqueue::queue::{Queue, QueueConfig};
/// use prometheus_client::registry::Registry;
/// use std::sync::Arc;
///
/// let mut registry = Registry::default();
/// let provider = Arc::new(WorkqueueMetricsProvider::register(&mut registry));
/// let q = Queue::with_config(QueueConfig::named("plain").metrics_provider(provider));
/// q.add("a");
/// // client-go's queue has no priorities: its depth series has priority="".
/// assert!(encode(&registry).contains(r#"workqueue_depth{controller="plain",name="plain",priority=""} 1"#));
/// ```
#[derive(Clone)]
pub struct WorkqueueMetricsProvider {
    depth: Family<Labels, Gauge>,
    adds: Family<Labels, Counter>,
    latency: Family<Labels, Histogram>,
    work_duration: Family<Labels, Histogram>,
    unfinished: Family<Labels, FloatGauge>,
    longest_running_processor: Family<Labels, FloatGauge>,
    retries: Family<Labels, Counter>,
}

impl WorkqueueMetricsProvider {
    /// Registers the workqueue metrics in `registry`.
    ///
    /// ```
    /// use faithful_workqueue::metrics::MetricsProvider;
    /// use faithful_workqueue::prometheus::{encode, WorkqueueMetricsProvider};
    /// use prometheus_client::registry::Registry;
    ///
    /// let mut registry = Registry::default();
    /// let provider = WorkqueueMetricsProvider::register(&mut registry);
    /// provider.new_retries_metric("q").inc();
    /// // A counter's samples get `_total`; both labels are the queue's name.
    /// assert!(encode(&registry).contains(r#"workqueue_retries_total{controller="q",name="q"} 1"#));
    /// ```
    pub fn register(registry: &mut Registry) -> Self {
        let buckets = || Histogram::new(exponential_buckets(10e-9, 10.0, 12));
        let p = Self {
            depth: Family::default(),
            adds: Family::default(),
            latency: Family::new_with_constructor(buckets),
            work_duration: Family::new_with_constructor(buckets),
            unfinished: Family::default(),
            longest_running_processor: Family::default(),
            retries: Family::default(),
        };
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            p.depth.clone(),
        );
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            p.adds.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            p.latency.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            p.work_duration.clone(),
        );
        registry.register(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by \
             work_duration. Large values indicate stuck threads. One can deduce the number of stuck \
             threads by observing the rate at which this increases",
            p.unfinished.clone(),
        );
        registry.register(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running",
            p.longest_running_processor.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, \
             explicit RequeueAfter or AddAfter calls)",
            p.retries.clone(),
        );
        p
    }
}

fn queue_labels(name: &str) -> Labels {
    labels(&[("controller", name), ("name", name)])
}

struct FamilyMetric<M> {
    family: Family<Labels, M>,
    labels: Labels,
}

impl<M> FamilyMetric<M>
where
    fn() -> M: prometheus_client::metrics::family::MetricConstructor<M>,
{
    /// The series `labels` of `family`, created now at its zero value, as
    /// upstream's provider creates each one with `WithLabelValues` when the
    /// queue asks for it: a new queue's scrape shows every series at 0
    /// before anything happens to the queue, and the queue itself need not
    /// set anything for that.
    fn created(family: &Family<Labels, M>, labels: Labels) -> Arc<Self> {
        drop(family.get_or_create(&labels));
        Arc::new(FamilyMetric { family: family.clone(), labels })
    }
}

impl GaugeMetric for FamilyMetric<Gauge> {
    fn inc(&self) {
        self.family.get_or_create(&self.labels).inc();
    }
    fn dec(&self) {
        self.family.get_or_create(&self.labels).dec();
    }
}
impl CounterMetric for FamilyMetric<Counter> {
    fn inc(&self) {
        self.family.get_or_create(&self.labels).inc();
    }
}
impl HistogramMetric for FamilyMetric<Histogram> {
    fn observe(&self, value: f64) {
        self.family.get_or_create(&self.labels).observe(value);
    }
}
impl SettableGaugeMetric for FamilyMetric<FloatGauge> {
    fn set(&self, value: f64) {
        self.family.get_or_create(&self.labels).set(value);
    }
}

struct DepthByPriority {
    family: Family<Labels, Gauge>,
    name: String,
    /// The priorities seen so far; `None` once the limit was exceeded.
    seen: Arc<Mutex<Option<BTreeSet<i32>>>>,
}

impl DepthByPriority {
    fn series(&self, priority: i32) -> Labels {
        // Upstream: once a 26th distinct priority shows up, every later update,
        // for any priority, goes to the placeholder series.
        let mut seen = self.seen.lock().unwrap();
        let label = match seen.as_mut() {
            None => "exceeded_cardinality_limit".to_owned(),
            Some(priorities) => {
                priorities.insert(priority);
                if priorities.len() > PRIORITY_CARDINALITY_LIMIT {
                    *seen = None;
                    "exceeded_cardinality_limit".to_owned()
                } else {
                    priority.to_string()
                }
            }
        };
        labels(&[
            ("controller", &self.name),
            ("name", &self.name),
            ("priority", &label),
        ])
    }
}

impl DepthMetricWithPriority for DepthByPriority {
    fn inc(&self, priority: i32) {
        self.family.get_or_create(&self.series(priority)).inc();
    }
    fn dec(&self, priority: i32) {
        self.family.get_or_create(&self.series(priority)).dec();
    }
}

impl MetricsProvider for WorkqueueMetricsProvider {
    fn new_depth_metric_with_priority(
        &self,
        name: &str,
    ) -> Option<Arc<dyn DepthMetricWithPriority>> {
        Some(Arc::new(DepthByPriority {
            family: self.depth.clone(),
            name: name.to_owned(),
            // Counted per queue, as upstream counts per depth metric.
            seen: Arc::new(Mutex::new(Some(BTreeSet::new()))),
        }))
    }
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
        let labels =
            labels(&[("controller", name), ("name", name), ("priority", "")]);
        FamilyMetric::created(&self.depth, labels)
    }
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        FamilyMetric::created(&self.adds, queue_labels(name))
    }
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        FamilyMetric::created(&self.latency, queue_labels(name))
    }
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        FamilyMetric::created(&self.work_duration, queue_labels(name))
    }
    fn new_unfinished_work_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        FamilyMetric::created(&self.unfinished, queue_labels(name))
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        FamilyMetric::created(
            &self.longest_running_processor,
            queue_labels(name),
        )
    }
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        FamilyMetric::created(&self.retries, queue_labels(name))
    }
}

/// The samples of a scrape as `(series, value)` pairs, sorted by series text:
/// `name{label="value",...}`. Comment lines are dropped. Handy for tests and
/// for printing a few series in a stable order.
///
/// ```
/// use faithful_workqueue::prometheus::{ControllerMetrics, samples};
/// use prometheus_client::registry::Registry;
///
/// let mut registry = Registry::default();
/// ControllerMetrics::register(&mut registry).init("demo", 1);
/// let all = samples(&registry);
/// assert!(all.contains(&(r#"controller_runtime_max_concurrent_reconciles{controller="demo"}"#.to_owned(), 1.0)));
/// assert!(all.windows(2).all(|pair| pair[0].0 <= pair[1].0)); // sorted by series
/// ```
pub fn samples(registry: &Registry) -> Vec<(String, f64)> {
    let mut all: Vec<(String, f64)> = encode(registry)
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            Some((series.to_owned(), value.parse().ok()?))
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_26th_priority_sends_every_later_update_to_the_placeholder() {
        let mut registry = Registry::default();
        let provider = WorkqueueMetricsProvider::register(&mut registry);
        let depth = provider.new_depth_metric_with_priority("q").unwrap();
        for priority in 0..25 {
            depth.inc(priority);
        }
        depth.inc(25); // the 26th distinct priority
        depth.inc(0); // a priority seen before goes to the placeholder too
        let all = samples(&registry);
        let value = |p: &str| {
            all.iter()
                .find(|(s, _)| s == &format!(r#"workqueue_depth{{controller="q",name="q",priority="{p}"}}"#))
                .map(|(_, v)| *v)
        };
        assert_eq!(value("0"), Some(1.0));
        assert_eq!(value("24"), Some(1.0));
        assert_eq!(value("25"), None);
        assert_eq!(value("exceeded_cardinality_limit"), Some(2.0));
    }
}
