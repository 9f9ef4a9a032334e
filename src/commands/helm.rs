//! kubebuilder's `helm/v2-alpha` plugin (`rbuilder edit --plugins helm/v2-alpha`): a Helm chart
//! in `dist/chart/`, laid out as kubebuilder lays out its own.
//!
//! rbuilder writes the chart's own files, which are the user's from then on: `Chart.yaml`,
//! `values.yaml` (its settings read from config/, as kubebuilder reads them from the rendered
//! manifests), `.helmignore`, `templates/_helpers.tpl` and `templates/NOTES.txt`; and the
//! Makefile's `helm` and `helm-*` targets. The other templates are made from what
//! `config/default` renders, which takes kustomize, so the project makes them itself: `make
//! helm` pipes `kubectl kustomize config/default` into the `manifests` binary's `helm` command
//! (the runtime's `helm` module), after every change to config/, as kubebuilder's users run the
//! plugin again after `make manifests`.

use anyhow::{Context as _, Result, bail};
use serde::Serialize;
use serde_json::Value;

use super::owned_files::Manifests;
use crate::project::Project;
use crate::scaffold::{Additions, Entry, IfExists, Order, Plan, Templates};

/// The plugin's name on the command line, as kubebuilder spells it.
pub const PLUGIN: &str = "helm/v2-alpha";
/// Where the chart goes, as kubebuilder's default `--output-dir dist` puts it.
pub const CHART: &str = "dist/chart";

use crate::scaffold::paths::{
    CARGO_TOML, DEFAULT_KUSTOMIZATION as DEFAULT, MANAGER, MANAGER_WEBHOOK_PATCH as WEBHOOK_PATCH,
};
const GITIGNORE: &str = ".gitignore";
const MAKEFILE: &str = "Makefile";
const README: &str = "README.md";
/// The README's section the Helm one goes before.
const README_NEXT: &str = "## Metrics, monitoring and network policy";

/// The manager's flags the chart sets from its own settings; values.yaml's `manager.args`
/// holds the others. (The same list as the runtime's `helm` module, which templates them.)
const CHART_FLAGS: &[&str] = &[
    "--metrics-bind-address",
    "--metrics-secure",
    "--health-probe-bind-address",
    "--webhook-bind-address",
    "--webhook-cert-path",
    "--metrics-cert-path",
];

/// Plans the chart's own files, the Makefile's targets and the .gitignore exception; `force`
/// rewrites the chart's files but `Chart.yaml` (its version is the user's). Returns what to do
/// next.
pub fn plan(
    plan: &mut Plan,
    project: &Project,
    ctx: &tera::Context,
    force: bool,
) -> Result<String> {
    let chart_yaml = format!("{CHART}/Chart.yaml");
    if !force && (project.plugins.helm.is_some() || plan.exists(&chart_yaml)) {
        bail!(
            "the Helm chart exists already ({CHART}): run `make helm` to make its templates \
             from config/ again, or pass --force to write values.yaml, .helmignore, \
             templates/_helpers.tpl and templates/NOTES.txt again (your changes to them are \
             lost; Chart.yaml is kept)"
        );
    }
    let mut ctx = ctx.clone();
    ctx.insert("helm", &settings(plan, project)?);
    ctx.insert("app_version", &app_version(plan)?);
    // A project made before the `manifests` binary had a package of its own runs it as a
    // binary of its own package.
    let manifests = Manifests::where_exists(|path| plan.exists(path));
    ctx.insert("manifests_in_src_bin", &(manifests == Manifests::InSrcBin));
    let templates = Templates::load(&["helm/", "inserts/helm_makefile", "inserts/readme_helm"])?;
    let chart_name = project.project_name.as_ref();
    let mut add = Additions::new(Order::EachFileWithItsInserts);
    for name in templates.names("helm/") {
        let path = format!("{CHART}/{}", name.trim_start_matches("helm/"));
        // The helpers are named after the chart, so that a parent chart's never clash with
        // them (Helm shares every define among a chart and its subcharts).
        let text = templates
            .render(&name, &ctx)?
            .replace("<chart>", chart_name);
        // Chart.yaml is kept once written: its version is the user's to bump.
        let if_exists = if path == chart_yaml {
            IfExists::Keep
        } else {
            IfExists::Refuse
        };
        add.add(Entry::text(path, text, if_exists));
    }
    // Forced: an existing chart was refused above unless --force was given.
    add.plan(plan, &templates, &ctx, true)?;
    let mut notes = Vec::new();
    if plan.exists(MAKEFILE) {
        let section = templates.render("inserts/helm_makefile", &ctx)?;
        plan.update(MAKEFILE, |makefile| Ok(with_section(makefile, &section)))?;
    } else {
        notes.push(format!(
            "There is no {MAKEFILE}: the helm targets were not added."
        ));
    }
    if plan.exists(README) {
        let section = templates.render("inserts/readme_helm.md", &ctx)?;
        plan.update(README, |readme| Ok(with_readme_section(readme, &section)))?;
    }
    if plan.exists(GITIGNORE) {
        plan.update(GITIGNORE, |text| Ok(with_chart_kept(text)))?;
    }
    Ok(format!(
        "The Helm chart is in {CHART}: Chart.yaml, values.yaml (its settings, read from config/), \
         _helpers.tpl and NOTES.txt are yours. Its other templates are made from config/default: \
         run `make helm` now, and again after each change to config/ (create api, create \
         webhook, make manifests). Then `make helm-deploy IMG=<registry>/{chart_name}:<tag>` \
         installs it in the cluster of your kubeconfig.{}",
        notes.iter().map(|n| format!("\n{n}")).collect::<String>()
    ))
}

/// Keeps the chart in step with a command that changed config/ (`create api`, `create
/// webhook`), in a project with the chart: with `webhooks` (the first ones made), values.yaml
/// turns them and cert-manager on where it says `enabled: false` as rbuilder wrote it; the
/// templates follow with `make helm`, which the returned line says.
pub fn follow(plan: &mut Plan, project: &Project, webhooks: bool) -> Result<Option<String>> {
    if project.plugins.helm.is_none() {
        return Ok(None);
    }
    let values = format!("{CHART}/values.yaml");
    let mut turned_on = Vec::new();
    if webhooks && plan.exists(&values) {
        plan.update(&values, |text| {
            let mut text = text.to_owned();
            for section in ["webhook", "certManager"] {
                if let Some(on) = switched_on(&text, section) {
                    text = on;
                    turned_on.push(format!("{section}.enabled"));
                }
            }
            Ok(text)
        })?;
    }
    let mut line = format!(
        "The Helm chart ({CHART}) follows config/ with `make helm`: run it to bring its \
         templates in step."
    );
    if !turned_on.is_empty() {
        line.push_str(&format!(
            " values.yaml now says {} true, for the chart to install the webhooks with \
             cert-manager's certificate.",
            turned_on.join(" and ")
        ));
    }
    Ok(Some(line))
}

/// `values` with `enabled: false` of the top-level `section` made true, if it says so.
fn switched_on(values: &str, section: &str) -> Option<String> {
    let lines: Vec<&str> = values.lines().collect();
    let start = lines.iter().position(|l| *l == format!("{section}:"))?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| !l.is_empty() && !l.starts_with([' ', '#']))
        .map_or(lines.len(), |offset| start + 1 + offset);
    let at = (start + 1..end).find(|&i| lines[i] == "  enabled: false")?;
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    out[at] = "  enabled: true".into();
    Some(out.join("\n") + "\n")
}

/// What values.yaml says at first: config/'s settings, as `config/default` renders them.
#[derive(Debug, Serialize)]
struct Settings {
    replicas: u64,
    image_repository: String,
    /// The manager's other arguments, each a YAML scalar.
    args: Vec<String>,
    health_port: u64,
    /// `podSecurityContext:`, `securityContext:` and `resources:` as YAML, indented for
    /// `manager:`.
    pod_security_context: String,
    security_context: String,
    resources: String,
    termination_grace_period: Option<u64>,
    rbac_namespaced: bool,
    metrics_enabled: bool,
    metrics_port: u64,
    metrics_secure: bool,
    cert_manager: bool,
    webhook: bool,
    webhook_port: u64,
    prometheus: bool,
    network_policy: bool,
}

/// The settings, read from the project's files as `plan` leaves them (init plans them).
fn settings(plan: &Plan, project: &Project) -> Result<Settings> {
    let read = |path: &str| plan.read(path).ok().flatten();
    let Some(manager_yaml) = read(MANAGER) else {
        bail!("{MANAGER} is missing: the chart's settings (values.yaml) are read from it");
    };
    let docs: Vec<Value> = serde_saphyr::from_multiple(&manager_yaml).map_err(|e| {
        anyhow::anyhow!(
            "{MANAGER} is not valid YAML ({}), so the chart's settings cannot be read from it",
            crate::project::yaml_error(&e)
        )
    })?;
    let Some(deployment) = docs.iter().find(|d| d["kind"] == "Deployment") else {
        bail!("{MANAGER} has no Deployment: the chart's settings are read from the manager's");
    };
    let pod = &deployment["spec"]["template"]["spec"];
    let containers = pod["containers"].as_array().cloned().unwrap_or_default();
    let container = containers
        .iter()
        .find(|c| c["name"] == "manager")
        .or(containers.first())
        .cloned()
        .unwrap_or(Value::Null);
    let args: Vec<String> = container["args"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let flag_value = |name: &str| {
        args.iter()
            .find_map(|a| a.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            .map(str::to_owned)
    };
    let port = |address: Option<String>, default: u64| {
        address
            .and_then(|a| a.rsplit_once(':').and_then(|(_, p)| p.parse().ok()))
            .unwrap_or(default)
    };
    let metrics_address = flag_value("--metrics-bind-address");

    let kustomization = read(DEFAULT).unwrap_or_default();
    let enabled = |resource: &str| {
        kustomization
            .lines()
            .any(|line| line.trim() == format!("- {resource}"))
    };
    let webhook_port = read(WEBHOOK_PATCH)
        .and_then(|patch| {
            patch.lines().find_map(|line| {
                line.split("--webhook-bind-address=")
                    .nth(1)
                    .and_then(|a| a.trim().rsplit_once(':'))
                    .and_then(|(_, p)| p.trim_matches(['"', '\'']).parse().ok())
            })
        })
        .unwrap_or(9443);

    Ok(Settings {
        replicas: deployment["spec"]["replicas"].as_u64().unwrap_or(1),
        image_repository: container["image"]
            .as_str()
            .map(|image| image.rsplit_once(':').map_or(image, |(repo, _)| repo))
            .unwrap_or("controller")
            .to_owned(),
        args: args
            .iter()
            .filter(|a| !CHART_FLAGS.contains(&a.split('=').next().unwrap_or_default()))
            .map(|a| scalar(&Value::String(a.clone())))
            .collect(),
        health_port: port(flag_value("--health-probe-bind-address"), 8081),
        pod_security_context: block("podSecurityContext", &pod["securityContext"])?,
        security_context: block("securityContext", &container["securityContext"])?,
        resources: block("resources", &container["resources"])?,
        termination_grace_period: pod["terminationGracePeriodSeconds"].as_u64(),
        rbac_namespaced: project.namespaced,
        metrics_enabled: enabled("metrics_service.yaml") && metrics_address.as_deref() != Some("0"),
        metrics_port: port(metrics_address, 8443),
        metrics_secure: flag_value("--metrics-secure").as_deref() != Some("false"),
        cert_manager: enabled("../certmanager"),
        webhook: enabled("../webhook"),
        webhook_port,
        prometheus: enabled("../prometheus"),
        network_policy: enabled("../network-policy"),
    })
}

/// The project's version (Cargo.toml's), the chart's appVersion: the image tag it deploys.
fn app_version(plan: &Plan) -> Result<String> {
    let manifest = plan.read(CARGO_TOML)?.unwrap_or_default();
    Ok(manifest
        .lines()
        .find_map(|line| {
            let value = line.trim().strip_prefix("version")?.trim_start();
            let value = value.strip_prefix('=')?.trim();
            Some(value.trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| "0.1.0".into()))
}

/// `key: value` as YAML lines under `manager:` (indented by two), with a blank line after;
/// a commented example where config/ sets nothing.
fn block(key: &str, value: &Value) -> Result<String> {
    if value.is_null() || value.as_object().is_some_and(|m| m.is_empty()) {
        return Ok(format!("  # {key}: {{}}\n"));
    }
    let yaml = serde_saphyr::to_string(value)
        .with_context(|| format!("internal error: cannot write {key} as YAML"))?;
    let mut out = format!("  {key}:\n");
    for line in yaml.lines() {
        out.push_str(&format!("    {line}\n"));
    }
    Ok(out)
}

/// An argument as a YAML scalar: a flag (`--leader-elect`) plain, anything else quoted.
fn scalar(value: &Value) -> String {
    let text = value.as_str().unwrap_or_default();
    let flag = text.starts_with("--")
        || text.starts_with('-') && text[1..].starts_with(|c: char| c.is_ascii_alphabetic());
    let plain = flag
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,@".contains(c));
    if plain {
        text.to_owned()
    } else {
        value.to_string()
    }
}

/// The Makefile with the Helm section at its end, as kubebuilder appends it; unchanged if it
/// has one.
fn with_section(makefile: &str, section: &str) -> String {
    if makefile.lines().any(|l| l.starts_with("helm-deploy:")) {
        return makefile.to_owned();
    }
    format!("{}\n\n{section}", makefile.trim_end())
}

/// The README with the Helm section under "Project Distribution" (before the next section),
/// or at its end if that heading is gone; unchanged if it has one.
fn with_readme_section(readme: &str, section: &str) -> String {
    let heading = section.lines().next().unwrap_or_default();
    if readme.lines().any(|l| l == heading) {
        return readme.to_owned();
    }
    match readme.find(&format!("\n{README_NEXT}\n")) {
        Some(at) => format!("{}\n{section}{}", &readme[..at], &readme[at + 1..]),
        None => format!("{}\n\n{section}", readme.trim_end()),
    }
}

/// The .gitignore with the chart kept in git: rbuilder ignores `/dist/` (what `make deploy`
/// and `make build-installer` render there), but the chart is source.
fn with_chart_kept(text: &str) -> String {
    if text.lines().any(|l| l.trim() == "!/dist/chart/") {
        return text.to_owned();
    }
    let mut out = String::new();
    for line in text.lines() {
        if line.trim() == "/dist/" {
            out.push_str(
                "/dist/*\n# The Helm chart (rbuilder edit --plugins helm/v2-alpha) is source.\n\
                 !/dist/chart/\n",
            );
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhooks_are_switched_on_where_values_say_off() {
        let values = "webhook:\n  enabled: false\n  port: 9443\n\nprometheus:\n  enabled: false\n";
        let on = switched_on(values, "webhook").unwrap();
        assert_eq!(
            on,
            "webhook:\n  enabled: true\n  port: 9443\n\nprometheus:\n  enabled: false\n"
        );
        assert_eq!(switched_on(&on, "webhook"), None);
        assert_eq!(switched_on(values, "certManager"), None);
    }

    #[test]
    fn the_chart_is_kept_out_of_the_ignored_dist() {
        let text = "/target/\n/dist/\n*.swp\n";
        let kept = with_chart_kept(text);
        assert!(kept.contains("/dist/*\n"), "{kept}");
        assert!(kept.contains("!/dist/chart/\n"), "{kept}");
        assert_eq!(with_chart_kept(&kept), kept);
    }

    #[test]
    fn settings_blocks_are_yaml_under_manager() {
        let value = serde_json::json!({"limits": {"cpu": "500m"}, "drop": ["ALL"]});
        let text = block("resources", &value).unwrap();
        let parsed: Value = serde_saphyr::from_str(&format!("manager:\n{text}")).unwrap();
        assert_eq!(parsed["manager"]["resources"], value);
        assert_eq!(
            block("resources", &Value::Null).unwrap(),
            "  # resources: {}\n"
        );
        for arg in [
            "--leader-elect",
            "--zap-log-level=debug",
            "-v",
            "a b",
            "true",
            "x: y",
        ] {
            let written = scalar(&Value::String(arg.into()));
            let parsed: Value = serde_saphyr::from_str(&format!("- {written}\n")).unwrap();
            assert_eq!(parsed[0], arg, "{written}");
        }
    }
}
