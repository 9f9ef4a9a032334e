//! The operator's Prometheus metrics, served on `/metrics`.
//!
//! Names and labels are controller-runtime's, so that the dashboards and alerts written for
//! kubebuilder operators work unchanged:
//!
//! - `controller_runtime_reconcile_total{controller,result}` (`success`, `requeue_after`,
//!   `error`; kube-runtime has no immediate requeue, so no `requeue`),
//!   `controller_runtime_reconcile_errors_total{controller}`,
//!   `controller_runtime_reconcile_panics_total{controller}`,
//!   `controller_runtime_reconcile_time_seconds{controller}` (controller-runtime's buckets),
//!   `controller_runtime_active_workers{controller}`,
//!   `controller_runtime_max_concurrent_reconciles{controller}` (1 unless the reconciler sets
//!   it; 0: no limit);
//! - `workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
//!   `workqueue_work_duration_seconds`, `workqueue_unfinished_work_seconds`,
//!   `workqueue_longest_running_processor_seconds`, `workqueue_retries_total`, all
//!   `{name,controller}` (see `queue_metrics`: what the queue is here);
//! - `rest_client_requests_total{code,method,host}` (see `client_metrics`);
//! - `process_*` (see `process_metrics`).

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

use crate::client_metrics::RequestCounters;
use crate::process_metrics::ProcessMetrics;
use crate::queue_metrics::QueueMetrics;

/// controller-runtime's buckets for reconcile times, in seconds.
const RECONCILE_TIME_BUCKETS: [f64; 23] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5,
];

/// The metrics, cheap to clone: clones share the same series.
#[derive(Clone, Debug)]
pub struct Metrics {
    reconciles: Family<ResultLabels, Counter>,
    errors: Family<ControllerLabels, Counter>,
    panics: Family<ControllerLabels, Counter>,
    reconcile_time: Family<ControllerLabels, Histogram>,
    active_workers: Family<ControllerLabels, Gauge>,
    max_concurrent: Family<ControllerLabels, Gauge>,
    /// The controllers' queues in front of their workers.
    pub(crate) queue: QueueMetrics,
    /// The API requests of the operator's client.
    pub(crate) requests: RequestCounters,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: &'static str,
    result: &'static str,
}

/// How a reconcile ended, as controller-runtime's `result` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Done; reconciled again on the next change.
    Success,
    /// Done; reconciled again after a delay.
    RequeueAfter,
    /// Failed (or panicked); retried after a delay.
    Error,
}

impl Outcome {
    fn label(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::RequeueAfter => "requeue_after",
            Self::Error => "error",
        }
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            reconciles: Family::default(),
            errors: Family::default(),
            panics: Family::default(),
            reconcile_time: Family::new_with_constructor(|| Histogram::new(RECONCILE_TIME_BUCKETS)),
            active_workers: Family::default(),
            max_concurrent: Family::default(),
            queue: QueueMetrics::default(),
            requests: RequestCounters::default(),
        }
    }
}

impl Metrics {
    /// How many reconciles of `controller` have finished, whatever their outcome.
    pub fn reconciles_of(&self, controller: &'static str) -> u64 {
        [Outcome::Success, Outcome::RequeueAfter, Outcome::Error]
            .into_iter()
            .map(|outcome| {
                let labels = ResultLabels {
                    controller,
                    result: outcome.label(),
                };
                self.reconciles.get_or_create(&labels).get()
            })
            .sum()
    }

    /// How many POST, PUT, PATCH and DELETE requests were made.
    pub fn writes(&self) -> u64 {
        self.requests_of(&["POST", "PUT", "PATCH", "DELETE"])
    }

    /// How many GET requests that read were made: gets and lists, not the watches the
    /// caches open (and reopen when one ends), which come when they come.
    pub fn reads(&self) -> u64 {
        let gets = self.requests_of(&["GET"]);
        gets.saturating_sub(self.requests.watches.get())
    }

    /// How many requests with one of `methods` were made, read as `/metrics` shows them (the
    /// counters' labels are not listed otherwise).
    fn requests_of(&self, methods: &[&str]) -> u64 {
        let mut registry = Registry::default();
        registry.register("requests", "", self.requests.by_code.clone());
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &registry).is_err() {
            return 0;
        }
        let is_one = |line: &str| {
            methods
                .iter()
                .any(|method| line.contains(&format!("method=\"{method}\"")))
        };
        text.lines()
            .filter(|line| line.starts_with("requests_total{") && is_one(line))
            .filter_map(|line| line.rsplit(' ').next()?.parse::<u64>().ok())
            .sum()
    }
}

impl Metrics {
    /// The registry `/metrics` serves: these metrics and the process's.
    pub(crate) fn registry(&self) -> Registry {
        let mut registry = Registry::default();
        // Counters get `_total` appended.
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            self.reconciles.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            self.errors.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            self.panics.clone(),
        );
        registry.register_with_unit(
            "controller_runtime_reconcile_time",
            "Length of time per reconciliation per controller",
            Unit::Seconds,
            self.reconcile_time.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            self.active_workers.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller (0: no limit)",
            self.max_concurrent.clone(),
        );
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            self.requests.by_code.clone(),
        );
        self.queue.register(&mut registry);
        registry.register_collector(Box::new(ProcessMetrics::new()));
        registry
    }

    /// Starts the series of `controller` at zero, so that rates and alerts work from the start.
    pub(crate) fn init_controller(&self, controller: &'static str, max_concurrent: u16) {
        // Getting a series creates it.
        for outcome in [Outcome::Success, Outcome::RequeueAfter, Outcome::Error] {
            let result = outcome.label();
            self.reconciles
                .get_or_create_owned(&ResultLabels { controller, result });
        }
        let labels = ControllerLabels { controller };
        self.errors.get_or_create_owned(&labels);
        self.panics.get_or_create_owned(&labels);
        self.reconcile_time.get_or_create_owned(&labels);
        self.active_workers.get_or_create_owned(&labels);
        self.max_concurrent
            .get_or_create(&labels)
            .set(i64::from(max_concurrent));
        self.queue.init(controller);
    }

    /// A reconcile of `controller` starts: counted as an active worker until the guard drops.
    pub(crate) fn worker(&self, controller: &'static str) -> ActiveWorker {
        let gauge = self
            .active_workers
            .get_or_create_owned(&ControllerLabels { controller });
        gauge.inc();
        ActiveWorker(gauge)
    }

    /// Records one reconciliation of `controller` that took `duration`.
    pub(crate) fn observe(&self, controller: &'static str, duration: Duration, outcome: Outcome) {
        let result = outcome.label();
        self.reconciles
            .get_or_create(&ResultLabels { controller, result })
            .inc();
        let labels = ControllerLabels { controller };
        if outcome == Outcome::Error {
            self.errors.get_or_create(&labels).inc();
        }
        self.reconcile_time
            .get_or_create(&labels)
            .observe(duration.as_secs_f64());
    }

    /// Records a reconcile of `controller` that panicked.
    pub(crate) fn panicked(&self, controller: &'static str) {
        self.panics
            .get_or_create(&ControllerLabels { controller })
            .inc();
    }
}

/// One reconcile under way: the active-workers gauge goes down when it is dropped, however
/// the reconcile ends.
pub(crate) struct ActiveWorker(Gauge);

impl Drop for ActiveWorker {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::encoding::prometheus_text::encode;

    use super::*;

    fn text(metrics: &Metrics) -> String {
        let mut text = String::new();
        encode(&mut text, &metrics.registry()).expect("encode");
        text
    }

    #[test]
    fn reconciles_are_counted_per_controller_and_result() {
        let metrics = Metrics::default();
        metrics.init_controller("widget", 0);
        metrics.observe("widget", Duration::from_millis(20), Outcome::RequeueAfter);
        metrics.observe("widget", Duration::from_millis(20), Outcome::Error);
        metrics.observe("widget", Duration::from_millis(20), Outcome::Error);
        metrics.panicked("widget");
        let worker = metrics.worker("widget");

        let scraped = text(&metrics);
        for line in [
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"success\"} 0\n",
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"requeue_after\"} 1\n",
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"error\"} 2\n",
            "controller_runtime_reconcile_errors_total{controller=\"widget\"} 2\n",
            "controller_runtime_reconcile_panics_total{controller=\"widget\"} 1\n",
            "controller_runtime_reconcile_time_seconds_count{controller=\"widget\"} 3\n",
            "controller_runtime_active_workers{controller=\"widget\"} 1\n",
            "controller_runtime_max_concurrent_reconciles{controller=\"widget\"} 0\n",
        ] {
            assert!(scraped.contains(line), "no {line} in\n{scraped}");
        }
        drop(worker);
        assert!(
            text(&metrics).contains("controller_runtime_active_workers{controller=\"widget\"} 0\n")
        );
    }

    #[test]
    fn the_process_is_described_as_client_libraries_describe_it() {
        let text = text(&Metrics::default());
        for name in [
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_open_fds ",
            "process_max_fds ",
            "process_start_time_seconds ",
        ] {
            assert!(text.contains(name), "no {name} in\n{text}");
        }
    }
}
