//! The operator's webhooks, served from the test process and called by the test's API server,
//! as envtest's `WebhookInstallOptions` do: an HTTPS server on a free port of 127.0.0.1 with a
//! certificate of the control plane's CA, and the CRDs' conversion and the webhook
//! configurations pointed at it (`clientConfig.url` with that CA as `caBundle`) instead of the
//! webhook Service of `config/`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context as _, bail};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use base64::prelude::{BASE64_STANDARD, Engine as _};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::time::{Instant, sleep, timeout};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::control_plane::ControlPlane;
use super::{FIELD_MANAGER, NAMESPACE};
use rbuilder_runtime_core::derived;
use rbuilder_runtime_core::harness::{self, CertReloader, SERVICE, TlsListener};
use rbuilder_runtime_core::{Operator, webhook};

/// How long the API server may take to serve a new CRD, or to call a new webhook.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(60);

const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// The webhook server of a test, serving until dropped.
pub(crate) struct WebhookServer {
    address: SocketAddr,
    probes: Arc<Probes>,
    /// The reviews the API server sent, by path and namespace.
    calls: Calls,
    _stop: DropGuard,
}

/// How many reviews the API server sent, by path and by the namespace of the object reviewed
/// ("" for one of the cluster): the tests of a shared control plane each count their own.
type Calls = Arc<Mutex<HashMap<(String, String), usize>>>;

/// The largest review counted: the API server sends at most 3 MiB objects (etcd's limit), two
/// of them in an update's review.
const REVIEW_LIMIT: usize = 8 << 20;

/// The calls the probe webhooks got (see [`wait_until_called`]).
#[derive(Default)]
struct Probes {
    mutating: AtomicUsize,
    validating: AtomicUsize,
}

/// The probe webhooks' paths.
const PROBE_MUTATING: &str = "/rbuilder-envtest-probe/mutate";
const PROBE_VALIDATING: &str = "/rbuilder-envtest-probe/validate";

/// The label that the probe ConfigMaps carry, and the probe webhooks select.
const PROBE_LABEL: &str = "envtest.rbuilder.io/probe";

impl WebhookServer {
    /// Serves `operator`'s webhooks on a free port of 127.0.0.1, with a certificate signed by
    /// `plane`'s CA.
    pub(crate) async fn start(
        operator: &'static Operator,
        plane: &ControlPlane,
    ) -> anyhow::Result<Self> {
        let pem = plane.ca().server("rbuilder-envtest-webhooks")?;
        let (cert_path, key_path) = (
            plane.dir().join("webhook.crt"),
            plane.dir().join("webhook.key"),
        );
        std::fs::write(&cert_path, &pem.cert).context("cannot write the webhook certificate")?;
        std::fs::write(&key_path, &pem.key).context("cannot write the webhook key")?;
        let certificate = CertReloader::from_files(cert_path, key_path)?;
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let listener = TlsListener::new(listener, harness::server_config(certificate)?)?;
        let probes = Arc::new(Probes::default());
        let calls = Calls::default();
        let router = probe_routes(Arc::clone(&probes))
            .merge(webhook::router(operator.parts().webhooks))
            .layer(middleware::from_fn_with_state(Arc::clone(&calls), count));
        let stop = CancellationToken::new();
        tokio::spawn(harness::serve("webhooks", listener, router, stop.clone()));
        Ok(Self {
            address,
            probes,
            calls,
            _stop: stop.drop_guard(),
        })
    }

    /// How many reviews the API server sent to `path`, of objects in `namespace` if given.
    pub(crate) fn calls(&self, path: &str, namespace: Option<&str>) -> usize {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let counted = calls.iter().filter(|((to, of), _)| {
            to == path && namespace.is_none_or(|namespace| namespace == of)
        });
        counted.map(|(_, count)| count).sum()
    }

    /// The URL the API server calls the webhooks at, but their path.
    pub(crate) fn base_url(&self) -> String {
        format!("https://{}", self.address)
    }
}

/// Counts a request to its path and the namespace of the object it reviews, then serves it.
async fn count(State(calls): State<Calls>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, REVIEW_LIMIT)
        .await
        .unwrap_or_default();
    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
    {
        let mut calls = calls.lock().unwrap_or_else(PoisonError::into_inner);
        *calls
            .entry((path, reviewed_namespace(&review)))
            .or_default() += 1;
    }
    next.run(Request::from_parts(parts, Body::from(body))).await
}

/// The namespace of the object an AdmissionReview or ConversionReview is about ("" if it is
/// of the cluster, or not a review).
fn reviewed_namespace(review: &Value) -> String {
    let request = &review["request"];
    let namespace = match &request["namespace"] {
        Value::String(namespace) => namespace.as_str(),
        _ => request["objects"][0]["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default(),
    };
    namespace.to_owned()
}

/// Routes answering the probe webhooks (allowed, always) and counting their calls.
fn probe_routes(probes: Arc<Probes>) -> Router {
    let answer = |count: fn(&Probes) -> &AtomicUsize| {
        let probes = Arc::clone(&probes);
        post(move |body: Bytes| async move {
            count(&probes).fetch_add(1, Ordering::Relaxed);
            let review: Value = serde_json::from_slice(&body).unwrap_or_default();
            let answer = json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {"uid": review["request"]["uid"], "allowed": true},
            });
            (
                [(header::CONTENT_TYPE, "application/json")],
                answer.to_string(),
            )
        })
    };
    Router::new()
        .route(PROBE_MUTATING, answer(|p| &p.mutating))
        .route(PROBE_VALIDATING, answer(|p| &p.validating))
}

/// Installs `operator`'s CRDs, with their conversion webhooks (if any) served at `base_url`
/// with a certificate of `ca`, and waits until the API server serves every version of each.
pub(crate) async fn install_crds(
    client: &Client,
    operator: &Operator,
    base_url: Option<&str>,
    ca: &str,
) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut installed = Vec::new();
    for mut crd in derived::crds(operator)? {
        if let Some(conversion) = crd.pointer_mut("/spec/conversion/webhook") {
            let Some(base_url) = base_url else {
                bail!("a CRD converts through a webhook, but the operator serves none");
            };
            conversion["clientConfig"] = client_config(base_url, webhook::CONVERT_PATH, ca);
        }
        let crd: CustomResourceDefinition = serde_json::from_value(crd)?;
        installed.push(apply(&api, &crd).await?);
    }
    for crd in installed {
        wait_until_served(client, &crd).await?;
    }
    Ok(())
}

/// Installs the CustomResourceDefinitions of `yaml` (a CRD file: one document or more; those
/// of other kinds are skipped), and waits until the API server serves every version of each.
pub(crate) async fn install_crd_file(client: &Client, yaml: &str) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let documents: Vec<Value> =
        serde_saphyr::from_multiple(yaml).context("the CRD file is not YAML")?;
    let mut installed = Vec::new();
    for document in documents {
        if document["kind"] != "CustomResourceDefinition" {
            continue;
        }
        let crd: CustomResourceDefinition = serde_json::from_value(as_new(document))?;
        installed.push(apply(&api, &crd).await?);
    }
    if installed.is_empty() {
        bail!("the CRD file holds no CustomResourceDefinition");
    }
    for crd in installed {
        wait_until_served(client, &crd).await?;
    }
    Ok(())
}

/// `crd` as an object to create: without what the API server it was read from set (a file
/// from `kubectl get crd <name> -o yaml` holds its uid, resourceVersion, creationTimestamp,
/// generation, maybe managedFields, and its status), which this API server would refuse (an
/// apply naming another cluster's uid is a conflict) or writes itself. Its name, labels,
/// annotations and spec are the CRD.
fn as_new(mut crd: Value) -> Value {
    if let Some(metadata) = crd.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.retain(|key, _| matches!(key.as_str(), "name" | "labels" | "annotations"));
    }
    if let Some(crd) = crd.as_object_mut() {
        crd.remove("status");
    }
    crd
}

/// Installs the Mutating- and ValidatingWebhookConfigurations of `operator`, calling the
/// webhooks at `base_url` with a certificate of `ca`, with `namespace` as the manager's (in the
/// selectors of the webhooks that spare the manager's namespace or look only there): one
/// namespace, or on a shared control plane, each test's ([`TEST_NAMESPACE_LABEL`]).
pub(crate) async fn install_configurations(
    client: &Client,
    operator: &Operator,
    base_url: &str,
    ca: &str,
    namespace: ManagerNamespace<'_>,
) -> anyhow::Result<()> {
    let configurations = derived::webhook_configurations(operator)?;
    for mut configuration in configurations {
        let kind = configuration["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        for webhook in configuration["webhooks"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            let path = webhook["clientConfig"]["service"]["path"].clone();
            webhook["clientConfig"] = client_config(base_url, path.as_str().unwrap_or("/"), ca);
            for selector in ["namespaceSelector", "objectSelector"] {
                name_the_namespace(&mut webhook[selector], namespace);
            }
        }
        match kind.as_str() {
            "MutatingWebhookConfiguration" => {
                let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
                apply(&api, &serde_json::from_value(configuration)?).await?;
            }
            _ => {
                let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
                apply(&api, &serde_json::from_value(configuration)?).await?;
            }
        }
    }
    Ok(())
}

/// `clientConfig` calling `path` under `base_url`, trusting `ca`.
fn client_config(base_url: &str, path: &str, ca: &str) -> Value {
    json!({"url": format!("{base_url}{path}"), "caBundle": BASE64_STANDARD.encode(ca)})
}

/// The label of the namespaces of the tests of a shared control plane.
pub(crate) const TEST_NAMESPACE_LABEL: &str = "envtest.rbuilder.io/test-namespace";

/// The manager's namespace, as the webhooks' selectors name it.
#[derive(Clone, Copy)]
pub(crate) enum ManagerNamespace<'a> {
    /// One namespace.
    Named(&'a str),
    /// The namespace of each test of a shared control plane, as an operator scoped to its
    /// namespace runs in each: the namespaces with [`TEST_NAMESPACE_LABEL`].
    EachTests,
}

/// `selector` with the manager's namespace, `system` until kustomize names it, named.
fn name_the_namespace(selector: &mut Value, namespace: ManagerNamespace<'_>) {
    let expressions = selector["matchExpressions"].as_array_mut();
    for expression in expressions.into_iter().flatten() {
        let values = expression["values"].as_array_mut().into_iter().flatten();
        let named = values.filter(|value| *value == SERVICE.1);
        match namespace {
            ManagerNamespace::Named(namespace) => named.for_each(|value| *value = namespace.into()),
            ManagerNamespace::EachTests => {
                // `kubernetes.io/metadata.name In [system]`: the namespace the manager watches,
                // which each test's is.
                if named.count() > 0 {
                    *expression = json!({
                        "key": TEST_NAMESPACE_LABEL,
                        "operator": "In",
                        "values": ["true"],
                    });
                }
            }
        }
    }
}

/// Waits until the API server calls the webhook configurations installed before: it reads
/// them from a cache that a watch fills, a moment after they are created. A mutating and a
/// validating probe webhook are installed after them; once a dry-run create of a ConfigMap
/// reaches both probes, the caches hold the configurations installed before them too.
pub(crate) async fn wait_until_called(
    client: &Client,
    server: &WebhookServer,
    ca: &str,
) -> anyhow::Result<()> {
    let name = "rbuilder-envtest-probe";
    let webhook = |path: &str| {
        json!({
            "name": "probe.envtest.rbuilder.io",
            "admissionReviewVersions": ["v1"],
            "clientConfig": client_config(&server.base_url(), path, ca),
            "rules": [{
                "apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["configmaps"],
            }],
            "objectSelector": {"matchLabels": {PROBE_LABEL: "true"}},
            "sideEffects": "None",
            "failurePolicy": "Ignore",
        })
    };
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let probe_mutating = serde_json::from_value(json!({
        "metadata": {"name": name}, "webhooks": [webhook(PROBE_MUTATING)],
    }))?;
    let probe_validating = serde_json::from_value(json!({
        "metadata": {"name": name}, "webhooks": [webhook(PROBE_VALIDATING)],
    }))?;
    apply(&mutating, &probe_mutating).await?;
    apply(&validating, &probe_validating).await?;

    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let probe: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {PROBE_LABEL: "true"}},
    }))?;
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let deadline = Instant::now() + INSTALL_TIMEOUT;
    let probes = &server.probes;
    while probes.mutating.load(Ordering::Relaxed) == 0
        || probes.validating.load(Ordering::Relaxed) == 0
    {
        if Instant::now() > deadline {
            bail!("the API server did not call the webhooks within {INSTALL_TIMEOUT:?}");
        }
        config_maps.create(&dry_run, &probe).await?;
        sleep(POLL_INTERVAL).await;
    }
    mutating.delete(name, &DeleteParams::default()).await?;
    validating.delete(name, &DeleteParams::default()).await?;
    Ok(())
}

/// Waits until `crd` is established and each of its served versions can be listed.
async fn wait_until_served(client: &Client, crd: &CustomResourceDefinition) -> anyhow::Result<()> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let established = await_condition(api, &name, conditions::is_crd_established());
    timeout(INSTALL_TIMEOUT, established)
        .await
        .with_context(|| format!("CRD {name} was not established within {INSTALL_TIMEOUT:?}"))??;
    let deadline = Instant::now() + INSTALL_TIMEOUT;
    let spec = &crd.spec;
    for version in spec.versions.iter().filter(|version| version.served) {
        let resource = ApiResource {
            group: spec.group.clone(),
            version: version.name.clone(),
            api_version: format!("{}/{}", spec.group, version.name),
            kind: spec.names.kind.clone(),
            plural: spec.names.plural.clone(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        while let Err(error) = api.list_metadata(&ListParams::default().limit(1)).await {
            if Instant::now() > deadline {
                bail!("{} is not served: {error}", resource.api_version);
            }
            sleep(POLL_INTERVAL).await;
        }
    }
    Ok(())
}

/// Server-side applies `obj` as the environment.
pub(crate) async fn apply<K>(api: &Api<K>, obj: &K) -> anyhow::Result<K>
where
    K: Resource + Clone + std::fmt::Debug + Serialize + DeserializeOwned,
    K::DynamicType: Default,
{
    let name = obj.meta().name.clone().unwrap_or_default();
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api.patch(&name, &params, &Patch::Apply(obj))
        .await
        .with_context(|| format!("cannot install {} {name}", K::kind(&Default::default())))
}
