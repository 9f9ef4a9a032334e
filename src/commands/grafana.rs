//! kubebuilder's `grafana/v1-alpha` plugin (`rbuilder edit --plugins grafana/v1-alpha`):
//! Grafana dashboards in `grafana/` for the metrics the runtime exports (controller-runtime's
//! names), and one for the metrics the user lists in `grafana/custom-metrics/config.yaml`.
//!
//! The dashboards are rewritten each time the plugin runs (they are generated); the config is
//! the user's, written once.

use anyhow::{Result, bail};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::project::yaml_error;
use crate::scaffold::{Additions, Entry, IfExists, Order, Plan, Templates};

/// The plugin's name on the command line, as kubebuilder spells it.
pub const PLUGIN: &str = "grafana/v1-alpha";

/// The user's list of custom metrics.
pub const CONFIG: &str = "grafana/custom-metrics/config.yaml";
const CUSTOM_DASHBOARD: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";

/// The dashboards, and the custom-metrics config if the project has none yet: `config` if
/// given (a replayed project's), else an empty one.
pub fn plan(plan: &mut Plan, ctx: &tera::Context, config: Option<String>) -> Result<()> {
    let templates = Templates::load(&["grafana/"])?;
    // The dashboards are generated, written again each time; the config is the user's.
    let mut add = Additions::new(Order::EachFileWithItsInserts);
    for name in templates.names("grafana/") {
        add.add(match (&config, name.as_str()) {
            (Some(config), CONFIG) => Entry::text(CONFIG, config.clone(), IfExists::Keep),
            (None, CONFIG) => Entry::template(CONFIG, CONFIG, IfExists::Keep),
            _ => Entry::template(name.clone(), name, IfExists::Rewrite),
        });
    }
    add.plan(plan, &templates, ctx, false)?;
    // The custom metrics' dashboard is made from the config as planned, the user's if kept.
    let config = plan.read(CONFIG)?.unwrap_or_default();
    let metrics = custom_metrics(&config)?;
    if !metrics.is_empty() {
        let dashboard = custom_dashboard(&metrics, ctx);
        let text = format!("{}\n", serde_json::to_string_pretty(&dashboard)?);
        let mut add = Additions::new(Order::EachFileWithItsInserts);
        add.add(Entry::text(CUSTOM_DASHBOARD, text, IfExists::Rewrite));
        add.plan(plan, &templates, ctx, false)?;
    }
    Ok(())
}

/// One metric of `grafana/custom-metrics/config.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CustomMetric {
    metric: String,
    #[serde(rename = "type")]
    kind: MetricType,
    expr: Option<String>,
    unit: Option<String>,
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum MetricType {
    Counter,
    Gauge,
    Histogram,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Config {
    /// kubebuilder's own file leaves the list empty, every example commented out: `null`.
    #[serde(default)]
    custom_metrics: Option<Vec<CustomMetric>>,
}

fn custom_metrics(text: &str) -> Result<Vec<CustomMetric>> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let config: Config = serde_saphyr::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "{CONFIG} is not valid ({}): each entry needs `metric` and `type` (counter, gauge \
             or histogram), and may have `expr` and `unit`",
            yaml_error(&e)
        )
    })?;
    let metrics = config.custom_metrics.unwrap_or_default();
    if let Some(m) = metrics.iter().find(|m| m.metric.trim().is_empty()) {
        bail!("{CONFIG}: a custom metric has an empty name ({m:?}); give each one its metric name");
    }
    Ok(metrics)
}

/// A dashboard with one panel per custom metric.
fn custom_dashboard(metrics: &[CustomMetric], ctx: &tera::Context) -> Value {
    let project = ctx
        .get("project_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let panels: Vec<Value> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let name = &m.metric;
            let expr = m.expr.clone().unwrap_or_else(|| match m.kind {
                MetricType::Counter => format!("sum(rate({name}{{job=\"$job\"}}[5m]))"),
                MetricType::Gauge => format!("{name}{{job=\"$job\"}}"),
                MetricType::Histogram => format!(
                    "histogram_quantile(0.9, sum by (le) (rate({name}_bucket{{job=\"$job\"}}[5m])))"
                ),
            });
            json!({
                "id": i + 1,
                "type": "timeseries",
                "title": name,
                "datasource": {"type": "prometheus", "uid": "${datasource}"},
                "gridPos": {"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
                "fieldConfig": {"defaults": {"unit": m.unit.clone().unwrap_or_else(|| "none".into())}, "overrides": []},
                "targets": [{"refId": "A", "expr": expr}],
            })
        })
        .collect();
    json!({
        "uid": format!("{project}-custom"),
        "title": format!("{project}: custom metrics"),
        "description": format!("The metrics listed in {CONFIG}."),
        "tags": ["rbuilder", project],
        "schemaVersion": 39,
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
            {"name": "job", "label": "Job", "type": "query",
             "datasource": {"type": "prometheus", "uid": "${datasource}"},
             "query": "label_values(controller_runtime_reconcile_total, job)", "refresh": 2},
        ]},
        "panels": panels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_metrics_are_read_and_checked() {
        let text = "customMetrics:\n- metric: things_total\n  type: counter\n- metric: size\n  \
                    type: gauge\n  unit: bytes\n";
        let metrics = custom_metrics(text).unwrap();
        let mut ctx = tera::Context::new();
        ctx.insert("project_name", "op");
        let dashboard = custom_dashboard(&metrics, &ctx);
        assert_eq!(
            dashboard["panels"][0]["targets"][0]["expr"],
            "sum(rate(things_total{job=\"$job\"}[5m]))"
        );
        assert_eq!(
            dashboard["panels"][1]["fieldConfig"]["defaults"]["unit"],
            "bytes"
        );
        assert!(custom_metrics("customMetrics: []\n").unwrap().is_empty());
        // As kubebuilder writes it, every example commented out.
        let kubebuilder = "---\ncustomMetrics:\n#  - metric: # Raw custom metric (required)\n";
        assert!(custom_metrics(kubebuilder).unwrap().is_empty());
        assert!(custom_metrics("customMetrics:\n- metric: x\n  type: summary\n").is_err());
    }
}
