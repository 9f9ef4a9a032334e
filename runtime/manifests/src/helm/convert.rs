//! Each rendered object of `config/default`, turned into a template of the chart.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::yaml::{self, Entry, Item, Node, replace_field};
use super::{Chart, HEADER, Settings};
use rbuilder_runtime_core::WatchScope;

/// The labels Helm's charts put on every object; a user's extra labels (values.yaml) cannot
/// replace them.
const STANDARD_LABELS: &str = r#""app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/managed-by" "helm.sh/chart""#;

const METRICS: &str = ".Values.metrics.enabled";
const SECURE_METRICS: &str = "and .Values.metrics.enabled .Values.metrics.secure";
const WEBHOOKS: &str = ".Values.webhook.enabled";
const CERT_MANAGER: &str = ".Values.certManager.enabled";
const WEBHOOK_CERTS: &str = "and .Values.certManager.enabled .Values.webhook.enabled";
const METRICS_CERTS: &str =
    "and .Values.certManager.enabled .Values.metrics.enabled .Values.metrics.secure";

/// The chart's templates for the objects `rendered` holds (the output of `kubectl kustomize
/// config/default`), and for those of `optional` (objects as config/'s files hold them, before
/// kustomize) that config/default leaves out.
pub fn convert(rendered: &str, optional: &[Value], settings: &Settings) -> anyhow::Result<Chart> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(rendered)
        .context("the rendered manifests on stdin are not valid YAML")?;
    let mut objects = flatten(docs);
    let Some(manager) = manager_deployment(&objects).cloned() else {
        bail!(
            "no manager Deployment in the rendered manifests (a Deployment labelled \
             control-plane: controller-manager): are they config/default's?"
        );
    };
    let mut ctx = Ctx::new(settings, &manager)?;
    for object in optional {
        let object = ctx.kustomized(object);
        let present = objects.iter().any(|o| {
            o["kind"] == object["kind"] && o["metadata"]["name"] == object["metadata"]["name"]
        });
        if !present {
            objects.push(object);
        }
    }
    ctx.learn_names(&objects);

    let crd_groups: BTreeSet<String> = objects
        .iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
        .filter_map(|o| o["spec"]["group"].as_str().map(str::to_owned))
        .collect();
    let mut chart = Chart::default();
    for object in &objects {
        let group = object["apiVersion"]
            .as_str()
            .and_then(|v| v.split_once('/'))
            .map(|(group, _)| group)
            .unwrap_or_default();
        if crd_groups.contains(group) {
            chart.notes.push(format!(
                "left out {} {}: the chart installs the operator, not objects of its kinds",
                object["kind"].as_str().unwrap_or_default(),
                object["metadata"]["name"].as_str().unwrap_or_default()
            ));
            continue;
        }
        let Some(template) = ctx.template(object) else {
            continue;
        };
        let mut path = format!("{}/{}.yaml", template.folder, template.file);
        if chart.files.contains_key(&path) {
            // Two objects of one name (a Role and its binding named alike): the kind tells
            // them apart.
            let kind = object["kind"].as_str().unwrap_or_default().to_lowercase();
            path = format!("{}/{}-{kind}.yaml", template.folder, template.file);
        }
        chart.files.insert(path, template.text());
    }
    Ok(chart)
}

/// The objects of `docs`, with those of `List`s taken out of them.
fn flatten(docs: Vec<Value>) -> Vec<Value> {
    let mut objects = Vec::new();
    for doc in docs {
        match doc.get("items") {
            Some(Value::Array(items)) if doc["kind"] == "List" => objects.extend(items.clone()),
            _ if doc.get("kind").is_some() => objects.push(doc),
            _ => {}
        }
    }
    objects
}

/// The manager's Deployment: labelled `control-plane: controller-manager`, as config/manager
/// writes it.
pub(super) fn manager_deployment(objects: &[Value]) -> Option<&Value> {
    let deployments = || objects.iter().filter(|o| o["kind"] == "Deployment");
    deployments()
        .find(|d| d["metadata"]["labels"]["control-plane"] == "controller-manager")
        .or_else(|| {
            deployments().find(|d| {
                d["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.ends_with("controller-manager"))
            })
        })
}

/// The manager's container in `deployment`: the one its `default-container` annotation names,
/// else the one named `manager`, else the first.
pub(super) fn manager_container(deployment: &Value) -> Option<usize> {
    let containers = deployment["spec"]["template"]["spec"]["containers"].as_array()?;
    let named = |name: &str| containers.iter().position(|c| c["name"] == name);
    let annotation = deployment["spec"]["template"]["metadata"]["annotations"]
        ["kubectl.kubernetes.io/default-container"]
        .as_str();
    annotation
        .and_then(named)
        .or_else(|| named("manager"))
        .or((!containers.is_empty()).then_some(0))
}

/// The manager's flags the chart sets from values.yaml, rather than taking them as rendered.
pub(super) const CHART_FLAGS: &[&str] = &[
    "--metrics-bind-address",
    "--metrics-secure",
    "--health-probe-bind-address",
    "--webhook-bind-address",
    "--webhook-cert-path",
    "--metrics-cert-path",
];

/// The flag of a command-line argument (`--flag` of `--flag=value`).
pub(super) fn flag(arg: &str) -> &str {
    arg.split_once('=').map_or(arg, |(flag, _)| flag)
}

/// The value of `--name=value` among `args`.
fn flag_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .find_map(|a| a.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
}

/// The port of a bind address (`:8443`, `0.0.0.0:8443`).
fn port_of(address: &str) -> Option<u64> {
    address
        .rsplit_once(':')
        .and_then(|(_, port)| port.parse().ok())
}

/// A template of the chart: its place, and the object as template nodes.
struct Template {
    folder: &'static str,
    file: String,
    /// The condition under which the object is installed at all.
    cond: Option<String>,
    node: Node,
}

impl Template {
    fn text(mut self) -> String {
        if let Node::Map(entries) = &mut self.node {
            lift_conditions(entries);
        }
        let body = yaml::document(&self.node);
        match self.cond {
            Some(cond) => format!("{HEADER}{{{{- if {cond} }}}}\n{body}{{{{- end }}}}\n"),
            None => format!("{HEADER}{body}"),
        }
    }
}

/// What the conversion knows of the project, from the manager's Deployment.
struct Ctx {
    chart: String,
    scope: WatchScope,
    /// The project's name, as the `app.kubernetes.io/name` label has it.
    project: String,
    /// The namespace config/default installs into.
    namespace: String,
    /// config/default's namePrefix, without its `-`.
    prefix: String,
    /// The names of the rendered objects that carry the prefix (without a `.<namespace>`
    /// suffix), each with what follows the prefix.
    names: BTreeMap<String, String>,
    /// The manager's ServiceAccount.
    service_account: String,
    /// The manager Deployment's name.
    manager: String,
    /// The manager's arguments, as rendered.
    args: Vec<String>,
    /// The Secrets mounted where `--webhook-cert-path` and `--metrics-cert-path` point.
    webhook_secret: Option<String>,
    metrics_secret: Option<String>,
}

impl Ctx {
    fn new(settings: &Settings, manager: &Value) -> anyhow::Result<Ctx> {
        let name = manager["metadata"]["name"].as_str().unwrap_or_default();
        let Some(namespace) = manager["metadata"]["namespace"].as_str() else {
            bail!("the manager Deployment {name} has no namespace: config/default sets one");
        };
        let prefix = name
            .strip_suffix("controller-manager")
            .map(|p| p.trim_end_matches('-'))
            .unwrap_or_default();
        let project = manager["metadata"]["labels"]["app.kubernetes.io/name"]
            .as_str()
            .unwrap_or(&settings.chart);
        let pod = &manager["spec"]["template"]["spec"];
        let args: Vec<String> = manager_container(manager)
            .and_then(|i| pod["containers"][i]["args"].as_array())
            .map(|args| {
                args.iter()
                    .filter_map(|a| a.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let secret_at = |flag_name: &str| -> Option<String> {
            let path = flag_value(&args, flag_name)?;
            let container = &pod["containers"][manager_container(manager)?];
            let volume = container["volumeMounts"]
                .as_array()?
                .iter()
                .find(|m| m["mountPath"] == path)?["name"]
                .as_str()?;
            pod["volumes"]
                .as_array()?
                .iter()
                .find(|v| v["name"] == volume)?["secret"]["secretName"]
                .as_str()
                .map(str::to_owned)
        };
        let webhook_secret = secret_at("--webhook-cert-path");
        let metrics_secret = secret_at("--metrics-cert-path");
        Ok(Ctx {
            chart: settings.chart.clone(),
            scope: settings.scope,
            project: project.to_owned(),
            namespace: namespace.to_owned(),
            prefix: prefix.to_owned(),
            names: BTreeMap::new(),
            service_account: pod["serviceAccountName"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            manager: name.to_owned(),
            args,
            webhook_secret,
            metrics_secret,
        })
    }

    /// `object` as config/default would render it: named with the prefix, in the namespace.
    fn kustomized(&self, object: &Value) -> Value {
        let mut object = object.clone();
        if let Some(name) = object["metadata"]["name"].as_str() {
            let name = match self.prefix.as_str() {
                "" => name.to_owned(),
                prefix => format!("{prefix}-{name}"),
            };
            object["metadata"]["name"] = json!(name);
        }
        if object["metadata"].get("namespace").is_some() {
            object["metadata"]["namespace"] = json!(self.namespace);
        }
        object
    }

    fn learn_names(&mut self, objects: &[Value]) {
        for object in objects {
            let Some(name) = object["metadata"]["name"].as_str() else {
                continue;
            };
            let base = self.base_name(name);
            let suffix = match self.prefix.as_str() {
                "" => Some(base),
                prefix => base.strip_prefix(prefix).and_then(|s| s.strip_prefix('-')),
            };
            if let Some(suffix) = suffix.filter(|s| !s.is_empty()) {
                self.names.insert(base.to_owned(), suffix.to_owned());
            }
        }
    }

    /// `name` without the `.<namespace>` that an operator scoped to its namespace puts after
    /// the names of its cluster-scoped objects.
    fn base_name<'a>(&self, name: &'a str) -> &'a str {
        name.strip_suffix(&format!(".{}", self.namespace))
            .unwrap_or(name)
    }

    /// What follows the prefix in `name`, or the whole name.
    fn suffix<'a>(&'a self, name: &'a str) -> &'a str {
        let base = self.base_name(name);
        self.names.get(base).map_or(base, String::as_str)
    }

    fn resource_name(&self, suffix: &str) -> String {
        format!(
            "{{{{ include \"{}.resourceName\" (dict \"suffix\" \"{suffix}\" \"context\" $) }}}}",
            self.chart
        )
    }

    fn service_account_name(&self) -> String {
        format!("{{{{ include \"{}.serviceAccountName\" $ }}}}", self.chart)
    }

    fn name_label(&self) -> String {
        format!("{{{{ include \"{}.name\" $ }}}}", self.chart)
    }

    /// `s` with the namespace and the prefixed names in it made template expressions, if it
    /// has any (names and namespaces are whole parts between `.` and `/`).
    fn rewrite(&self, s: &str) -> Option<String> {
        let mut pieces: Vec<(bool, String)> = Vec::new();
        let mut changed = false;
        for part in s.split_inclusive(['.', '/']) {
            let (word, separator) = match part.strip_suffix(['.', '/']) {
                Some(word) => (word, &part[word.len()..]),
                None => (part, ""),
            };
            if word == self.namespace {
                pieces.push((true, "{{ .Release.Namespace }}".into()));
                changed = true;
            } else if let Some(suffix) = self.names.get(word) {
                pieces.push((true, self.resource_name(suffix)));
                changed = true;
            } else {
                pieces.push((false, word.to_owned()));
            }
            pieces.push((false, separator.to_owned()));
        }
        if !changed {
            return None;
        }
        // Quoted if what is left of the string would need it (names and namespaces are DNS
        // names, which need no quoting).
        let sample: String = pieces
            .iter()
            .map(|(expr, text)| if *expr { "x" } else { text.as_str() })
            .collect();
        let quote = yaml::scalar_text(&json!(sample)) != sample;
        let mut out = String::new();
        for (expr, text) in &pieces {
            match (expr, quote) {
                (true, _) => out.push_str(text),
                (false, true) => {
                    let quoted = json!(text).to_string();
                    out.push_str(&yaml::escape(&quoted[1..quoted.len() - 1]));
                }
                (false, false) => out.push_str(&yaml::escape(text)),
            }
        }
        Some(if quote { format!("\"{out}\"") } else { out })
    }

    /// Every string under `node` rewritten (see [`Ctx::rewrite`]), except in label maps, which
    /// [`Ctx::labels`] and [`Ctx::selector`] handle.
    fn rewrite_all(&self, node: &mut Node) {
        match node {
            Node::Scalar(Value::String(s)) => {
                if let Some(text) = self.rewrite(s) {
                    *node = Node::Expr(text);
                }
            }
            Node::Map(entries) => {
                for entry in entries {
                    if let Entry::Field(key, value) = entry
                        && key != "labels"
                        && key != "matchLabels"
                    {
                        self.rewrite_all(value);
                    }
                }
            }
            Node::Seq(items) => {
                for item in items {
                    if let Item::Node(value) = item {
                        self.rewrite_all(value);
                    }
                }
            }
            _ => {}
        }
    }

    /// Helm's labels in the label map `entries`: the project's name from the chart, the
    /// release, Helm as manager, the chart.
    fn labels(&self, entries: &mut Vec<Entry>) {
        self.selector(entries);
        for (key, value) in [
            ("app.kubernetes.io/managed-by", "{{ $.Release.Service }}"),
            (
                "helm.sh/chart",
                "{{ $.Chart.Name }}-{{ $.Chart.Version | replace \"+\" \"_\" }}",
            ),
        ] {
            set_entry(entries, key, Node::expr(value));
        }
    }

    /// The release in the label selector `entries`, and the project's name from the chart.
    fn selector(&self, entries: &mut Vec<Entry>) {
        let name = entries.iter_mut().find_map(|e| match e {
            Entry::Field(k, v) if k == "app.kubernetes.io/name" => Some(v),
            _ => None,
        });
        match name {
            Some(value) => {
                if value == &Node::string(&self.project) {
                    *value = Node::expr(self.name_label());
                }
            }
            None => entries.push(Entry::field(
                "app.kubernetes.io/name",
                Node::expr(self.name_label()),
            )),
        }
        set_entry(
            entries,
            "app.kubernetes.io/instance",
            Node::expr("{{ $.Release.Name }}"),
        );
    }

    /// `object` as nodes, its names, namespaces and labels made templates.
    fn base(&self, object: &Value) -> Node {
        let mut node = Node::from(object);
        if object["kind"] == "CustomResourceDefinition" {
            // The schema is data: only the names and the conversion webhook's Service are the
            // release's.
            for path in [&["metadata"][..], &["spec", "conversion"]] {
                if let Some(part) = node.get_mut(path) {
                    self.rewrite_all(part);
                }
            }
        } else {
            self.rewrite_all(&mut node);
        }
        if let Some(labels) = node.map_at(&["metadata", "labels"]) {
            self.labels(labels);
        }
        if let Some(Node::Seq(subjects)) = node.get_mut(&["subjects"]) {
            for subject in subjects.iter_mut() {
                if let Item::Node(subject) = subject
                    && subject.str_at(&["kind"]) == Some("ServiceAccount")
                    && subject.get(&["name"])
                        == Some(&Node::expr(
                            self.resource_name(self.suffix(&self.service_account)),
                        ))
                {
                    subject.set(&["name"], Node::expr(self.service_account_name()));
                }
            }
        }
        node
    }

    /// The chart's template for `object`, or `None` for what the chart leaves out.
    fn template(&self, object: &Value) -> Option<Template> {
        let kind = object["kind"].as_str().unwrap_or_default();
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let suffix = self.suffix(name).to_owned();
        let node = self.base(object);
        let template = |folder, cond: Option<&str>, node| Template {
            folder,
            file: suffix.clone(),
            cond: cond.map(str::to_owned),
            node,
        };
        Some(match kind {
            // Helm installs into a namespace that exists, or that --create-namespace makes.
            "Namespace" => return None,
            "CustomResourceDefinition" => Template {
                folder: "crd",
                file: name.to_owned(),
                cond: Some(".Values.crd.enabled".into()),
                node: self.crd(node),
            },
            "ServiceAccount" if name == self.service_account => template(
                "rbac",
                Some(".Values.serviceAccount.enabled"),
                self.service_account(node),
            ),
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => {
                let (cond, node) = self.rbac(kind, &suffix, node);
                template("rbac", cond, node)
            }
            "Deployment" if name == self.manager => Template {
                folder: "manager",
                file: "manager".into(),
                cond: Some(
                    "or (not (hasKey .Values.manager \"enabled\")) .Values.manager.enabled".into(),
                ),
                node: self.manager(object, node),
            },
            "Service" if suffix.ends_with("metrics-service") => {
                template("metrics", Some(METRICS), self.metrics_service(node))
            }
            "Service" if suffix.ends_with("webhook-service") => {
                template("webhook", Some(WEBHOOKS), self.webhook_service(node))
            }
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => template(
                "webhook",
                Some(WEBHOOKS),
                self.cert_manager_annotation(node),
            ),
            "Issuer" | "ClusterIssuer" => template("cert-manager", Some(CERT_MANAGER), node),
            "Certificate" => {
                let secret = object["spec"]["secretName"].as_str();
                let cond = if secret.is_some() && secret == self.webhook_secret.as_deref()
                    || suffix == "serving-cert"
                {
                    WEBHOOK_CERTS
                } else if secret.is_some() && secret == self.metrics_secret.as_deref()
                    || suffix == "metrics-certs"
                {
                    METRICS_CERTS
                } else {
                    CERT_MANAGER
                };
                template("cert-manager", Some(cond), node)
            }
            "ServiceMonitor" => template(
                "prometheus",
                Some("and .Values.prometheus.enabled .Values.metrics.enabled"),
                self.service_monitor(node),
            ),
            "NetworkPolicy" => {
                let (cond, node) = self.network_policy(node);
                template("network-policy", Some(&cond), node)
            }
            _ => template("extras", None, node),
        })
    }

    fn crd(&self, mut node: Node) -> Node {
        node = self.cert_manager_annotation(node);
        if let Some(annotations) = node.map_at(&["metadata", "annotations"]) {
            // Kept on uninstall unless crd.keep is false: deleting a CRD deletes every object
            // of its kind.
            annotations.insert(
                0,
                Entry::when(
                    ".Values.crd.keep",
                    vec![Entry::field(
                        "helm.sh/resource-policy",
                        Node::string("keep"),
                    )],
                ),
            );
        }
        node
    }

    /// The CA injection of cert-manager, only with cert-manager.
    fn cert_manager_annotation(&self, mut node: Node) -> Node {
        if let Some(annotations) = node.map_at(&["metadata", "annotations"]) {
            replace_field(annotations, "cert-manager.io/inject-ca-from", |value| {
                vec![Entry::when(
                    CERT_MANAGER,
                    vec![Entry::field("cert-manager.io/inject-ca-from", value)],
                )]
            });
        }
        node
    }

    fn service_account(&self, mut node: Node) -> Node {
        node.set(
            &["metadata", "name"],
            Node::expr(self.service_account_name()),
        );
        if let Some(labels) = node.map_at(&["metadata", "labels"]) {
            labels.push(Entry::Raw(extra_map(".Values.serviceAccount.labels")));
        }
        if let Some(metadata) = node.map_at(&["metadata"]) {
            metadata.push(Entry::Raw(optional_map(
                ".Values.serviceAccount.annotations",
                "annotations",
            )));
        }
        node
    }

    /// A role or binding: its condition, and the template.
    fn rbac(&self, kind: &str, suffix: &str, mut node: Node) -> (Option<&'static str>, Node) {
        let helper = ["admin", "editor", "viewer"].iter().any(|role| {
            suffix.ends_with(&format!("-{role}-role"))
                || suffix.ends_with(&format!("-{role}-rolebinding"))
        });
        let metrics = [
            "metrics-auth-role",
            "metrics-reader",
            "metrics-auth-rolebinding",
        ]
        .contains(&suffix);
        if helper {
            // kubebuilder's switch: the helper roles are Roles of the release's namespace, or
            // ClusterRoles.
            let binding = kind.ends_with("Binding");
            let (role, cluster_role) = match binding {
                true => ("RoleBinding", "ClusterRoleBinding"),
                false => ("Role", "ClusterRole"),
            };
            scope_switch(&mut node, role, cluster_role);
            if binding && let Some(role_ref) = node.map_at(&["roleRef"]) {
                replace_field(role_ref, "kind", |_| {
                    vec![Entry::If {
                        cond: ".Values.rbac.namespaced".into(),
                        then: vec![Entry::field("kind", Node::string("Role"))],
                        otherwise: vec![Entry::field("kind", Node::string("ClusterRole"))],
                    }]
                });
            }
            return (Some(".Values.rbac.helpers.enabled"), node);
        }
        if metrics {
            return (Some(SECURE_METRICS), node);
        }
        if suffix == "manager-role"
            && let Some(entries) = node.entries_mut()
        {
            // The manager's role is what its compiled-in scope needs: a Role cannot grant an
            // operator of the whole cluster what it watches, and a ClusterRole would grant one
            // of a namespace more than it needs.
            let (wanted, message) = match self.scope {
                WatchScope::Cluster => (
                    "false",
                    "rbac.namespaced is true, but this operator watches the whole cluster \
                     (WatchScope::Cluster in src/lib.rs), which a Role in the release's \
                     namespace cannot grant: keep rbac.namespaced false, or make the operator \
                     namespaced (rbuilder edit --namespaced) and run make helm",
                ),
                WatchScope::Namespace => (
                    "true",
                    "rbac.namespaced is false, but this operator watches its own namespace \
                     only (WatchScope::Namespace in src/lib.rs), for which ClusterRoles would \
                     grant more than it needs: keep rbac.namespaced true",
                ),
            };
            entries.insert(
                0,
                Entry::Raw(format!(
                    "{{{{- if ne (toString .Values.rbac.namespaced) \"{wanted}\" }}}}\n\
                     {{{{- fail \"{message}\" }}}}\n{{{{- end }}}}"
                )),
            );
        }
        (None, node)
    }

    fn metrics_service(&self, mut node: Node) -> Node {
        if let Some(Node::Seq(ports)) = node.get_mut(&["spec", "ports"]) {
            for port in ports.iter_mut() {
                if let Item::Node(port) = port {
                    port.set(
                        &["name"],
                        Node::expr("{{ if .Values.metrics.secure }}https{{ else }}http{{ end }}"),
                    );
                    port.set(&["port"], Node::expr("{{ .Values.metrics.port }}"));
                    if matches!(
                        port.get(&["targetPort"]),
                        Some(Node::Scalar(Value::Number(_)))
                    ) {
                        port.set(&["targetPort"], Node::expr("{{ .Values.metrics.port }}"));
                    }
                }
            }
        }
        self.service_selector(node)
    }

    fn webhook_service(&self, mut node: Node) -> Node {
        if let Some(Node::Seq(ports)) = node.get_mut(&["spec", "ports"]) {
            for port in ports.iter_mut() {
                if let Item::Node(port) = port
                    && matches!(
                        port.get(&["targetPort"]),
                        Some(Node::Scalar(Value::Number(_)))
                    )
                {
                    port.set(&["targetPort"], Node::expr("{{ .Values.webhook.port }}"));
                }
            }
        }
        self.service_selector(node)
    }

    fn service_selector(&self, mut node: Node) -> Node {
        if let Some(selector) = node.map_at(&["spec", "selector"]) {
            self.selector(selector);
        }
        node
    }

    fn service_monitor(&self, mut node: Node) -> Node {
        if let Some(labels) = node.map_at(&["metadata", "labels"]) {
            labels.push(Entry::Raw(extra_map(".Values.prometheus.labels")));
        }
        if let Some(metadata) = node.map_at(&["metadata"]) {
            metadata.push(Entry::Raw(optional_map(
                ".Values.prometheus.annotations",
                "annotations",
            )));
        }
        if let Some(selector) = node.map_at(&["spec", "selector", "matchLabels"]) {
            self.selector(selector);
        }
        if let Some(Node::Seq(endpoints)) = node.get_mut(&["spec", "endpoints"]) {
            for endpoint in endpoints.iter_mut() {
                let Item::Node(Node::Map(entries)) = endpoint else {
                    continue;
                };
                let scheme = "{{ if .Values.metrics.secure }}https{{ else }}http{{ end }}";
                for key in ["port", "scheme"] {
                    if let Some(Entry::Field(_, value)) = entries
                        .iter_mut()
                        .find(|e| matches!(e, Entry::Field(k, _) if k == key))
                        && value == &Node::string("https")
                    {
                        *value = Node::expr(scheme);
                    }
                }
                // A token and TLS only for the HTTPS endpoint.
                for key in ["bearerTokenFile", "tlsConfig"] {
                    replace_field(entries, key, |value| {
                        vec![Entry::when(
                            ".Values.metrics.secure",
                            vec![Entry::field(key, value)],
                        )]
                    });
                }
            }
        }
        node
    }

    /// A NetworkPolicy: its condition (with the server it lets traffic to), and the template.
    fn network_policy(&self, mut node: Node) -> (String, Node) {
        let metrics_port = flag_value(&self.args, "--metrics-bind-address").and_then(port_of);
        let webhook_port = flag_value(&self.args, "--webhook-bind-address").and_then(port_of);
        let mut serves = None;
        if let Some(selector) = node.map_at(&["spec", "podSelector", "matchLabels"]) {
            self.selector(selector);
        }
        if let Some(Node::Seq(rules)) = node.get_mut(&["spec", "ingress"]) {
            for rule in rules.iter_mut() {
                let Item::Node(rule) = rule else { continue };
                let Some(Node::Seq(ports)) = rule.get_mut(&["ports"]) else {
                    continue;
                };
                for port in ports.iter_mut() {
                    let Item::Node(port) = port else { continue };
                    let number = match port.get(&["port"]) {
                        Some(Node::Scalar(Value::Number(n))) => n.as_u64(),
                        _ => None,
                    };
                    if number.is_some() && number == metrics_port {
                        port.set(&["port"], Node::expr("{{ .Values.metrics.port }}"));
                        serves = Some(METRICS);
                    } else if number.is_some() && number == webhook_port {
                        port.set(&["port"], Node::expr("{{ .Values.webhook.port }}"));
                        serves = Some(WEBHOOKS);
                    }
                }
            }
        }
        // A policy for the webhook port of a project without webhooks guards nothing.
        let name = node
            .str_at(&["metadata", "name"])
            .unwrap_or_default()
            .to_owned();
        let serves = serves.or(if name.is_empty() {
            None
        } else if self.suffix(&name).contains("webhook") {
            Some(WEBHOOKS)
        } else if self.suffix(&name).contains("metrics") {
            Some(METRICS)
        } else {
            None
        });
        let cond = match serves {
            Some(server) => format!("and .Values.networkPolicy.enabled {server}"),
            None => ".Values.networkPolicy.enabled".to_owned(),
        };
        (cond, node)
    }

    /// The manager's Deployment: what values.yaml sets taken from it, the rest as rendered.
    fn manager(&self, object: &Value, mut node: Node) -> Node {
        let pod = &object["spec"]["template"]["spec"];
        let container_at = manager_container(object).unwrap_or_default();
        let container = &pod["containers"][container_at];

        if let Some(labels) = node.map_at(&["metadata", "labels"]) {
            labels.push(Entry::Raw(extra_map(".Values.manager.labels")));
        }
        if let Some(metadata) = node.map_at(&["metadata"]) {
            metadata.push(Entry::Raw(optional_map(
                ".Values.manager.annotations",
                "annotations",
            )));
        }
        if let Some(spec) = node.map_at(&["spec"]) {
            set_entry(
                spec,
                "replicas",
                Node::expr("{{ .Values.manager.replicas }}"),
            );
            spec.retain(|e| !matches!(e, Entry::Field(k, _) if k == "strategy"));
            spec.push(Entry::Raw(optional_map(
                ".Values.manager.strategy",
                "strategy",
            )));
        }
        if let Some(selector) = node.map_at(&["spec", "selector", "matchLabels"]) {
            self.selector(selector);
        }
        if let Some(labels) = node.map_at(&["spec", "template", "metadata", "labels"]) {
            self.labels(labels);
            labels.push(Entry::Raw(
                "{{- with .Values.manager.pod }}\n{{- with .labels }}\n{{- toYaml (omit . "
                    .to_owned()
                    + STANDARD_LABELS
                    + ") | nindent {indent} }}\n{{- end }}\n{{- end }}",
            ));
        }
        if let Some(annotations) = node.map_at(&["spec", "template", "metadata", "annotations"]) {
            annotations.push(Entry::Raw(
                "{{- with .Values.manager.pod }}\n{{- with .annotations }}\n{{- toYaml (omit . \
                 \"kubectl.kubernetes.io/default-container\") | nindent {indent} }}\n{{- end }}\n\
                 {{- end }}"
                    .into(),
            ));
        }

        let webhook_mount = flag_value(&self.args, "--webhook-cert-path");
        let metrics_mount = flag_value(&self.args, "--metrics-cert-path");
        // The volumes mounted where the certificate flags point: each there only with the
        // certificate cert-manager makes for it.
        let mount_of = |path: Option<&str>| {
            path.and_then(|path| {
                container["volumeMounts"]
                    .as_array()?
                    .iter()
                    .find(|m| m["mountPath"] == path)
                    .and_then(|m| m["name"].as_str())
            })
        };
        let certificate_volumes: Vec<(&str, &str)> = [
            (mount_of(webhook_mount), WEBHOOK_CERTS),
            (mount_of(metrics_mount), METRICS_CERTS),
        ]
        .into_iter()
        .filter_map(|(volume, cond)| volume.map(|v| (v, cond)))
        .collect();

        if let Some(pod_spec) = node.map_at(&["spec", "template", "spec"]) {
            set_entry(
                pod_spec,
                "securityContext",
                Node::FromValues {
                    path: ".Values.manager.podSecurityContext".into(),
                    fallback: json!({}),
                },
            );
            set_entry(
                pod_spec,
                "serviceAccountName",
                Node::expr(self.service_account_name()),
            );
            pod_spec.retain(|e| {
                !matches!(e, Entry::Field(k, _) if [
                    "affinity", "nodeSelector", "tolerations", "topologySpreadConstraints",
                    "priorityClassName", "imagePullSecrets", "terminationGracePeriodSeconds",
                ].contains(&k.as_str()))
            });
            for (path, key) in [
                (".Values.manager.imagePullSecrets", "imagePullSecrets"),
                (".Values.manager.affinity", "affinity"),
                (".Values.manager.nodeSelector", "nodeSelector"),
                (".Values.manager.tolerations", "tolerations"),
                (
                    ".Values.manager.topologySpreadConstraints",
                    "topologySpreadConstraints",
                ),
            ] {
                pod_spec.push(Entry::Raw(optional_map(path, key)));
            }
            pod_spec.push(Entry::Raw(
                "{{- with .Values.manager.priorityClassName }}\npriorityClassName: {{ . | quote }}\n{{- end }}"
                    .into(),
            ));
            // hasKey, so that 0 (stop at once) is kept.
            pod_spec.push(Entry::when(
                "and (hasKey .Values.manager \"terminationGracePeriodSeconds\") (ne \
                 .Values.manager.terminationGracePeriodSeconds nil)",
                vec![Entry::field(
                    "terminationGracePeriodSeconds",
                    Node::expr("{{ .Values.manager.terminationGracePeriodSeconds }}"),
                )],
            ));
            let volumes = pod["volumes"].as_array().cloned().unwrap_or_default();
            replace_list(
                pod_spec,
                "volumes",
                &volumes,
                |v| {
                    certificate_volumes
                        .iter()
                        .find(|(name, _)| v["name"] == *name)
                        .map(|(_, c)| *c)
                },
                ".Values.manager.extraVolumes",
            );
        }

        let at = container_at.to_string();
        if let Some(entries) = node.map_at(&["spec", "template", "spec", "containers", &at]) {
            self.manager_container(entries, container, &certificate_volumes);
        }
        node
    }

    fn manager_container(
        &self,
        entries: &mut Vec<Entry>,
        container: &Value,
        certificate_volumes: &[(&str, &'static str)],
    ) {
        let args = &self.args;
        let health_port = flag_value(args, "--health-probe-bind-address").and_then(port_of);
        let metrics_port = flag_value(args, "--metrics-bind-address").and_then(port_of);
        let webhook_port = flag_value(args, "--webhook-bind-address").and_then(port_of);

        let mut items = vec![Item::If {
            cond: METRICS.into(),
            then: vec![
                Item::Node(Node::expr(
                    "--metrics-bind-address=:{{ .Values.metrics.port }}",
                )),
                Item::when(
                    "not .Values.metrics.secure",
                    vec![Item::Node(Node::string("--metrics-secure=false"))],
                ),
            ],
            otherwise: vec![Item::Node(Node::string("--metrics-bind-address=0"))],
        }];
        items.push(Item::Node(Node::expr(
            "--health-probe-bind-address=:{{ .Values.manager.healthProbe.port }}",
        )));
        if flag_value(args, "--webhook-bind-address").is_some() {
            items.push(Item::If {
                cond: WEBHOOKS.into(),
                then: vec![Item::Node(Node::expr(
                    "--webhook-bind-address=:{{ .Values.webhook.port }}",
                ))],
                otherwise: vec![Item::Node(Node::string("--webhook-bind-address=0"))],
            });
        }
        for (flag_name, cond) in [
            ("--webhook-cert-path", WEBHOOK_CERTS),
            ("--metrics-cert-path", METRICS_CERTS),
        ] {
            if let Some(path) = flag_value(args, flag_name) {
                items.push(Item::when(
                    cond,
                    vec![Item::Node(Node::string(&format!("{flag_name}={path}")))],
                ));
            }
        }
        // The others come from values.yaml (manager.args), which `rbuilder edit` filled with
        // config/'s; `make helm` notes any that differ.
        items.push(Item::Raw(
            "{{- range .Values.manager.args }}\n- {{ tpl . $ | quote }}\n{{- end }}".into(),
        ));
        set_entry(entries, "args", Node::Seq(items));

        let repository = container["image"]
            .as_str()
            .map(|image| image.rsplit_once(':').map_or(image, |(repo, _)| repo))
            .unwrap_or("controller");
        set_entry(
            entries,
            "image",
            Node::expr(format!(
                "\"{{{{ .Values.manager.image.repository | default {repo} }}}}{{{{ if not (contains \
                 \"@\" (.Values.manager.image.repository | default {repo})) }}}}:{{{{ \
                 .Values.manager.image.tag | default $.Chart.AppVersion }}}}{{{{ end }}}}\"",
                repo = json!(repository)
            )),
        );
        entries.retain(|e| !matches!(e, Entry::Field(k, _) if k == "imagePullPolicy"));
        entries.push(Entry::Raw(
            "{{- with .Values.manager.image.pullPolicy }}\nimagePullPolicy: {{ . }}\n{{- end }}"
                .into(),
        ));

        let ports = container["ports"].as_array().cloned().unwrap_or_default();
        if !ports.is_empty() {
            let items = ports
                .iter()
                .map(|port| {
                    let number = port["containerPort"].as_u64();
                    let mut node = Node::from(port);
                    let templated = |value: &str| Node::expr(format!("{{{{ {value} }}}}"));
                    if number.is_some() && number == metrics_port {
                        node.set(&["containerPort"], templated(".Values.metrics.port"));
                        Item::when(METRICS, vec![Item::Node(node)])
                    } else if number.is_some() && number == webhook_port {
                        node.set(&["containerPort"], templated(".Values.webhook.port"));
                        Item::when(WEBHOOKS, vec![Item::Node(node)])
                    } else if number.is_some() && number == health_port {
                        node.set(
                            &["containerPort"],
                            templated(".Values.manager.healthProbe.port"),
                        );
                        Item::Node(node)
                    } else {
                        Item::Node(node)
                    }
                })
                .collect();
            set_entry(entries, "ports", Node::Seq(items));
        }
        for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
            let Some(Entry::Field(_, probe)) = entries
                .iter_mut()
                .find(|e| matches!(e, Entry::Field(k, _) if k == probe))
            else {
                continue;
            };
            if let Some(Node::Scalar(Value::Number(n))) = probe.get(&["httpGet", "port"])
                && n.as_u64().is_some()
                && n.as_u64() == health_port
            {
                probe.set(
                    &["httpGet", "port"],
                    Node::expr("{{ .Values.manager.healthProbe.port }}"),
                );
            }
        }
        for (key, path) in [
            ("resources", ".Values.manager.resources"),
            ("securityContext", ".Values.manager.securityContext"),
        ] {
            set_entry(
                entries,
                key,
                Node::FromValues {
                    path: path.into(),
                    fallback: json!({}),
                },
            );
        }
        match entries
            .iter_mut()
            .find(|e| matches!(e, Entry::Field(k, _) if k == "env"))
        {
            Some(Entry::Field(_, Node::Seq(items))) => items.push(Item::Raw(
                "{{- with .Values.manager.env }}\n{{- toYaml . | nindent {indent} }}\n{{- end }}"
                    .into(),
            )),
            _ => entries.push(Entry::Raw(optional_map(".Values.manager.env", "env"))),
        }
        let mounts = container["volumeMounts"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        replace_list(
            entries,
            "volumeMounts",
            &mounts,
            |m| {
                certificate_volumes
                    .iter()
                    .find(|(name, _)| m["name"] == *name)
                    .map(|(_, c)| *c)
            },
            ".Values.manager.extraVolumeMounts",
        );
    }
}

/// Sets the field `key` of `entries` to `node`, where it is or at the end.
fn set_entry(entries: &mut Vec<Entry>, key: &str, node: Node) {
    match entries
        .iter_mut()
        .find(|e| matches!(e, Entry::Field(k, _) if k == key))
    {
        Some(Entry::Field(_, value)) => *value = node,
        _ => entries.push(Entry::field(key, node)),
    }
}

/// The field `key` of `entries` as the list `rendered`, each item under the condition `cond_of`
/// gives it, followed by those of `extra` (a list in values.yaml). With no item always there,
/// the field itself is conditional, so that it is never left empty (null).
fn replace_list(
    entries: &mut Vec<Entry>,
    key: &str,
    rendered: &[Value],
    cond_of: impl Fn(&Value) -> Option<&'static str>,
    extra: &str,
) {
    entries.retain(|e| !matches!(e, Entry::Field(k, _) if k == key));
    let mut items = Vec::new();
    let mut conds = Vec::new();
    let mut always = false;
    for value in rendered {
        match cond_of(value) {
            Some(cond) => {
                items.push(Item::when(cond, vec![Item::Node(Node::from(value))]));
                conds.push(format!("({cond})"));
            }
            None => {
                items.push(Item::Node(Node::from(value)));
                always = true;
            }
        }
    }
    items.push(Item::Raw(format!(
        "{{{{- with {extra} }}}}\n{{{{- toYaml . | nindent {{indent}} }}}}\n{{{{- end }}}}"
    )));
    let field = Entry::field(key, Node::Seq(items));
    if always {
        entries.push(field);
    } else {
        conds.push(extra.to_owned());
        let cond = match conds.as_slice() {
            [only] => only.clone(),
            all => format!("or {}", all.join(" ")),
        };
        entries.push(Entry::when(&cond, vec![field]));
    }
}

/// Template lines adding the map `path` of values.yaml (if set) to a label map, without the
/// labels the chart sets itself.
fn extra_map(path: &str) -> String {
    format!(
        "{{{{- with {path} }}}}\n{{{{- toYaml (omit . {STANDARD_LABELS}) | nindent {{indent}} \
         }}}}\n{{{{- end }}}}"
    )
}

/// Template lines writing the field `key` with the value `path` of values.yaml, if it is set.
fn optional_map(path: &str, key: &str) -> String {
    format!(
        "{{{{- with {path} }}}}\n{key}:\n  {{{{- toYaml . | nindent {{indent2}} }}}}\n{{{{- end }}}}"
    )
}

/// The object (a role or binding) made a `role` in the release's namespace when
/// `rbac.namespaced` is true, else a `cluster_role`.
fn scope_switch(node: &mut Node, role: &str, cluster_role: &str) {
    let Some(entries) = node.entries_mut() else {
        return;
    };
    replace_field(entries, "kind", |_| {
        vec![Entry::If {
            cond: ".Values.rbac.namespaced".into(),
            then: vec![Entry::field("kind", Node::string(role))],
            otherwise: vec![Entry::field("kind", Node::string(cluster_role))],
        }]
    });
    if let Some(metadata) = node.map_at(&["metadata"]) {
        metadata.retain(|e| !matches!(e, Entry::Field(k, _) if k == "namespace"));
        metadata.push(Entry::when(
            ".Values.rbac.namespaced",
            vec![Entry::field(
                "namespace",
                Node::expr("{{ .Release.Namespace }}"),
            )],
        ));
    }
}

/// A mapping whose entries are all conditional would be left empty (null) when none holds: the
/// condition moves up to its field, which is then written only if one of them holds.
fn lift_conditions(entries: &mut [Entry]) {
    for entry in entries.iter_mut() {
        match entry {
            Entry::Field(key, Node::Map(inner)) => {
                lift_conditions(inner);
                let conds: Option<Vec<String>> = inner
                    .iter()
                    .map(|e| match e {
                        Entry::If {
                            cond, otherwise, ..
                        } if otherwise.is_empty() => Some(cond.clone()),
                        _ => None,
                    })
                    .collect();
                if let Some(mut conds) = conds.filter(|c| !c.is_empty()) {
                    conds.dedup();
                    let mut inner = std::mem::take(inner);
                    let cond = match conds.as_slice() {
                        // One condition for all: said once, around the field.
                        [one] => {
                            inner = inner
                                .into_iter()
                                .flat_map(|e| match e {
                                    Entry::If { then, .. } => then,
                                    other => vec![other],
                                })
                                .collect();
                            one.clone()
                        }
                        many => format!(
                            "or {}",
                            many.iter()
                                .map(|c| format!("({c})"))
                                .collect::<Vec<_>>()
                                .join(" ")
                        ),
                    };
                    *entry = Entry::when(&cond, vec![Entry::Field(key.clone(), Node::Map(inner))]);
                }
            }
            Entry::Field(_, Node::Seq(items)) => {
                for item in items.iter_mut() {
                    if let Item::Node(Node::Map(inner)) = item {
                        lift_conditions(inner);
                    }
                }
            }
            Entry::If {
                then, otherwise, ..
            } => {
                lift_conditions(then);
                lift_conditions(otherwise);
            }
            _ => {}
        }
    }
}
