//! The runtime's envtest, against a real kube-apiserver and etcd: it starts, installs the CRDs
//! of an operator's code, serves its webhooks from the test process to the API server, runs its
//! controllers with the manager's role only, and leaves nothing behind, a panicking test
//! included.
//!
//! The binaries come from KUBEBUILDER_ASSETS: rbuilder's `make test` builds them with
//! scripts/envtest-assets and runs these tests, which a plain `cargo test` skips.
#![cfg(feature = "testing")]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::core::crd::MergeError;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, CustomResource, CustomResourceExt, ResourceExt};
use rbuilder_runtime::controller::{Action, Controller};
use rbuilder_runtime::envtest::{ControlPlane, Environment, fetch, step};
use rbuilder_runtime::rbac::policy_rule;
use rbuilder_runtime::webhook::{conversion, defaulting, validating};
use rbuilder_runtime::{
    Cache, Context, Defaulter, Denied, Operator, Reconciler, Registration, Validator, Warnings,
    WatchScope, Webhook, register, register_with_state,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A kind of this test's own, served by the test's API server.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "envtest.rbuilder.io",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub struct WidgetSpec {
    pub size: i64,
    /// Written as `null` when unset (no `skip_serializing_if`), as many types do: the object the
    /// API server sends the defaulter lacks it, though the type writes it.
    pub colour: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    pub observed_size: i64,
}

/// Version v2 of the widgets, converted to and from v1 (the hub, and the version stored).
mod v2 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[kube(
        group = "envtest.rbuilder.io",
        version = "v2",
        kind = "Widget",
        namespaced
    )]
    pub struct WidgetSpec {
        pub size: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub colour: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub notes: Option<String>,
    }
}

impl From<v2::Widget> for Widget {
    fn from(w: v2::Widget) -> Self {
        let spec = WidgetSpec {
            size: w.spec.size,
            colour: w.spec.colour,
            notes: w.spec.notes,
        };
        Self {
            metadata: w.metadata,
            spec,
            status: None,
        }
    }
}

impl From<Widget> for v2::Widget {
    fn from(w: Widget) -> Self {
        let spec = v2::WidgetSpec {
            size: w.spec.size,
            colour: w.spec.colour,
            notes: w.spec.notes,
        };
        Self {
            metadata: w.metadata,
            spec,
        }
    }
}

/// Colours what has no colour.
struct Painter;

impl Defaulter for Painter {
    type Resource = Widget;

    fn default(obj: &mut Widget) -> Result<(), Denied> {
        obj.spec.colour.get_or_insert_with(|| "blue".to_owned());
        Ok(())
    }
}

/// Refuses a negative size.
struct SizeCheck;

impl Validator for SizeCheck {
    type Resource = Widget;

    fn validate_create(obj: &Widget) -> Result<Warnings, Denied> {
        if obj.spec.size < 0 {
            return Err(Denied::new("size must not be negative"));
        }
        Ok(Warnings::new())
    }

    fn validate_update(_old: &Widget, new: &Widget) -> Result<Warnings, Denied> {
        Self::validate_create(new)
    }
}

/// Reports the size in the status.
struct Measurer;

impl Reconciler for Measurer {
    type Resource = Widget;
    type Error = kube::Error;
    const NAME: &'static str = "measurer";
    const FINALIZER: Option<&'static str> = None;

    async fn apply(obj: Arc<Widget>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
        let status = WidgetStatus {
            observed_size: obj.spec.size,
        };
        ctx.apply_status(&*obj, &status).await?;
        Ok(Action::await_change())
    }

    fn rbac_rules() -> Vec<k8s_openapi::api::rbac::v1::PolicyRule> {
        vec![
            policy_rule(
                "envtest.rbuilder.io",
                &["widgets"],
                &["get", "list", "watch"],
            ),
            policy_rule("envtest.rbuilder.io", &["widgets/status"], &["patch"]),
        ]
    }
}

/// Like [`Measurer`], but it first writes a ConfigMap, which neither what it declares (its
/// kind, nothing owned) nor its rules (none) grant: the API server must refuse it.
struct Forgetful;

impl Reconciler for Forgetful {
    type Resource = Widget;
    type Error = kube::Error;
    const NAME: &'static str = "forgetful";
    const FINALIZER: Option<&'static str> = None;

    async fn apply(obj: Arc<Widget>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
        let namespace = obj.namespace().unwrap_or_default();
        let config_maps: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &namespace);
        let config_map = ConfigMap {
            metadata: ObjectMeta {
                name: Some(obj.name_any()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        config_maps
            .create(&PostParams::default(), &config_map)
            .await?;
        Measurer::apply(obj, ctx).await
    }
}

/// Fails every reconcile, first with one message, then with another.
struct Flaky;

/// How many times [`Flaky`] has reconciled.
static FLAKY_CALLS: AtomicUsize = AtomicUsize::new(0);

impl Reconciler for Flaky {
    type Resource = Widget;
    type Error = std::io::Error;
    const NAME: &'static str = "flaky";
    const FINALIZER: Option<&'static str> = None;

    async fn apply(_obj: Arc<Widget>, _ctx: Arc<Context>) -> Result<Action, std::io::Error> {
        let message = match FLAKY_CALLS.fetch_add(1, Ordering::Relaxed) {
            0 => "the backend answered 500",
            _ => "the backend answered 403",
        };
        Err(std::io::Error::other(message))
    }

    fn rbac_rules() -> Vec<k8s_openapi::api::rbac::v1::PolicyRule> {
        Measurer::rbac_rules()
    }
}

fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
    rbuilder_runtime::crd::merge_versions(vec![Widget::crd(), v2::Widget::crd()])
}

const MEASURER: Registration = register::<Measurer>();
const FORGETFUL: Registration = register::<Forgetful>();
const FLAKY: Registration = register::<Flaky>();

const PAINTER: Webhook = defaulting::<Painter>();

static OPERATOR: Operator = Operator::new("widgets")
    .controllers(&[MEASURER])
    .webhooks(&[
        PAINTER,
        validating::<SizeCheck>(),
        conversion::<Widget, v2::Widget>(),
    ])
    .crds(crds);

/// An operator scoped to its namespace (`rbuilder init --namespaced`).
const SIZE_CHECK: Webhook = validating::<SizeCheck>();

static NAMESPACED_OPERATOR: Operator = Operator::new("namespaced")
    .webhooks(&[SIZE_CHECK])
    .crds(crds)
    .scope(WatchScope::Namespace);

static FLAKY_OPERATOR: Operator = Operator::new("flaky").controllers(&[FLAKY]).crds(crds);

static FORGETFUL_OPERATOR: Operator = Operator::new("forgetful")
    .controllers(&[FORGETFUL])
    .crds(crds);

/// A kind whose type writes what its objects may leave out: `limits`, which its schema does
/// not default (as in a CRD written by hand or by another tool).
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "envtest.rbuilder.io",
    version = "v1",
    kind = "Gadget",
    namespaced
)]
pub struct GadgetSpec {
    #[serde(default)]
    pub limits: Limits,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct Limits {
    #[serde(default)]
    pub max: i64,
}

/// Sets `limits.max` when it is 0.
struct Limiter;

impl Defaulter for Limiter {
    type Resource = Gadget;

    fn default(obj: &mut Gadget) -> Result<(), Denied> {
        if obj.spec.limits.max == 0 {
            obj.spec.limits.max = 5;
        }
        Ok(())
    }
}

/// Gadget's CRD, without the defaults that schemars gives `limits`.
fn gadget_crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
    let mut crd = serde_json::to_value(Gadget::crd()).expect("a CRD");
    let spec = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties";
    let properties = crd.pointer_mut(spec).expect("the spec's properties");
    properties["limits"]
        .as_object_mut()
        .expect("limits")
        .remove("default");
    properties["limits"]["properties"]["max"]
        .as_object_mut()
        .expect("max")
        .remove("default");
    Ok(vec![serde_json::from_value(crd).expect("a CRD")])
}

static GADGETS: Operator = Operator::new("gadgets")
    .webhooks(&[defaulting::<Limiter>()])
    .crds(gadget_crds);

/// An operator with a webhook for another project's kind: Gadget is not among its CRDs, so
/// its webhook is kept away from the manager's namespace as a built-in type's is, and a test
/// installs Gadget's CRD from its file ([`Environment::install_crds`]).
const LIMITER: Webhook = defaulting::<Limiter>();

static GADGET_USERS: Operator = Operator::new("gadget-users").webhooks(&[LIMITER]);

fn widget(name: &str, size: i64) -> Widget {
    let spec = WidgetSpec {
        size,
        colour: None,
        notes: None,
    };
    Widget::new(name, spec)
}

#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn the_api_server_calls_the_webhooks_served_by_the_test() {
    let env = Environment::start(&OPERATOR).await;
    let widgets: Api<Widget> = env.api();

    step("a widget without a colour is painted by the defaulter");
    // As `kubectl apply` sends it, without a colour: the object the API server sends the
    // defaulter, and applies its patch to, has none, though the type writes `colour: null`.
    let plain = json!({
        "apiVersion": "envtest.rbuilder.io/v1",
        "kind": "Widget",
        "metadata": {"name": "plain"},
        "spec": {"size": 1},
    });
    let params = PatchParams::apply("kubectl");
    let created = widgets.patch("plain", &params, &Patch::Apply(&plain)).await;
    let created = created.expect("the widget is created");
    assert_eq!(created.spec.colour.as_deref(), Some("blue"));

    step("a widget of negative size is refused by the validator, with its message");
    let refused = widgets
        .create(&PostParams::default(), &widget("negative", -1))
        .await
        .expect_err("a negative size is refused");
    let message = refused.to_string();
    assert!(
        message.contains(
            "admission webhook \"vwidget-v1.kb.io\" denied the request: size must not be negative"
        ),
        "{message}"
    );
}

/// The API server applies a defaulter's patch to the object it sent, not to what the type
/// would write: an object without `limits` gets them.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_defaulters_patch_applies_to_what_the_api_server_sent() {
    let env = Environment::start(&GADGETS).await;
    let gadgets: Api<Gadget> = env.api();
    let bare = json!({
        "apiVersion": "envtest.rbuilder.io/v1",
        "kind": "Gadget",
        "metadata": {"name": "bare"},
        "spec": {},
    });
    let params = PatchParams::apply("kubectl");
    let created = gadgets.patch("bare", &params, &Patch::Apply(&bare)).await;
    let created = created.expect("a gadget without limits is created, defaulted");
    assert_eq!(created.spec.limits.max, 5);
}

/// Reviews larger than axum's default limit (2 MiB) are read: the update of a 1.2 MB object,
/// whose review carries it twice. Large objects convert too (kube-apiserver 1.37 sends a list's
/// objects to the conversion webhook one review each).
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn large_objects_pass_through_the_webhooks() {
    let env = Environment::start(&OPERATOR).await;
    let widgets: Api<Widget> = env.api();
    let large = |name: &str| {
        let mut large = widget(name, 1);
        large.spec.notes = Some("x".repeat(1_200_000));
        large
    };
    step("create a widget of 1.2 MB, then update it");
    let mut first = large("large-1");
    env.apply(&widgets, &first).await;
    first.spec.size = 2;
    let updated = env.try_apply(&widgets, &first).await;
    let updated = updated.expect("the update is admitted by both webhooks");
    assert_eq!(updated.spec.size, 2);

    step("list three of them in v2, through the conversion webhook");
    for name in ["large-2", "large-3"] {
        env.apply(&widgets, &large(name)).await;
    }
    let in_v2: Api<v2::Widget> = env.api();
    let listed = in_v2.list(&ListParams::default()).await;
    let listed = listed.expect("the list is converted");
    assert_eq!(listed.items.len(), 3);
}

/// Reports in its widget's status how many keys the ConfigMap of the widget's name holds, -1
/// for no ConfigMap: read from the cache its watch of ConfigMaps keeps, a typed `Cache` held
/// in its state.
struct Pairer;

impl Reconciler<Cache<ConfigMap>> for Pairer {
    type Resource = Widget;
    type Error = kube::Error;
    const NAME: &'static str = "pairer";
    const FINALIZER: Option<&'static str> = None;

    async fn apply(
        obj: Arc<Widget>,
        ctx: Arc<Context<Cache<ConfigMap>>>,
    ) -> Result<Action, kube::Error> {
        let key = ObjectRef::new(&obj.name_any()).within(&obj.namespace().unwrap_or_default());
        let cached = ctx.state().get(&key);
        let keys = match cached.map_err(|error| kube::Error::Service(error.into()))? {
            Some(config) => config.data.as_ref().map_or(0, |data| data.len() as i64),
            None => -1,
        };
        let status = WidgetStatus {
            observed_size: keys,
        };
        ctx.apply_status(&*obj, &status).await?;
        Ok(Action::await_change())
    }

    fn rbac_rules() -> Vec<k8s_openapi::api::rbac::v1::PolicyRule> {
        let mut rules = Measurer::rbac_rules();
        rules.push(policy_rule("", &["configmaps"], &["get", "list", "watch"]));
        rules
    }

    /// A ConfigMap reconciles the widget of its name.
    fn watches(
        controller: Controller<Widget>,
        ctx: &Context<Cache<ConfigMap>>,
    ) -> Controller<Widget> {
        let configs = ctx.state().watch_watched(ctx, watcher::Config::default());
        controller.watches_stream(configs, |config| {
            let namespace = config.namespace().unwrap_or_default();
            Some(ObjectRef::new(&config.name_any()).within(&namespace))
        })
    }
}

const PAIRER: Registration = register_with_state::<Pairer, Cache<ConfigMap>>();

static PAIRS: Operator = Operator::new("pairs").controllers(&[PAIRER]).crds(crds);

fn widget_status(widget: Widget) -> Option<i64> {
    widget.status.map(|status| status.observed_size)
}

/// A controller's first reconcile waits for its caches: a ConfigMap there before the
/// controller started is seen, not taken for missing. Reconciles read the cache, not the API
/// server, and a change of a cached object reconciles again with the change.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_controller_reads_what_it_watches_from_a_cache() {
    let env = Environment::start(&PAIRS).await;
    let widgets: Api<Widget> = env.api();
    let configs: Api<ConfigMap> = env.api();
    let config = |keys: &[&str]| ConfigMap {
        metadata: ObjectMeta {
            name: Some("paired".into()),
            ..ObjectMeta::default()
        },
        data: Some(
            keys.iter()
                .map(|k| (k.to_string(), String::new()))
                .collect(),
        ),
        ..ConfigMap::default()
    };
    env.apply(&configs, &config(&["a", "b"])).await;
    env.apply(&widgets, &widget("paired", 1)).await;

    step("started after both exist, the controller sees the ConfigMap at once");
    env.run_with_state(&PAIRER, Cache::<ConfigMap>::new()).await;
    env.wait_for("the status", async || {
        fetch(&widgets, "paired")
            .await
            .map(widget_status)?
            .ok_or("no status".to_owned())
    })
    .await;
    let first = fetch(&widgets, "paired").await.map(widget_status);
    assert_eq!(
        first,
        Ok(Some(2)),
        "the first reconcile did not see the ConfigMap"
    );
    let reads = env.reads();

    step("a key added to the ConfigMap shows in the status, without a read");
    env.apply(&configs, &config(&["a", "b", "c"])).await;
    env.wait_for("the status to count 3 keys", async || {
        match fetch(&widgets, "paired").await.map(widget_status)? {
            Some(3) => Ok(()),
            other => Err(format!("status {other:?}")),
        }
    })
    .await;
    assert_eq!(env.reads(), reads, "a reconcile read from the API server");
}

#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_controller_runs_as_the_manager() {
    let env = Environment::start(&OPERATOR).await;
    env.run(&MEASURER).await;
    let widgets: Api<Widget> = env.api();
    env.apply(&widgets, &widget("measured", 3)).await;
    env.wait_for("the status to report size 3", async || {
        let widget = fetch(&widgets, "measured").await?;
        match widget.status {
            Some(status) if status.observed_size == 3 => Ok(()),
            other => Err(format!("status {other:?}")),
        }
    })
    .await;
}

/// A reconcile that computes the status the object has sends nothing: `apply_status` leaves
/// out an apply that would change nothing.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn an_unchanged_status_is_not_applied_again() {
    let env = Environment::start(&OPERATOR).await;
    env.run(&MEASURER).await;
    let widgets: Api<Widget> = env.api();
    env.apply(&widgets, &widget("steady", 3)).await;
    // The first reconcile writes the status (its own write brings no second one).
    env.wait_for("the status written and its reconcile done", async || {
        let status = fetch(&widgets, "steady").await?.status;
        match (status.map(|s| s.observed_size), env.reconciles(&MEASURER)) {
            (Some(3), done) if done >= 1 => Ok(()),
            (status, done) => Err(format!("status {status:?}, {done} reconciles")),
        }
    })
    .await;
    let (writes, reconciles) = (env.writes(), env.reconciles(&MEASURER));

    step("a label added by hand brings a reconcile that writes nothing");
    let label = json!({"metadata": {"labels": {"touched": "yes"}}});
    widgets
        .patch("steady", &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("the label added");
    env.wait_for("one more reconcile", async || {
        match env.reconciles(&MEASURER) {
            done if done > reconciles => Ok(()),
            done => Err(format!("{done} reconciles")),
        }
    })
    .await;
    assert_eq!(
        env.writes(),
        writes,
        "the unchanged status was applied again"
    );
}

/// The controllers run with the manager's role only: what it does not grant, the API server
/// refuses, and the runtime reports it in a Warning Event.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_controller_gets_only_what_its_rules_grant() {
    let env = Environment::start(&FORGETFUL_OPERATOR).await;
    env.run(&FORGETFUL).await;
    let widgets: Api<Widget> = env.api();
    env.apply(&widgets, &widget("unmeasured", 3)).await;
    let events: Api<Event> = env.api();
    let note = env
        .wait_for("a Warning Event about the refused ConfigMap", async || {
            let list = events
                .list(&ListParams::default())
                .await
                .map_err(|e| e.to_string())?;
            let failed = list.items.into_iter().find(|event| {
                event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("unmeasured")
                    && event.type_.as_deref() == Some("Warning")
            });
            failed
                .and_then(|event| event.note)
                .ok_or_else(|| "no Warning Event yet".to_owned())
        })
        .await;
    assert!(note.contains("forbidden"), "{note}");
    assert!(
        note.contains("system:serviceaccount:rbuilder-envtest-system:controller-manager"),
        "{note}"
    );
    let widget = fetch(&widgets, "unmeasured").await.expect("the widget");
    assert!(widget.status.is_none(), "{:?}", widget.status);
}

/// An operator scoped to its namespace is sent the objects of that namespace only: another
/// installation of it, in another namespace, validates those.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_namespaced_operators_webhooks_see_its_namespace_only() {
    let env = Environment::start(&NAMESPACED_OPERATOR).await;
    let webhook = &SIZE_CHECK;
    let ours: Api<Widget> = env.api();
    env.apply(&ours, &widget("ours", 1)).await;
    let calls = env.webhook_calls(webhook);
    assert!(calls > 0, "the webhook was not called in its namespace");

    let namespaces: Api<Namespace> = Api::all(env.client());
    let other = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}});
    let params = PatchParams::apply("test");
    let created = namespaces
        .patch("other", &params, &Patch::Apply(&other))
        .await;
    created.expect("another namespace");
    let theirs: Api<Widget> = Api::namespaced(env.client(), "other");
    env.apply(&theirs, &widget("theirs", -1)).await;
    assert_eq!(
        env.webhook_calls(webhook),
        calls,
        "called for another namespace"
    );
}

/// A failure whose message changes is a new Warning Event with the new message, not one more
/// of the first Event's series (whose note cannot change).
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn each_failure_message_shows_in_an_event() {
    let env = Environment::start(&FLAKY_OPERATOR).await;
    env.run(&FLAKY).await;
    let widgets: Api<Widget> = env.api();
    env.apply(&widgets, &widget("flaky", 1)).await;
    let events: Api<Event> = env.api();
    let notes = env
        .wait_for("a Warning Event for each message", async || {
            let list = events.list(&ListParams::default()).await;
            let list = list.map_err(|e| e.to_string())?;
            let notes: Vec<String> = list
                .items
                .into_iter()
                .filter(|event| event.type_.as_deref() == Some("Warning"))
                // The API server writes Events of its own in this namespace (the Service IP
                // repair): only the Widget's count.
                .filter(|event| {
                    event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("flaky")
                })
                .filter_map(|event| event.note)
                .collect();
            let both = ["500", "403"];
            if both
                .iter()
                .all(|code| notes.iter().any(|note| note.contains(code)))
            {
                Ok(notes)
            } else {
                Err(format!("the Warning Events say {notes:?}"))
            }
        })
        .await;
    assert_eq!(notes.len(), 2, "{notes:?}");
}

/// A test that panics still stops the control plane and deletes its folder.
#[test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
fn a_panicking_test_leaves_nothing_behind() {
    let (sender, receiver) = std::sync::mpsc::channel::<(PathBuf, String)>();
    let test = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let env = Environment::start(&OPERATOR).await;
            let plane = env.control_plane();
            let sent = sender.send((plane.dir().to_owned(), plane.server().to_owned()));
            sent.expect("send the folder");
            panic!("the test fails");
        })
    });
    assert!(test.join().is_err(), "the test thread panicked");
    let (dir, server) = receiver.recv().expect("the control plane's folder");
    assert!(!dir.exists(), "{} is left behind", dir.display());
    let address = server.trim_start_matches("https://");
    let connected = std::net::TcpStream::connect_timeout(
        &address.parse().expect("an address"),
        Duration::from_secs(1),
    );
    assert!(
        connected.is_err(),
        "the API server at {server} still answers"
    );
}

/// A control plane of its own, without an operator: its kubeconfig works for other clients.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_bare_control_plane_serves_the_kubernetes_api() {
    let plane = ControlPlane::start().await.expect("a control plane");
    let client = plane.client().await.expect("a client");
    let version = client.apiserver_version().await.expect("/version");
    assert_eq!(version.major, "1");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
    let default = namespaces
        .get("default")
        .await
        .expect("the default namespace");
    assert_eq!(default.name_any(), "default");
    let kubeconfig = std::fs::read_to_string(plane.kubeconfig_path()).expect("the kubeconfig");
    assert!(kubeconfig.contains(plane.server()), "{kubeconfig}");
    let value: serde_json::Value = serde_json::from_str(&kubeconfig).expect("JSON");
    assert_eq!(value["current-context"], json!("envtest"));
}

/// The webhook of another project's kind: its CRD installed from a CRD file (a document of
/// another kind in it skipped), the API server calls the webhook for an object in the tests'
/// namespace.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_webhook_for_another_projects_kind_sees_its_objects_once_its_crd_is_installed() {
    let env = Environment::start(&GADGET_USERS).await;
    let crds = gadget_crds().expect("the CRD");
    let file = format!(
        "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: not-a-crd\n---\n{}",
        serde_saphyr::to_string(&crds[0]).expect("YAML")
    );
    env.install_crds(&file).await;

    step("a gadget without limits gets them from the webhook");
    let gadgets: Api<Gadget> = env.api();
    let gadget = Gadget::new("plain", GadgetSpec::default());
    let created = env.apply(&gadgets, &gadget).await;
    assert_eq!(created.spec.limits.max, 5);
    assert!(env.webhook_calls(&LIMITER) > 0);
}

/// Another project's CRD as `kubectl get crd <name> -o yaml` writes it (what
/// docs/migrating-from-kubebuilder.md tells a reader to run): with the uid, resourceVersion,
/// creationTimestamp, generation and status the API server it was read from set. It installs
/// into the tests' control plane as a file of the project's own does.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_crd_file_read_from_a_cluster_installs_too() {
    let yaml = {
        // The cluster it is read from: Gadget's CRD is that operator's own.
        let cluster = Environment::start(&GADGETS).await;
        let crds: Api<CustomResourceDefinition> = Api::all(cluster.client());
        let mut served = crds
            .get("gadgets.envtest.rbuilder.io")
            .await
            .expect("the CRD");
        assert!(served.metadata.uid.is_some() && served.status.is_some());
        // kubectl leaves them out unless asked (--show-managed-fields).
        served.metadata.managed_fields = None;
        serde_saphyr::to_string(&served).expect("YAML")
    };
    let env = Environment::start(&GADGET_USERS).await;
    env.install_crds(&yaml).await;

    step("a gadget without limits gets them from the webhook");
    let gadgets: Api<Gadget> = env.api();
    let created = env
        .apply(&gadgets, &Gadget::new("plain", GadgetSpec::default()))
        .await;
    assert_eq!(created.spec.limits.max, 5);
}

/// Tests on the control plane the binary's tests share each work in a namespace of their own:
/// a controller one runs reconciles its objects only, and each counts the webhook calls about
/// its own objects, though both have the same names.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn tests_sharing_a_control_plane_see_their_own_objects_only() {
    let (first, second) = (
        Environment::shared(&OPERATOR).await,
        Environment::shared(&OPERATOR).await,
    );
    let (first_plane, second_plane) = (first.control_plane(), second.control_plane());
    assert_eq!(
        first_plane.server(),
        second_plane.server(),
        "one control plane"
    );
    assert_ne!(first.namespace(), second.namespace());

    step("the first test runs the controller; each applies a widget of the same name");
    first.run(&MEASURER).await;
    let (ours, theirs): (Api<Widget>, Api<Widget>) = (first.api(), second.api());
    first.apply(&ours, &widget("shared", 3)).await;
    assert_eq!(first.webhook_calls(&PAINTER), 1);
    assert_eq!(second.webhook_calls(&PAINTER), 0, "the first test's call");
    second.apply(&theirs, &widget("shared", 4)).await;
    assert_eq!(second.webhook_calls(&PAINTER), 1);
    first
        .wait_for("the first test's widget to be measured", async || {
            let widget = fetch(&ours, "shared").await?;
            widget_status(widget).ok_or("no status".to_owned())
        })
        .await;

    step("the second test's widget is not the first test's controller's");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let untouched = fetch(&theirs, "shared").await.map(widget_status);
    assert_eq!(
        untouched,
        Ok(None),
        "reconciled by another test's controller"
    );
    assert_eq!(first.reconciles(&MEASURER), 1);

    step("its own controller measures it");
    second.run(&MEASURER).await;
    second
        .wait_for(
            "the second test's widget to be measured",
            async || match fetch(&theirs, "shared").await.map(widget_status)? {
                Some(4) => Ok(()),
                other => Err(format!("status {other:?}")),
            },
        )
        .await;
}

/// Set by [`a_shared_control_plane_stops_when_the_tests_end`] for the test binary it runs.
const SHARED_PLANE_CHILD: &str = "RBUILDER_ENVTEST_SHARED_PLANE_CHILD";

/// The part of [`a_shared_control_plane_stops_when_the_tests_end`] that runs in a test binary
/// of its own: it starts the shared control plane and prints where it is. Run otherwise, it
/// starts nothing.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_shared_control_plane_for_the_test_below() {
    if std::env::var_os(SHARED_PLANE_CHILD).is_none() {
        return;
    }
    let env = Environment::shared(&OPERATOR).await;
    let plane = env.control_plane();
    println!("plane: {} {}", plane.dir().display(), plane.server());
}

/// The shared control plane outlives every test, and is never dropped: when the test binary
/// exits, its processes stop and its folder goes.
#[test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
fn a_shared_control_plane_stops_when_the_tests_end() {
    let binary = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(binary)
        .args(["--ignored", "--exact", "--nocapture"])
        .arg("a_shared_control_plane_for_the_test_below")
        .env(SHARED_PLANE_CHILD, "1")
        .output()
        .expect("run the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let line = stdout.lines().find_map(|line| line.strip_prefix("plane: "));
    let (dir, server) = line.and_then(|line| line.split_once(' ')).expect(&stdout);
    let address = server.trim_start_matches("https://");
    let address = address.parse().expect("an address");
    let mut left = 100;
    let answers = || std::net::TcpStream::connect_timeout(&address, Duration::from_secs(1));
    while (PathBuf::from(dir).exists() || answers().is_ok()) && left > 0 {
        std::thread::sleep(Duration::from_millis(100));
        left -= 1;
    }
    assert!(!PathBuf::from(dir).exists(), "{dir} is left behind");
    assert!(
        answers().is_err(),
        "the API server at {server} still answers"
    );
}

/// On a shared control plane, the webhooks of an operator scoped to its namespace look at each
/// test's namespace, as the manager's look at the one it runs in, and not elsewhere.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_namespaced_operators_webhooks_see_the_tests_namespaces_on_a_shared_control_plane() {
    let (first, second) = (
        Environment::shared(&NAMESPACED_OPERATOR).await,
        Environment::shared(&NAMESPACED_OPERATOR).await,
    );
    for env in [&first, &second] {
        step(format!(
            "refused in the test's namespace {}",
            env.namespace()
        ));
        let ours: Api<Widget> = env.api();
        let refused = env.try_apply(&ours, &widget("negative", -1)).await;
        let message = refused.expect_err("a negative size is refused").to_string();
        assert!(message.contains("size must not be negative"), "{message}");
        assert_eq!(env.webhook_calls(&SIZE_CHECK), 1);
    }

    step("admitted in a namespace of no test");
    let elsewhere: Api<Widget> = Api::namespaced(first.client(), "default");
    first.apply(&elsewhere, &widget("negative", -1)).await;
}
