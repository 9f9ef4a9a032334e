//! controller-runtime's `workqueue_*` metrics, measured on the driver's queue (see
//! `work_queue`): names, types, labels and buckets as controller-runtime
//! (`pkg/internal/metrics/workqueue.go`) registers them for client-go's work queue, so that
//! the dashboards and alerts written for kubebuilder operators read them unchanged.
//!
//! kube-runtime's controller says when an object is due (a change came); the driver's queue
//! keeps it, each object once, until one of the controller's workers
//! ([`MAX_CONCURRENT_RECONCILES`](crate::Reconciler::MAX_CONCURRENT_RECONCILES)) takes it, in
//! the order objects became due, and brings it back after the delay of a requeue or a
//! failure's retry. So, per controller (`name` and `controller` both its name, as
//! controller-runtime labels them):
//!
//! - `workqueue_adds_total`: objects that became due and entered the queue;
//! - `workqueue_depth`: objects in the queue, waiting for a worker (`priority` is "", as for
//!   controller-runtime's default queue);
//! - `workqueue_queue_duration_seconds`: how long each waited for its worker;
//! - `workqueue_work_duration_seconds`: how long each held its worker: the reconcile with what
//!   the runtime does around it (the finalizer, the failure Event);
//! - `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds`: the
//!   time the reconciles under way have taken so far, in all and the longest, as of the scrape
//!   (client-go updates them every 500 ms);
//! - `workqueue_retries_total`: reconciles that asked to come again after a delay, a failure's
//!   retry (controller-runtime's `AddRateLimited`) or a requeue (`RequeueAfter`): counted when
//!   the reconcile ends, while the object waits for its delay, not yet in the queue; once the
//!   delay has passed it is added again.
//!
//! What differs from client-go's queue: an object changed while it is being reconciled is
//! added once that reconcile ends (client-go adds it at once, and counts it in the depth
//! meanwhile); and with no limit of workers (`MAX_CONCURRENT_RECONCILES = 0`) nothing ever
//! waits, so the depth stays 0.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use tokio::time::Instant;

/// The labels of every workqueue series but the depth: both the controller's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    name: &'static str,
    controller: &'static str,
}

impl QueueLabels {
    fn of(controller: &'static str) -> Self {
        Self {
            name: controller,
            controller,
        }
    }
}

/// The depth's labels: controller-runtime's priority queue adds `priority`, which its default
/// queue, like this one, leaves empty.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DepthLabels {
    name: &'static str,
    controller: &'static str,
    priority: &'static str,
}

impl DepthLabels {
    fn of(controller: &'static str) -> Self {
        Self {
            name: controller,
            controller,
            priority: "",
        }
    }
}

/// controller-runtime's buckets for both durations: 10 ns to 1,000 s, ten times wider each
/// (`prometheus.ExponentialBuckets(10e-9, 10, 12)`).
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

/// The workqueue metrics of every controller; clones share the same series.
#[derive(Clone, Debug)]
pub(crate) struct QueueMetrics {
    depth: Family<DepthLabels, Gauge>,
    adds: Family<QueueLabels, Counter>,
    queue_duration: Family<QueueLabels, Histogram, fn() -> Histogram>,
    work_duration: Family<QueueLabels, Histogram, fn() -> Histogram>,
    retries: Family<QueueLabels, Counter>,
    /// The reconciles under way.
    processing: Arc<Processing>,
}

impl Default for QueueMetrics {
    fn default() -> Self {
        Self {
            depth: Family::default(),
            adds: Family::default(),
            queue_duration: Family::new_with_constructor(duration_histogram),
            work_duration: Family::new_with_constructor(duration_histogram),
            retries: Family::default(),
            processing: Arc::default(),
        }
    }
}

/// When each reconcile under way got its worker, by controller and a number of its own.
#[derive(Debug, Default)]
struct Processing(Mutex<ProcessingState>);

#[derive(Debug, Default)]
struct ProcessingState {
    next: u64,
    started: HashMap<&'static str, HashMap<u64, Instant>>,
}

impl Processing {
    fn lock(&self) -> MutexGuard<'_, ProcessingState> {
        // Only start times: a panic while it was held leaves it usable.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl QueueMetrics {
    /// Registers the series in `registry`.
    pub(crate) fn register(&self, registry: &mut Registry) {
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue by workqueue and priority",
            self.depth.clone(),
        );
        // Counters get `_total` appended.
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            self.adds.clone(),
        );
        registry.register_with_unit(
            "workqueue_queue_duration",
            "How long in seconds an item stays in workqueue before being requested",
            Unit::Seconds,
            self.queue_duration.clone(),
        );
        registry.register_with_unit(
            "workqueue_work_duration",
            "How long in seconds processing an item from workqueue takes.",
            Unit::Seconds,
            self.work_duration.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of items added to the workqueue with a non-zero delay \
             (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
            self.retries.clone(),
        );
        registry.register_collector(Box::new(Unfinished(Arc::clone(&self.processing))));
    }

    /// Starts the series of `controller` at zero.
    pub(crate) fn init(&self, controller: &'static str) {
        let labels = QueueLabels::of(controller);
        self.depth.get_or_create_owned(&DepthLabels::of(controller));
        self.adds.get_or_create_owned(&labels);
        self.queue_duration.get_or_create_owned(&labels);
        self.work_duration.get_or_create_owned(&labels);
        self.retries.get_or_create_owned(&labels);
        self.processing
            .lock()
            .started
            .entry(controller)
            .or_default();
    }

    /// An object of `controller` is due: it enters the queue until the guard is
    /// [`started`](Queued::start) or dropped.
    pub(crate) fn add(&self, controller: &'static str) -> Queued {
        self.adds.get_or_create(&QueueLabels::of(controller)).inc();
        let depth = self.depth.get_or_create_owned(&DepthLabels::of(controller));
        depth.inc();
        Queued {
            metrics: self.clone(),
            controller,
            depth,
            since: Instant::now(),
        }
    }

    /// A reconcile of `controller` asked to come again after a delay.
    pub(crate) fn retry(&self, controller: &'static str) {
        self.retries
            .get_or_create(&QueueLabels::of(controller))
            .inc();
    }
}

/// An object in the queue: out of it (the depth down) when dropped.
pub(crate) struct Queued {
    metrics: QueueMetrics,
    controller: &'static str,
    depth: Gauge,
    since: Instant,
}

impl Queued {
    /// It got a worker: out of the queue, into the work under way until the guard drops.
    pub(crate) fn start(self) -> InProgress {
        let now = Instant::now();
        let labels = QueueLabels::of(self.controller);
        self.metrics
            .queue_duration
            .get_or_create(&labels)
            .observe(now.duration_since(self.since).as_secs_f64());
        let id = {
            let mut state = self.metrics.processing.lock();
            let id = state.next;
            state.next = state.next.wrapping_add(1);
            state
                .started
                .entry(self.controller)
                .or_default()
                .insert(id, now);
            id
        };
        InProgress {
            metrics: self.metrics.clone(),
            controller: self.controller,
            id,
            since: now,
        }
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        self.depth.dec();
    }
}

/// A reconcile holding its worker: its work duration is observed when it is dropped, however
/// the reconcile ends.
pub(crate) struct InProgress {
    metrics: QueueMetrics,
    controller: &'static str,
    id: u64,
    since: Instant,
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.metrics
            .work_duration
            .get_or_create(&QueueLabels::of(self.controller))
            .observe(self.since.elapsed().as_secs_f64());
        let mut state = self.metrics.processing.lock();
        if let Some(started) = state.started.get_mut(self.controller) {
            started.remove(&self.id);
        }
    }
}

/// `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds`,
/// read from the reconciles under way at each scrape.
#[derive(Debug)]
struct Unfinished(Arc<Processing>);

impl Collector for Unfinished {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let now = Instant::now();
        // (controller, seconds of work under way in all, the longest)
        let figures: Vec<(&'static str, f64, f64)> = {
            let state = self.0.lock();
            let mut figures: Vec<_> = state
                .started
                .iter()
                .map(|(controller, started)| {
                    let ages = started
                        .values()
                        .map(|s| now.duration_since(*s).as_secs_f64());
                    let (total, longest) = ages
                        .fold((0.0, 0.0), |(total, longest): (f64, f64), age| {
                            (total + age, longest.max(age))
                        });
                    (*controller, total, longest)
                })
                .collect();
            figures.sort_by_key(|(controller, ..)| *controller);
            figures
        };
        let series = [
            (
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been \
                 observed by work_duration. Large values indicate stuck threads. One can deduce \
                 the number of stuck threads by observing the rate at which this increases.",
                figures
                    .iter()
                    .map(|(c, total, _)| (*c, *total))
                    .collect::<Vec<_>>(),
            ),
            (
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running.",
                figures
                    .iter()
                    .map(|(c, _, longest)| (*c, *longest))
                    .collect(),
            ),
        ];
        for (name, help, values) in series {
            let gauge_type = ConstGauge::new(0.0).metric_type();
            let mut family = encoder.encode_descriptor(name, help, None, gauge_type)?;
            for (controller, value) in values {
                let labels = QueueLabels::of(controller);
                ConstGauge::new(value).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn scrape(metrics: &QueueMetrics) -> String {
        let mut registry = Registry::default();
        metrics.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)
            .expect("encoded");
        text
    }

    /// The value of the series `series` (name and labels as scraped).
    fn value(text: &str, series: &str) -> f64 {
        let line = text
            .lines()
            .find(|line| {
                line.strip_prefix(series)
                    .is_some_and(|v| v.starts_with(' '))
            })
            .unwrap_or_else(|| panic!("no {series} in\n{text}"));
        line.rsplit(' ')
            .next()
            .and_then(|v| v.parse().ok())
            .expect("a number")
    }

    const LABELS: &str = r#"{name="widget",controller="widget"}"#;

    /// controller-runtime's names, types, labels and buckets, each series there from the
    /// start at zero.
    #[test]
    fn the_series_are_controller_runtimes() {
        let metrics = QueueMetrics::default();
        metrics.init("widget");
        let text = scrape(&metrics);
        for (name, kind) in [
            ("workqueue_depth", "gauge"),
            ("workqueue_adds_total", "counter"),
            ("workqueue_queue_duration_seconds", "histogram"),
            ("workqueue_work_duration_seconds", "histogram"),
            ("workqueue_unfinished_work_seconds", "gauge"),
            ("workqueue_longest_running_processor_seconds", "gauge"),
            ("workqueue_retries_total", "counter"),
        ] {
            assert!(
                text.contains(&format!("# TYPE {name} {kind}\n")),
                "no {kind} {name} in\n{text}"
            );
        }
        let depth = r#"workqueue_depth{name="widget",controller="widget",priority=""}"#;
        assert_eq!(value(&text, depth), 0.0);
        for series in [
            "workqueue_adds_total",
            "workqueue_retries_total",
            "workqueue_unfinished_work_seconds",
            "workqueue_longest_running_processor_seconds",
            "workqueue_queue_duration_seconds_count",
        ] {
            assert_eq!(value(&text, &format!("{series}{LABELS}")), 0.0, "{series}");
        }
        // 1e-8 to 1e3, then +Inf: 13 buckets.
        let buckets: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("workqueue_work_duration_seconds_bucket{"))
            .collect();
        assert_eq!(buckets.len(), 13, "{buckets:#?}");
        // Written as client_golang writes them.
        assert!(buckets[0].contains(r#"le="1e-08""#), "{}", buckets[0]);
        assert!(buckets[11].contains(r#"le="1000""#), "{}", buckets[11]);
    }

    /// An object is in the queue from its add until it gets a worker, then in the work under
    /// way until its reconcile ends: each stretch is timed.
    #[tokio::test(start_paused = true)]
    async fn queue_and_work_are_timed() {
        let metrics = QueueMetrics::default();
        metrics.init("widget");
        let first = metrics.add("widget");
        let second = metrics.add("widget");
        let text = scrape(&metrics);
        assert_eq!(value(&text, &format!("workqueue_adds_total{LABELS}")), 2.0);
        let depth = r#"workqueue_depth{name="widget",controller="widget",priority=""}"#;
        assert_eq!(value(&text, depth), 2.0);

        tokio::time::advance(Duration::from_secs(2)).await;
        let first = first.start();
        tokio::time::advance(Duration::from_secs(3)).await;
        let second = second.start();
        tokio::time::advance(Duration::from_secs(1)).await;
        let text = scrape(&metrics);
        assert_eq!(value(&text, depth), 0.0);
        let sum = value(
            &text,
            &format!("workqueue_queue_duration_seconds_sum{LABELS}"),
        );
        assert!((sum - 7.0).abs() < 1e-6, "waited 2 s and 5 s: {sum}");
        // Under way: 4 s and 1 s.
        let unfinished = value(&text, &format!("workqueue_unfinished_work_seconds{LABELS}"));
        assert!((unfinished - 5.0).abs() < 1e-6, "{unfinished}");
        let longest = value(
            &text,
            &format!("workqueue_longest_running_processor_seconds{LABELS}"),
        );
        assert!((longest - 4.0).abs() < 1e-6, "{longest}");

        drop(first);
        drop(second);
        let text = scrape(&metrics);
        let work = value(
            &text,
            &format!("workqueue_work_duration_seconds_sum{LABELS}"),
        );
        assert!((work - 5.0).abs() < 1e-6, "{work}");
        let count = value(
            &text,
            &format!("workqueue_work_duration_seconds_count{LABELS}"),
        );
        assert_eq!(count, 2.0);
        let unfinished = value(&text, &format!("workqueue_unfinished_work_seconds{LABELS}"));
        assert_eq!(unfinished, 0.0);
    }

    /// An object that leaves the queue without a worker (the controller stops) leaves the
    /// depth; no queue duration is observed for it.
    #[test]
    fn an_object_dropped_from_the_queue_leaves_the_depth() {
        let metrics = QueueMetrics::default();
        metrics.init("widget");
        drop(metrics.add("widget"));
        let text = scrape(&metrics);
        let depth = r#"workqueue_depth{name="widget",controller="widget",priority=""}"#;
        assert_eq!(value(&text, depth), 0.0);
        let count = format!("workqueue_queue_duration_seconds_count{LABELS}");
        assert_eq!(value(&text, &count), 0.0);
    }
}

/// Against a running manager on a real kube-apiserver (envtest): /metrics as a scrape sees it.
#[cfg(test)]
mod envtests {
    use std::sync::Arc;
    use std::time::Duration;

    use k8s_openapi::api::rbac::v1::PolicyRule;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::PostParams;
    use kube::core::crd::MergeError;
    use kube::{Api, CustomResourceExt};
    use serde::{Deserialize, Serialize};
    use tokio::sync::Semaphore;
    use tokio::time::{sleep, timeout};

    use crate::controller::Action;
    use crate::e2e::{free_local_address, http_get};
    use crate::envtest::webhooks::install_crds;
    use crate::envtest::{ControlPlane, NAMESPACE, step};
    use crate::manager::{CancellationToken, Extensions, Flags, manage_until};
    use crate::metrics::Metrics;
    use crate::{Context, Operator, Reconciler, register};
    use clap::Parser;

    #[derive(kube::CustomResource, schemars::JsonSchema, Serialize, Deserialize, Clone, Debug)]
    #[kube(group = "test.my.domain", version = "v1", kind = "Chore", namespaced)]
    struct ChoreSpec {
        size: i32,
    }

    /// The reconciles may end only as the test lets them: one permit each.
    static MAY_END: Semaphore = Semaphore::const_new(0);

    /// One worker (the default), each reconcile held until the test lets it end, then
    /// requeued after an hour.
    struct Chores;

    impl Reconciler for Chores {
        type Resource = Chore;
        type Error = kube::Error;
        const NAME: &'static str = "chores";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(_obj: Arc<Chore>, _ctx: Arc<Context>) -> Result<Action, kube::Error> {
            if let Ok(permit) = MAY_END.acquire().await {
                permit.forget();
            }
            Ok(Action::requeue(Duration::from_secs(3600)))
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            Vec::new()
        }
    }

    fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
        Ok(vec![Chore::crd()])
    }

    static OPERATOR: Operator = Operator::new("chores")
        .controllers(&[register::<Chores>()])
        .crds(crds);

    /// The value of `series` (name and labels) in `text`, if there is one.
    fn value(text: &str, series: &str) -> Option<f64> {
        let line = text.lines().find(|line| {
            line.strip_prefix(series)
                .is_some_and(|value| value.starts_with(' '))
        })?;
        line.rsplit(' ').next()?.parse().ok()
    }

    /// Three Chores created at once, one worker: one is reconciled, two wait in the queue; the
    /// reconcile under way counts as unfinished work; once they are let go, each was added,
    /// waited and worked once, and its requeue after an hour is a retry.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_running_managers_workqueue_metrics() {
        crate::envtest::init_logging();
        let plane = ControlPlane::start().await.expect("a control plane");
        let client = plane.client().await.expect("a client");
        install_crds(&client, &OPERATOR, None, &plane.ca().cert)
            .await
            .expect("the CRD");
        let metrics_address = free_local_address();
        let flags = Flags::parse_from([
            "manager".to_owned(),
            format!("--metrics-bind-address={metrics_address}"),
            "--metrics-secure=false".to_owned(),
            "--health-probe-bind-address=0".to_owned(),
            "--webhook-bind-address=0".to_owned(),
        ]);
        let shutdown = CancellationToken::new();
        let manager = manage_until(
            &OPERATOR,
            flags,
            client.clone(),
            Metrics::default(),
            Extensions::default(),
            shutdown.clone(),
        );
        let manager = tokio::spawn(manager);
        let scrape = async || http_get(metrics_address, "/metrics").await;
        let labels = r#"{name="chores",controller="chores"}"#;
        let depth = r#"workqueue_depth{name="chores",controller="chores",priority=""}"#;
        let series = |name: &str| format!("{name}{labels}");

        step("three Chores at once: one reconciled, two in the queue");
        let chores: Api<Chore> = Api::namespaced(client, NAMESPACE);
        for name in ["a", "b", "c"] {
            let chore = Chore::new(name, ChoreSpec { size: 1 });
            chores
                .create(&PostParams::default(), &chore)
                .await
                .expect("a Chore");
        }
        let queued = async {
            loop {
                if let Ok(text) = scrape().await
                    && value(&text, depth) == Some(2.0)
                {
                    return text;
                }
                sleep(Duration::from_millis(100)).await;
            }
        };
        let text = timeout(Duration::from_secs(60), queued).await;
        let text = text.expect("two Chores waiting for the worker");
        assert_eq!(value(&text, &series("workqueue_adds_total")), Some(3.0));
        // The first one's wait, the others' still going on.
        let waited = series("workqueue_queue_duration_seconds_count");
        assert_eq!(value(&text, &waited), Some(1.0));
        let active = r#"controller_runtime_active_workers{controller="chores"}"#;
        assert_eq!(value(&text, active), Some(1.0));
        sleep(Duration::from_millis(500)).await;
        let text = scrape().await.expect("a scrape");
        let unfinished = value(&text, &series("workqueue_unfinished_work_seconds"));
        let longest = value(
            &text,
            &series("workqueue_longest_running_processor_seconds"),
        );
        let (unfinished, longest) = (unfinished.expect("unfinished"), longest.expect("longest"));
        assert!(longest >= 0.5, "the reconcile under way: {longest} s");
        // One reconcile under way: all the unfinished work is its own.
        assert!(
            (unfinished - longest).abs() < 0.1,
            "{unfinished} and {longest}"
        );

        step("let them end: each added, waited and worked once, and requeued (a retry)");
        MAY_END.add_permits(3);
        let drained = async {
            loop {
                if let Ok(text) = scrape().await
                    && value(&text, &series("workqueue_work_duration_seconds_count")) == Some(3.0)
                {
                    return text;
                }
                sleep(Duration::from_millis(100)).await;
            }
        };
        let text = timeout(Duration::from_secs(60), drained).await;
        let text = text.expect("three reconciles done");
        assert_eq!(value(&text, depth), Some(0.0));
        assert_eq!(value(&text, &series("workqueue_adds_total")), Some(3.0));
        assert_eq!(value(&text, &waited), Some(3.0));
        assert_eq!(value(&text, &series("workqueue_retries_total")), Some(3.0));
        let unfinished = value(&text, &series("workqueue_unfinished_work_seconds"));
        assert_eq!(unfinished, Some(0.0));
        // The last one waited for the two reconciles before it, held 0.5 s and more.
        let waited_sum = value(&text, &series("workqueue_queue_duration_seconds_sum"));
        assert!(waited_sum.expect("a sum") >= 1.0, "{waited_sum:?}");
        let requeued =
            r#"controller_runtime_reconcile_total{controller="chores",result="requeue_after"}"#;
        assert_eq!(value(&text, requeued), Some(3.0));

        shutdown.cancel();
        let stopped = timeout(Duration::from_secs(30), manager).await;
        let result = stopped.expect("the manager to stop").expect("its task");
        result.expect("the manager stops without an error");
    }
}
