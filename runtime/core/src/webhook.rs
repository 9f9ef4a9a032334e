//! Admission and conversion webhooks, as controller-runtime serves them: one HTTPS server
//! (:9443) with a `/mutate-<group>-<version>-<kind>` path per defaulting webhook, a
//! `/validate-...` path per validating webhook, and `/convert` for kinds with several versions.
//!
//! The project implements [`Defaulter`] and [`Validator`] for a kind, and `From` (or `TryFrom`)
//! between the kind's versions, and lists their registrations ([`defaulting`], [`validating`],
//! [`conversion`]) in its `Operator`. The runtime turns AdmissionReviews into typed objects and
//! back: a defaulter changes the object, and the runtime answers the JSON patch between the
//! two. An error or a panic in those functions answers an admission error; the manager carries
//! on.

use std::fmt::{Debug, Display};
use std::panic::{AssertUnwindSafe, catch_unwind};

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use base64::prelude::{BASE64_STANDARD, Engine as _};
use kube::Resource;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use kube::core::{ApiResource, DynamicObject, Status};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tracing::warn;

use crate::admission;

/// The path of the conversion webhook, shared by every kind.
pub const CONVERT_PATH: &str = admission::CONVERT_PATH;

/// Messages the API server passes on to the client (kubectl prints `Warning: ...`) with a
/// request it accepts.
pub type Warnings = Vec<String>;

/// Why a webhook refuses a request: the message the client sees (`kubectl apply` prints
/// `admission webhook "..." denied the request: <message>`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Denied(pub String);

impl Denied {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// What a webhook's kind must be: a Kubernetes object that the runtime can read and write.
pub trait WebhookResource:
    Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Serialize + 'static
{
}

impl<K> WebhookResource for K where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Serialize + 'static
{
}

/// A defaulting (mutating) webhook: sets what a new or changed object leaves unset, before the
/// API server validates and stores it. Implemented with [`Validator`] by a unit struct per
/// kind and version, and listed in the operator's webhooks with [`defaulting`] and
/// [`validating`]:
///
/// ```
/// use rbuilder_runtime::webhook::{self, Defaulter, Denied, Validator, Warnings, Webhook};
/// # use k8s_openapi::api::core::v1::ConfigMap as Site;
///
/// pub struct SiteWebhook;
///
/// pub const DEFAULTING: Webhook = webhook::defaulting::<SiteWebhook>();
/// pub const VALIDATING: Webhook = webhook::validating::<SiteWebhook>();
///
/// impl Defaulter for SiteWebhook {
///     type Resource = Site;
///
///     fn default(site: &mut Site) -> Result<(), Denied> {
///         let labels = site.metadata.labels.get_or_insert_with(Default::default);
///         labels.entry("app.kubernetes.io/name".into()).or_insert_with(|| "site".into());
///         Ok(())
///     }
/// }
///
/// impl Validator for SiteWebhook {
///     type Resource = Site;
///
///     fn validate_create(site: &Site) -> Result<Warnings, Denied> {
///         match site.data.as_ref().and_then(|data| data.get("host")) {
///             Some(_) => Ok(Warnings::new()),
///             None => Err(Denied::new("data.host is required")),
///         }
///     }
///
///     fn validate_update(_old: &Site, new: &Site) -> Result<Warnings, Denied> {
///         Self::validate_create(new)
///     }
/// }
///
/// let mut site = Site::default();
/// SiteWebhook::default(&mut site).expect("defaulted");
/// assert!(SiteWebhook::validate_create(&site).is_err());
/// # let _ = (DEFAULTING, VALIDATING);
/// ```
pub trait Defaulter: 'static {
    /// The kind, in one version, whose objects are defaulted.
    type Resource: WebhookResource;

    /// Changes `obj` in place; the runtime sends the API server the difference as a JSON patch.
    /// An error refuses the request with its message.
    fn default(obj: &mut Self::Resource) -> Result<(), Denied>;
}

/// A validating webhook: accepts or refuses creations, updates and deletions with checks that
/// the CRD's schema cannot express.
pub trait Validator: 'static {
    /// The kind, in one version, whose objects are validated.
    type Resource: WebhookResource;

    /// Checks a new object.
    fn validate_create(obj: &Self::Resource) -> Result<Warnings, Denied>;

    /// Checks a change from `old` to `new`.
    fn validate_update(old: &Self::Resource, new: &Self::Resource) -> Result<Warnings, Denied>;

    /// Whether the API server sends deletions to [`Validator::validate_delete`]. `false`, as
    /// in kubebuilder: a validator that refuses deletions sets it to `true`, and `make
    /// manifests` adds DELETE to its configuration.
    const VALIDATE_DELETE: bool = false;

    /// Checks a deletion of `obj`, when [`Validator::VALIDATE_DELETE`] is `true`.
    fn validate_delete(obj: &Self::Resource) -> Result<Warnings, Denied> {
        let _ = obj;
        Ok(Warnings::new())
    }
}

/// What a webhook does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WebhookType {
    /// A [`Defaulter`], in a MutatingWebhookConfiguration.
    Defaulting,
    /// A [`Validator`], in a ValidatingWebhookConfiguration.
    Validating,
    /// Conversion between the versions of a kind, in its CRD's `conversion` stanza.
    Conversion,
}

/// What the manager and the `manifests` binary need to know about one webhook.
pub struct Webhook {
    pub webhook_type: WebhookType,
    /// The kind and version it is for; for a conversion, the hub (the version every other
    /// converts through, not necessarily the one stored).
    pub resource: fn() -> ApiResource,
    /// The operations the API server sends an admission webhook (none for a conversion).
    pub operations: &'static [&'static str],
    /// The path given to `create webhook --defaulting-path`/`--validation-path`, if any: the
    /// server's route and the configuration's `clientConfig.service.path` both read
    /// [`Webhook::path`], so they cannot disagree.
    custom_path: Option<&'static str>,
    handler: Handler,
}

/// Answers an AdmissionRequest; also gets the request's object as the API server sent it.
type AdmissionHandler = fn(AdmissionRequest<DynamicObject>, &Value) -> AdmissionResponse;

enum Handler {
    Admission(AdmissionHandler),
    /// A version that converts to and from the hub.
    Conversion(Spoke),
}

/// One version of a kind, converted to and from its hub with `From` or `TryFrom` both ways.
#[derive(Clone, Copy)]
struct Spoke {
    resource: fn() -> ApiResource,
    to_hub: fn(Value) -> Result<Value, String>,
    from_hub: fn(Value) -> Result<Value, String>,
}

/// What admission webhooks are sent, unless a validator asks for deletions too.
const CREATE_UPDATE: &[&str] = &["CREATE", "UPDATE"];

/// The registration of the defaulting webhook `D`, for the project's list of webhooks.
pub const fn defaulting<D: Defaulter>() -> Webhook {
    Webhook {
        webhook_type: WebhookType::Defaulting,
        resource: api_resource::<D::Resource>,
        operations: CREATE_UPDATE,
        custom_path: None,
        handler: Handler::Admission(default_request::<D>),
    }
}

/// [`defaulting`], served at `path` (as controller-runtime's `WithDefaulterCustomPath`)
/// instead of `/mutate-<group>-<version>-<kind>`.
pub const fn defaulting_at<D: Defaulter>(path: &'static str) -> Webhook {
    Webhook {
        custom_path: Some(path),
        ..defaulting::<D>()
    }
}

/// [`validating`], served at `path` (as controller-runtime's `WithValidatorCustomPath`)
/// instead of `/validate-<group>-<version>-<kind>`.
pub const fn validating_at<V: Validator>(path: &'static str) -> Webhook {
    Webhook {
        custom_path: Some(path),
        ..validating::<V>()
    }
}

/// The registration of the validating webhook `V`, for the project's list of webhooks.
pub const fn validating<V: Validator>() -> Webhook {
    Webhook {
        webhook_type: WebhookType::Validating,
        resource: api_resource::<V::Resource>,
        operations: if V::VALIDATE_DELETE {
            &["CREATE", "UPDATE", "DELETE"]
        } else {
            CREATE_UPDATE
        },
        custom_path: None,
        handler: Handler::Admission(validate_request::<V>),
    }
}

/// The conversion between version `S` of a kind and its hub `Hub`, the version every other
/// converts through, with `From` (or `TryFrom`, for a conversion that can fail) both ways, as
/// kubebuilder's hub and spokes: one registration per spoke version, all served by `/convert`,
/// which converts between two spokes through the hub.
pub const fn conversion<Hub, S>() -> Webhook
where
    Hub: WebhookResource + TryFrom<S, Error: Display>,
    S: WebhookResource + TryFrom<Hub, Error: Display>,
{
    Webhook {
        webhook_type: WebhookType::Conversion,
        resource: api_resource::<Hub>,
        operations: &[],
        custom_path: None,
        handler: Handler::Conversion(Spoke {
            resource: api_resource::<S>,
            to_hub: convert::<S, Hub>,
            from_hub: convert::<Hub, S>,
        }),
    }
}

fn api_resource<K: Resource<DynamicType = ()>>() -> ApiResource {
    ApiResource::erase::<K>(&())
}

impl Webhook {
    /// Where the API server sends its reviews, named as controller-runtime names them:
    /// `/mutate-devops-my-domain-v1-demomicroservice`, `/validate-...`, [`CONVERT_PATH`]; or
    /// the custom path it was registered with ([`defaulting_at`], [`validating_at`]).
    pub fn path(&self) -> String {
        if let Some(path) = self.custom_path {
            return path.to_owned();
        }
        let mutating = match self.webhook_type {
            WebhookType::Defaulting => true,
            WebhookType::Validating => false,
            WebhookType::Conversion => return CONVERT_PATH.to_owned(),
        };
        let r = (self.resource)();
        admission::default_path(mutating, &r.group, &r.version, &r.kind)
    }

    /// The webhook's name in its configuration: `mdemomicroservice-v1.kb.io` as kubebuilder
    /// names them (a DNS subdomain with at least three segments).
    pub fn name(&self) -> String {
        let r = (self.resource)();
        let letter = match self.webhook_type {
            WebhookType::Defaulting => "m",
            WebhookType::Validating => "v",
            WebhookType::Conversion => "c",
        };
        admission::name(letter, &r.kind, &r.version)
    }
}

/// The largest review read, as controller-runtime reads AdmissionReviews: an UPDATE carries the
/// object twice, and the API server accepts objects of up to 3 MiB. (axum's default, 2 MiB,
/// would refuse the update of a 1 MiB object, and with `failurePolicy: Fail` the API server
/// would refuse it too: such an object could then never lose its finalizer.)
pub const BODY_LIMIT: usize = 7 * 1024 * 1024;

/// The router of the webhook server: a path per admission webhook, and `/convert` if a kind
/// converts.
pub fn router(webhooks: &'static [Webhook]) -> Router {
    let mut router = Router::new();
    let mut converts = false;
    for webhook in webhooks {
        match webhook.handler {
            Handler::Admission(_) => {
                let answer = move |body: Bytes| async move { json(&webhook.answer(&body)) };
                let limit = DefaultBodyLimit::max(BODY_LIMIT);
                router = router.route(&webhook.path(), post(answer).layer(limit));
            }
            Handler::Conversion(_) => converts = true,
        }
    }
    if converts {
        // The same limit: kube-apiserver sends a ConversionReview per object, a list's too (as
        // measured with 1.37; controller-runtime sets no limit).
        let convert = move |body: Bytes| async move { json(&conversion_review(webhooks, &body)) };
        let limit = DefaultBodyLimit::max(BODY_LIMIT);
        router = router.route(CONVERT_PATH, post(convert).layer(limit));
    }
    router
}

impl Webhook {
    /// Answers the AdmissionReview (or, for a conversion webhook, the ConversionReview between
    /// its spoke and the hub) in `body`, as the server does: for the project's tests.
    pub fn answer(&self, body: &[u8]) -> Value {
        match self.handler {
            Handler::Admission(handle) => admission(handle, body),
            Handler::Conversion(spoke) => {
                let this = [Webhook {
                    webhook_type: WebhookType::Conversion,
                    resource: self.resource,
                    operations: &[],
                    custom_path: None,
                    handler: Handler::Conversion(spoke),
                }];
                let review = conversion_review(&this, body);
                serde_json::to_value(review).unwrap_or_default()
            }
        }
    }
}

fn json(value: &impl Serialize) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Answers one AdmissionReview with `handle`.
fn admission(handle: AdmissionHandler, body: &[u8]) -> Value {
    let raw: Value = serde_json::from_slice(body).unwrap_or_default();
    let review: Result<AdmissionReview<DynamicObject>, _> = serde_json::from_value(raw.clone());
    let response = match review.map(AdmissionReview::try_into) {
        Ok(Ok(request)) => handle(request, &raw["request"]["object"]),
        Ok(Err(error)) => AdmissionResponse::invalid(error),
        Err(error) => AdmissionResponse::invalid(error),
    };
    let mut review = serde_json::to_value(response.into_review()).unwrap_or_default();
    // The API server reads `patch` as base64 ([]byte in Go), but kube serializes its Vec<u8>
    // as an array of numbers (kube-rs/kube#1781).
    if let Some(patch) = review.pointer_mut("/response/patch") {
        let bytes: Vec<u8> = serde_json::from_value(patch.take()).unwrap_or_default();
        *patch = Value::String(BASE64_STANDARD.encode(bytes));
    }
    review
}

/// Why a request could not be answered: not the user's denial, but a failure.
fn failure(request: &AdmissionRequest<DynamicObject>, message: String) -> AdmissionResponse {
    warn!(uid = request.uid, %message, "webhook failed");
    let mut response = AdmissionResponse::from(request).deny(&message);
    response.result = Status::failure(&message, "InternalError").with_code(500);
    response
}

/// The user's denial, with the code controller-runtime gives it.
fn denial(request: &AdmissionRequest<DynamicObject>, denied: &Denied) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request).deny(&denied.0);
    response.result = Status::failure(&denied.0, "Forbidden").with_code(403);
    response
}

/// Calls a user function, turning a panic into an error message.
fn call<T>(what: &str, function: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(function)).map_err(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        format!("the {what} panicked: {message}")
    })
}

/// `object` as `K`.
fn typed<K: DeserializeOwned>(object: &DynamicObject) -> Result<K, String> {
    let value = serde_json::to_value(object).map_err(|e| e.to_string())?;
    serde_json::from_value(value).map_err(|e| format!("cannot read the object: {e}"))
}

fn default_request<D: Defaulter>(
    request: AdmissionRequest<DynamicObject>,
    sent: &Value,
) -> AdmissionResponse {
    let Some(object) = &request.object else {
        // A deletion: nothing to default.
        return AdmissionResponse::from(&request);
    };
    let result = (|| {
        let mut obj: D::Resource = typed(object)?;
        // The API server applies the patch to the object it sent, which may lack what the type
        // writes on its own (a `#[serde(default)]` field, an empty list), and have fields the
        // type does not know. So the change the defaulter made is taken between two
        // serializations of the typed object, made to the object sent, and the patch is the
        // difference between that and the object sent.
        let before = serde_json::to_value(&obj).map_err(|e| e.to_string())?;
        let defaulted = call("defaulter", || D::default(&mut obj))?;
        let after = serde_json::to_value(&obj).map_err(|e| e.to_string())?;
        Ok::<_, String>(defaulted.map(|()| {
            let changed = with_changes(sent, &after, json_patch::diff(&before, &after));
            json_patch::diff(sent, &changed)
        }))
    })();
    match result {
        Ok(Ok(patch)) if patch.0.is_empty() => AdmissionResponse::from(&request),
        Ok(Ok(patch)) => match AdmissionResponse::from(&request).with_patch(patch) {
            Ok(response) => response,
            Err(error) => failure(&request, error.to_string()),
        },
        Ok(Err(denied)) => denial(&request, &denied),
        Err(message) => failure(&request, message),
    }
}

/// `sent` with the changes of `patch`, a patch between two serializations of a typed object, the
/// second `after`: each operation as it is where `sent` has the path's parent, else the first
/// part of the path that `sent` lacks, taken whole from `after`. What the type does not know is
/// kept, but where the object sent had nothing.
fn with_changes(sent: &Value, after: &Value, patch: json_patch::Patch) -> Value {
    let mut changed = sent.clone();
    for operation in patch.0 {
        // An operation that applies as it is (one that fails changes nothing).
        if json_patch::patch(&mut changed, std::slice::from_ref(&operation)).is_ok() {
            continue;
        }
        let path = match &operation {
            json_patch::PatchOperation::Add(add) => &add.path,
            json_patch::PatchOperation::Replace(replace) => &replace.path,
            // Nothing to remove where the object sent has nothing.
            _ => continue,
        };
        let mut missing: &json_patch::jsonptr::Pointer = path;
        while let Some(parent) = missing.parent() {
            if changed.pointer(parent.as_str()).is_some() {
                break;
            }
            missing = parent;
        }
        if let Some(value) = after.pointer(missing.as_str()) {
            // Cannot fail: the parent is there.
            let _ = missing.assign(&mut changed, value.clone());
        }
    }
    changed
}

fn validate_request<V: Validator>(
    request: AdmissionRequest<DynamicObject>,
    _sent: &Value,
) -> AdmissionResponse {
    let result = (|| {
        let object = |o: &Option<DynamicObject>| match o {
            Some(o) => typed::<V::Resource>(o),
            None => Err(format!("the {:?} request has no object", request.operation)),
        };
        match request.operation {
            Operation::Create => {
                let obj = object(&request.object)?;
                call("validator", || V::validate_create(&obj))
            }
            Operation::Update => {
                let (old, new) = (object(&request.old_object)?, object(&request.object)?);
                call("validator", || V::validate_update(&old, &new))
            }
            // The object being deleted is the old one.
            Operation::Delete => {
                let obj = object(&request.old_object)?;
                call("validator", || V::validate_delete(&obj))
            }
            Operation::Connect => Ok(Ok(Warnings::new())),
        }
    })();
    match result {
        Ok(Ok(warnings)) => {
            let mut response = AdmissionResponse::from(&request);
            if !warnings.is_empty() {
                response.warnings = Some(warnings);
            }
            response
        }
        Ok(Err(denied)) => denial(&request, &denied),
        Err(message) => failure(&request, message),
    }
}

/// `value` read as `From` and written as `To`.
fn convert<From, To>(value: Value) -> Result<Value, String>
where
    From: WebhookResource,
    To: WebhookResource + TryFrom<From, Error: Display>,
{
    let from: From = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let to = call("conversion", || To::try_from(from))?.map_err(|e| e.to_string())?;
    serde_json::to_value(to).map_err(|e| e.to_string())
}

/// Answers one ConversionReview: every object to the desired version, through the hub of its
/// kind among `webhooks`.
fn conversion_review(webhooks: &[Webhook], body: &[u8]) -> ConversionReview {
    let invalid = |message: String| {
        ConversionResponse::invalid(Status::failure(&message, "BadRequest")).into_review()
    };
    let review: ConversionReview = match serde_json::from_slice(body) {
        Ok(review) => review,
        Err(error) => return invalid(error.to_string()),
    };
    let request = match ConversionRequest::from_review(review) {
        Ok(request) => request,
        Err(error) => return invalid(error.to_string()),
    };
    let desired = request.desired_api_version.clone();
    let converted: Result<Vec<Value>, String> = request
        .objects
        .iter()
        .map(|object| convert_object(webhooks, object.clone(), &desired))
        .collect();
    let response = ConversionResponse::for_request(request);
    match converted {
        Ok(objects) => response.success(objects),
        Err(message) => {
            warn!(%message, "conversion failed");
            response.failure(Status::failure(&message, "InternalError"))
        }
    }
    .into_review()
}

fn convert_object(webhooks: &[Webhook], object: Value, desired: &str) -> Result<Value, String> {
    let field = |name: &str| object.get(name).and_then(Value::as_str).map(str::to_owned);
    let (Some(api_version), Some(kind)) = (field("apiVersion"), field("kind")) else {
        return Err("an object without apiVersion or kind".into());
    };
    if api_version == desired {
        return Ok(object);
    }
    let group = api_version.split_once('/').map(|(g, _)| g);
    // The kind's spokes, each registered with the hub.
    let spokes: Vec<(ApiResource, Spoke)> = webhooks
        .iter()
        .filter_map(|webhook| match webhook.handler {
            Handler::Conversion(spoke) => {
                let hub = (webhook.resource)();
                (hub.kind == kind && Some(hub.group.as_str()) == group).then_some((hub, spoke))
            }
            Handler::Admission(_) => None,
        })
        .collect();
    let Some(hub) = spokes.first().map(|(hub, _)| hub.clone()) else {
        return Err(format!("no conversion for {kind} {api_version}"));
    };
    let spoke = |api_version: &str| {
        spokes
            .iter()
            .map(|(_, spoke)| spoke)
            .find(|s| (s.resource)().api_version == api_version)
            .ok_or_else(|| format!("{kind} has no version {api_version}"))
    };
    let in_hub = if api_version == hub.api_version {
        object
    } else {
        (spoke(&api_version)?.to_hub)(object)?
    };
    if desired == hub.api_version {
        Ok(in_hub)
    } else {
        (spoke(desired)?.from_hub)(in_hub)
    }
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;
    use tokio::net::TcpListener;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::testing::https_post;
    use crate::tls::{CertReloader, TlsListener, self_signed, server_config};

    mod v1 {
        /// A kind for the tests, stored as v1 (the hub).
        #[derive(
            kube::CustomResource,
            schemars::JsonSchema,
            serde::Serialize,
            serde::Deserialize,
            Clone,
            Debug,
        )]
        #[kube(group = "test.my.domain", version = "v1", kind = "Widget", namespaced)]
        pub struct WidgetSpec {
            pub image: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub replicas: Option<i32>,
        }
    }

    mod v2 {
        /// v2 renamed `replicas` to `size`.
        #[derive(
            kube::CustomResource,
            schemars::JsonSchema,
            serde::Serialize,
            serde::Deserialize,
            Clone,
            Debug,
        )]
        #[kube(group = "test.my.domain", version = "v2", kind = "Widget", namespaced)]
        pub struct WidgetSpec {
            pub image: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub size: Option<i32>,
        }
    }

    mod v3 {
        /// v3 is v1 again.
        #[derive(
            kube::CustomResource,
            schemars::JsonSchema,
            serde::Serialize,
            serde::Deserialize,
            Clone,
            Debug,
        )]
        #[kube(group = "test.my.domain", version = "v3", kind = "Widget", namespaced)]
        pub struct WidgetSpec {
            pub image: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub replicas: Option<i32>,
        }
    }

    impl From<v3::Widget> for v1::Widget {
        fn from(w: v3::Widget) -> Self {
            let spec = v1::WidgetSpec {
                image: w.spec.image,
                replicas: w.spec.replicas,
            };
            Self {
                metadata: w.metadata,
                spec,
            }
        }
    }

    impl From<v1::Widget> for v3::Widget {
        fn from(w: v1::Widget) -> Self {
            let spec = v3::WidgetSpec {
                image: w.spec.image,
                replicas: w.spec.replicas,
            };
            Self {
                metadata: w.metadata,
                spec,
            }
        }
    }

    impl From<v2::Widget> for v1::Widget {
        fn from(w: v2::Widget) -> Self {
            let spec = v1::WidgetSpec {
                image: w.spec.image,
                replicas: w.spec.size,
            };
            Self {
                metadata: w.metadata,
                spec,
            }
        }
    }

    impl From<v1::Widget> for v2::Widget {
        fn from(w: v1::Widget) -> Self {
            if w.spec.image == "panic" {
                panic!("cannot convert {}", w.spec.image);
            }
            let spec = v2::WidgetSpec {
                image: w.spec.image,
                size: w.spec.replicas,
            };
            Self {
                metadata: w.metadata,
                spec,
            }
        }
    }

    /// Defaults `replicas` to 1; refuses an empty image; panics on the image "panic".
    struct Hooks;

    impl Defaulter for Hooks {
        type Resource = v1::Widget;

        fn default(obj: &mut v1::Widget) -> Result<(), Denied> {
            match obj.spec.image.as_str() {
                "" => Err(Denied::new("spec.image must not be empty")),
                "panic" => panic!("the defaulter's bug"),
                _ => {
                    obj.spec.replicas.get_or_insert(1);
                    Ok(())
                }
            }
        }
    }

    impl Validator for Hooks {
        type Resource = v1::Widget;

        fn validate_create(obj: &v1::Widget) -> Result<Warnings, Denied> {
            if obj.spec.image.ends_with(":latest") {
                return Err(Denied::new("spec.image must name a tag other than latest"));
            }
            Ok(vec!["looks fine".into()])
        }

        fn validate_update(old: &v1::Widget, new: &v1::Widget) -> Result<Warnings, Denied> {
            if old.spec.image != new.spec.image {
                return Err(Denied::new("spec.image cannot change"));
            }
            Ok(Warnings::new())
        }
    }

    static WEBHOOKS: &[Webhook] = &[
        defaulting::<Hooks>(),
        validating::<Hooks>(),
        conversion::<v1::Widget, v2::Widget>(),
        conversion::<v1::Widget, v3::Widget>(),
    ];

    /// Serves [`WEBHOOKS`] over HTTPS with a self-signed certificate; returns its address and
    /// the certificate to trust.
    async fn serve(
        shutdown: &CancellationToken,
    ) -> (SocketAddr, rustls::pki_types::CertificateDer<'static>) {
        let key = self_signed().expect("self-signed");
        let cert = key.cert[0].clone();
        let tcp = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let config = server_config(CertReloader::fixed(key)).expect("config");
        let listener = TlsListener::new(tcp, config).expect("listener");
        let address = axum::serve::Listener::local_addr(&listener).expect("address");
        let server = axum::serve(listener, router(WEBHOOKS));
        tokio::spawn(
            server
                .with_graceful_shutdown(shutdown.clone().cancelled_owned())
                .into_future(),
        );
        (address, cert)
    }

    fn widget(version: &str, spec: Value) -> Value {
        json!({
            "apiVersion": format!("test.my.domain/{version}"),
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default", "uid": "u-1"},
            "spec": spec,
        })
    }

    /// An AdmissionReview as the API server sends it.
    fn review(operation: &str, object: Value, old: Value) -> String {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "r-1",
                "kind": {"group": "test.my.domain", "version": "v1", "kind": "Widget"},
                "resource": {"group": "test.my.domain", "version": "v1", "resource": "widgets"},
                "name": "w",
                "namespace": "default",
                "operation": operation,
                "userInfo": {"username": "jane"},
                "object": object,
                "oldObject": old,
                "dryRun": false,
            }
        })
        .to_string()
    }

    /// Posts `body` to `path` and returns the `response` of the review answered.
    async fn post(path: &str, body: &str) -> Value {
        let shutdown = CancellationToken::new();
        let (address, cert) = serve(&shutdown).await;
        let answer = https_post(address, path, &cert, body).await.expect("POST");
        shutdown.cancel();
        assert_eq!(answer.status, 200, "{}", answer.body);
        let review: Value = serde_json::from_str(&answer.body).expect("JSON");
        assert_eq!(review["kind"], "AdmissionReview", "{review}");
        review["response"].clone()
    }

    const MUTATE: &str = "/mutate-test-my-domain-v1-widget";
    const VALIDATE: &str = "/validate-test-my-domain-v1-widget";

    #[test]
    fn paths_and_names_are_controller_runtimes() {
        let paths: Vec<String> = WEBHOOKS.iter().map(Webhook::path).collect();
        assert_eq!(paths, [MUTATE, VALIDATE, CONVERT_PATH, CONVERT_PATH]);
        assert_eq!(WEBHOOKS[0].name(), "mwidget-v1.kb.io");
        assert_eq!(WEBHOOKS[1].name(), "vwidget-v1.kb.io");
    }

    #[tokio::test]
    async fn a_defaulter_answers_the_json_patch_of_its_change() {
        let object = widget("v1", json!({"image": "nginx:1.27"}));
        let response = post(MUTATE, &review("CREATE", object.clone(), Value::Null)).await;
        assert_eq!(response["uid"], "r-1");
        assert_eq!(response["allowed"], true);
        assert_eq!(response["patchType"], "JSONPatch");
        // The patch is base64 JSON, applied by the API server to the object it sent.
        let patch = BASE64_STANDARD
            .decode(response["patch"].as_str().expect("patch"))
            .expect("base64");
        let patch: json_patch::Patch = serde_json::from_slice(&patch).expect("a JSON patch");
        let mut patched = object;
        json_patch::patch(&mut patched, &patch).expect("applies");
        assert_eq!(patched["spec"]["replicas"], 1);
        assert_eq!(patched["metadata"]["uid"], "u-1");
    }

    mod gadgets {
        /// A kind whose type writes what an object may leave out: `limits` and its `max`.
        #[derive(
            kube::CustomResource,
            schemars::JsonSchema,
            serde::Serialize,
            serde::Deserialize,
            Clone,
            Debug,
        )]
        #[kube(group = "test.my.domain", version = "v1", kind = "Gadget", namespaced)]
        pub struct GadgetSpec {
            #[serde(default)]
            pub limits: Limits,
        }

        #[derive(
            schemars::JsonSchema, serde::Serialize, serde::Deserialize, Clone, Debug, Default,
        )]
        pub struct Limits {
            #[serde(default)]
            pub max: i64,
        }
    }

    /// Sets `limits.max` when it is 0.
    struct Limiter;

    impl Defaulter for Limiter {
        type Resource = gadgets::Gadget;

        fn default(obj: &mut gadgets::Gadget) -> Result<(), Denied> {
            if obj.spec.limits.max == 0 {
                obj.spec.limits.max = 5;
            }
            Ok(())
        }
    }

    /// The patch applies to the object the API server sent, which lacks `limits` though the
    /// type writes it: a patch between two serializations of the type would replace
    /// `/spec/limits/max`, under a parent the object does not have.
    #[test]
    fn the_patch_applies_to_the_object_sent_not_to_the_type() {
        let sent = json!({
            "apiVersion": "test.my.domain/v1",
            "kind": "Gadget",
            "metadata": {"name": "g", "namespace": "default", "uid": "u-1"},
            "spec": {},
        });
        let answer =
            defaulting::<Limiter>().answer(review("CREATE", sent.clone(), Value::Null).as_bytes());
        let patch = answer["response"]["patch"].as_str().expect("a patch");
        let patch = BASE64_STANDARD.decode(patch).expect("base64");
        let patch: json_patch::Patch = serde_json::from_slice(&patch).expect("a JSON patch");
        let mut patched = sent;
        json_patch::patch(&mut patched, &patch).expect("the patch applies to the object sent");
        assert_eq!(patched["spec"], json!({"limits": {"max": 5}}));
    }

    /// What the type does not know survives a change next to it, in a list's item too.
    #[test]
    fn fields_the_type_does_not_know_are_kept() {
        let sent = json!({
            "spec": {"items": [{"name": "a", "unknown": 1}], "other": {"unknown": true}},
        });
        let before = json!({"spec": {"items": [{"name": "a"}], "limits": {"max": 0}}});
        let after = json!({"spec": {"items": [{"name": "a", "env": "x"}], "limits": {"max": 5}}});
        let changed = with_changes(&sent, &after, json_patch::diff(&before, &after));
        assert_eq!(
            changed,
            json!({"spec": {
                "items": [{"name": "a", "unknown": 1, "env": "x"}],
                "other": {"unknown": true},
                "limits": {"max": 5},
            }})
        );
    }

    #[tokio::test]
    async fn an_object_that_needs_no_default_gets_no_patch() {
        let object = widget("v1", json!({"image": "nginx:1.27", "replicas": 3}));
        let response = post(MUTATE, &review("CREATE", object, Value::Null)).await;
        assert_eq!(response["allowed"], true);
        assert!(response.get("patch").is_none(), "{response}");
    }

    #[tokio::test]
    async fn a_defaulter_can_refuse() {
        let object = widget("v1", json!({"image": ""}));
        let response = post(MUTATE, &review("CREATE", object, Value::Null)).await;
        assert_eq!(response["allowed"], false);
        assert_eq!(
            response["status"]["message"],
            "spec.image must not be empty"
        );
        assert_eq!(response["status"]["code"], 403);
    }

    #[tokio::test]
    async fn a_panic_answers_an_error_and_the_server_carries_on() {
        let shutdown = CancellationToken::new();
        let (address, cert) = serve(&shutdown).await;
        let panics = review(
            "CREATE",
            widget("v1", json!({"image": "panic"})),
            Value::Null,
        );
        let answer = https_post(address, MUTATE, &cert, &panics)
            .await
            .expect("POST");
        let response: Value = serde_json::from_str(&answer.body).expect("JSON");
        let response = &response["response"];
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 500);
        let message = response["status"]["message"].as_str().expect("message");
        assert!(message.contains("the defaulter's bug"), "{message}");

        let fine = review("CREATE", widget("v1", json!({"image": "a:1"})), Value::Null);
        let answer = https_post(address, MUTATE, &cert, &fine)
            .await
            .expect("POST");
        assert!(answer.body.contains(r#""allowed":true"#), "{}", answer.body);
        shutdown.cancel();
    }

    #[tokio::test]
    async fn a_validator_accepts_with_warnings_and_denies_with_its_message() {
        let ok = widget("v1", json!({"image": "nginx:1.27"}));
        let response = post(VALIDATE, &review("CREATE", ok.clone(), Value::Null)).await;
        assert_eq!(response["allowed"], true);
        assert_eq!(response["warnings"], json!(["looks fine"]));

        let latest = widget("v1", json!({"image": "nginx:latest"}));
        let response = post(VALIDATE, &review("CREATE", latest.clone(), Value::Null)).await;
        assert_eq!(response["allowed"], false);
        let message = "spec.image must name a tag other than latest";
        assert_eq!(response["status"]["message"], message);

        // An update sees the old object and the new one.
        let response = post(VALIDATE, &review("UPDATE", latest, ok.clone())).await;
        assert_eq!(response["status"]["message"], "spec.image cannot change");
        // A deletion is allowed by default; its object is the old one.
        let response = post(VALIDATE, &review("DELETE", Value::Null, ok)).await;
        assert_eq!(response["allowed"], true);
    }

    /// A built-in type's validator that refuses deleting the Pod named "keep".
    struct KeepPod;

    impl Validator for KeepPod {
        type Resource = Pod;
        const VALIDATE_DELETE: bool = true;

        fn validate_create(_obj: &Pod) -> Result<Warnings, Denied> {
            Ok(Warnings::new())
        }

        fn validate_update(_old: &Pod, _new: &Pod) -> Result<Warnings, Denied> {
            Ok(Warnings::new())
        }

        fn validate_delete(obj: &Pod) -> Result<Warnings, Denied> {
            match obj.metadata.name.as_deref() {
                Some("keep") => Err(Denied::new("the pod keep is kept")),
                _ => Ok(Warnings::new()),
            }
        }
    }

    #[test]
    fn deletions_are_sent_only_to_a_validator_that_asks_for_them() {
        assert_eq!(WEBHOOKS[0].operations, ["CREATE", "UPDATE"]);
        assert_eq!(WEBHOOKS[1].operations, ["CREATE", "UPDATE"]);
        let keep = validating::<KeepPod>();
        assert_eq!(keep.operations, ["CREATE", "UPDATE", "DELETE"]);
        // The core group is empty, as in controller-runtime's paths.
        assert_eq!(keep.path(), "/validate--v1-pod");
        assert_eq!(keep.name(), "vpod-v1.kb.io");
        // A custom path changes the path only: the name and what is sent stay.
        let custom = validating_at::<KeepPod>("/keep-pods");
        assert_eq!(custom.path(), "/keep-pods");
        assert_eq!(custom.name(), "vpod-v1.kb.io");
        assert_eq!(custom.operations, keep.operations);

        let delete = |name: &str| {
            json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": "r-2",
                    "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "resource": {"group": "", "version": "v1", "resource": "pods"},
                    "operation": "DELETE",
                    "userInfo": {"username": "jane"},
                    "oldObject": {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {"name": name, "namespace": "default"},
                    },
                }
            })
            .to_string()
        };
        let answer = keep.answer(delete("keep").as_bytes());
        assert_eq!(answer["response"]["allowed"], false, "{answer}");
        assert_eq!(
            answer["response"]["status"]["message"],
            "the pod keep is kept"
        );
        let answer = keep.answer(delete("other").as_bytes());
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }

    #[tokio::test]
    async fn a_malformed_review_is_answered_not_crashed_on() {
        let response = post(
            VALIDATE,
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#,
        )
        .await;
        assert_eq!(response["allowed"], false);
    }

    fn conversion_review_body(desired: &str, objects: &[Value]) -> String {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": objects},
        })
        .to_string()
    }

    async fn convert_via_https(desired: &str, objects: &[Value]) -> Value {
        let shutdown = CancellationToken::new();
        let (address, cert) = serve(&shutdown).await;
        let body = conversion_review_body(desired, objects);
        let answer = https_post(address, CONVERT_PATH, &cert, &body)
            .await
            .expect("POST");
        shutdown.cancel();
        let review: Value = serde_json::from_str(&answer.body).expect("JSON");
        assert_eq!(review["kind"], "ConversionReview", "{review}");
        review["response"].clone()
    }

    #[tokio::test]
    async fn conversions_round_trip_through_the_hub_keeping_every_field() {
        let original = widget("v1", json!({"image": "nginx:1.27", "replicas": 2}));
        let response =
            convert_via_https("test.my.domain/v2", std::slice::from_ref(&original)).await;
        assert_eq!(response["uid"], "c-1");
        assert_eq!(response["result"]["status"], "Success", "{response}");
        let v2 = &response["convertedObjects"][0];
        assert_eq!(v2["apiVersion"], "test.my.domain/v2");
        assert_eq!(v2["spec"], json!({"image": "nginx:1.27", "size": 2}));
        assert_eq!(v2["metadata"], original["metadata"]);

        let response = convert_via_https("test.my.domain/v1", std::slice::from_ref(v2)).await;
        assert_eq!(response["convertedObjects"][0], original);

        // Between two spokes, each registered on its own, through the hub.
        let response = convert_via_https("test.my.domain/v3", std::slice::from_ref(v2)).await;
        let v3 = &response["convertedObjects"][0];
        assert_eq!(v3["apiVersion"], "test.my.domain/v3", "{response}");
        assert_eq!(v3["spec"], json!({"image": "nginx:1.27", "replicas": 2}));
    }

    #[tokio::test]
    async fn a_failed_conversion_is_reported() {
        let panics = widget("v1", json!({"image": "panic"}));
        let response = convert_via_https("test.my.domain/v2", &[panics]).await;
        assert_eq!(response["result"]["status"], "Failure", "{response}");
        let message = response["result"]["message"].as_str().expect("message");
        assert!(message.contains("cannot convert panic"), "{message}");

        let unknown = widget("v1", json!({"image": "a"}));
        let response = convert_via_https("test.my.domain/v9", &[unknown]).await;
        assert_eq!(response["result"]["status"], "Failure", "{response}");
    }
}
