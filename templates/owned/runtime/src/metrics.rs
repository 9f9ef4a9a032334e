//! Prometheus metrics of the controllers, served on `/metrics`.
//!
//! The names and labels are controller-runtime's, so that dashboards and alerts written for
//! kubebuilder operators work unchanged.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// Reconcile metrics, cheap to clone: clones share the same counters.
#[derive(Clone, Debug)]
pub(crate) struct Metrics {
    reconciles: Family<ResultLabels, Counter>,
    errors: Family<ControllerLabels, Counter>,
    reconcile_time: Family<ControllerLabels, Histogram>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: &'static str,
    /// `success`, `requeue_after` or `error`, as in controller-runtime.
    result: &'static str,
}

/// How a reconcile ended, as controller-runtime's `result` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Done; reconciled again on the next change.
    Success,
    /// Done; reconciled again after a delay.
    RequeueAfter,
    /// Failed; retried after a delay.
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
            // 5 ms to ~40 s: reconciles wait on the API server, so they take milliseconds to
            // seconds.
            reconcile_time: Family::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.005, 2.0, 14))
            }),
        }
    }
}

impl Metrics {
    /// Registers the metrics so that they are served on `/metrics`.
    pub(crate) fn register(&self, registry: &mut Registry) {
        registry.register(
            // The counter type appends `_total`.
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            self.reconciles.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            self.errors.clone(),
        );
        registry.register_with_unit(
            "controller_runtime_reconcile_time",
            "Length of time per reconciliation per controller",
            Unit::Seconds,
            self.reconcile_time.clone(),
        );
    }

    /// Starts the series of `controller` at zero, so that rates and alerts work from the start.
    pub(crate) fn init_controller(&self, controller: &'static str) {
        // Getting a series creates it.
        for outcome in [Outcome::Success, Outcome::RequeueAfter, Outcome::Error] {
            let result = outcome.label();
            self.reconciles
                .get_or_create_owned(&ResultLabels { controller, result });
        }
        self.errors
            .get_or_create_owned(&ControllerLabels { controller });
        self.reconcile_time
            .get_or_create_owned(&ControllerLabels { controller });
    }

    /// Records one reconciliation of `controller` that took `duration`.
    pub(crate) fn observe(&self, controller: &'static str, duration: Duration, outcome: Outcome) {
        let result = outcome.label();
        self.reconciles
            .get_or_create(&ResultLabels { controller, result })
            .inc();
        if outcome == Outcome::Error {
            self.errors
                .get_or_create(&ControllerLabels { controller })
                .inc();
        }
        self.reconcile_time
            .get_or_create(&ControllerLabels { controller })
            .observe(duration.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::encoding::prometheus_text::encode;

    use super::*;

    #[test]
    fn reconciles_are_counted_per_controller_and_result() {
        let mut registry = Registry::default();
        let metrics = Metrics::default();
        metrics.register(&mut registry);
        metrics.init_controller("widget");

        metrics.observe("widget", Duration::from_millis(20), Outcome::RequeueAfter);
        metrics.observe("widget", Duration::from_millis(20), Outcome::Error);
        metrics.observe("widget", Duration::from_millis(20), Outcome::Error);

        let mut text = String::new();
        encode(&mut text, &registry).expect("encode");
        for line in [
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"success\"} 0\n",
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"requeue_after\"} 1\n",
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"error\"} 2\n",
            "controller_runtime_reconcile_errors_total{controller=\"widget\"} 2\n",
            "controller_runtime_reconcile_time_seconds_count{controller=\"widget\"} 3\n",
        ] {
            assert!(text.contains(line), "no {line} in\n{text}");
        }
    }
}
