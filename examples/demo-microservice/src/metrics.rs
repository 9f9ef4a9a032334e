// Copyright 2026 The demo-microservice Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! Prometheus metrics of the manager, served on `/metrics`.
//!
//! The names and labels are those of controller-runtime, so that dashboards and alerts written
//! for kubebuilder operators work unchanged.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// Reconcile metrics, cheap to clone: clones share the same counters.
#[derive(Clone, Debug)]
pub struct Metrics {
    reconciles: Family<ResultLabels, Counter>,
    reconcile_time: Family<ControllerLabels, Histogram>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: &'static str,
    /// `success` or `error`.
    result: &'static str,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            reconciles: Family::default(),
            // 5 ms to ~40 s: reconciles wait on the API server, so they take milliseconds to seconds.
            reconcile_time: Family::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.005, 2.0, 14))
            }),
        }
    }
}

impl Metrics {
    /// Registers the metrics so that they are served on `/metrics`.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            // The counter type appends `_total`.
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller and result",
            self.reconciles.clone(),
        );
        registry.register_with_unit(
            "controller_runtime_reconcile_time",
            "Length of time per reconciliation per controller",
            Unit::Seconds,
            self.reconcile_time.clone(),
        );
    }

    /// Starts the series of `controller` at zero, so that rates and alerts work from the start.
    pub fn init_controller(&self, controller: &'static str) {
        // Getting a series creates it.
        for result in ["success", "error"] {
            self.reconciles
                .get_or_create_owned(&ResultLabels { controller, result });
        }
        self.reconcile_time
            .get_or_create_owned(&ControllerLabels { controller });
    }

    /// Records one reconciliation of `controller` that took `duration`.
    pub fn observe_reconcile(&self, controller: &'static str, duration: Duration, success: bool) {
        let result = if success { "success" } else { "error" };
        self.reconciles
            .get_or_create(&ResultLabels { controller, result })
            .inc();
        self.reconcile_time
            .get_or_create(&ControllerLabels { controller })
            .observe(duration.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::encoding::prometheus_text::encode;

    #[test]
    fn reconciles_are_counted_per_controller_and_result() {
        let mut registry = Registry::default();
        let metrics = Metrics::default();
        metrics.register(&mut registry);

        metrics.observe_reconcile("widget", Duration::from_millis(20), true);
        metrics.observe_reconcile("widget", Duration::from_millis(20), false);
        metrics.observe_reconcile("widget", Duration::from_millis(20), false);

        let mut text = String::new();
        encode(&mut text, &registry).expect("encode");
        assert!(text.contains(
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"success\"} 1\n"
        ));
        assert!(text.contains(
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"error\"} 2\n"
        ));
        assert!(text.contains(
            "controller_runtime_reconcile_time_seconds_count{controller=\"widget\"} 3\n"
        ));
    }
}
