//! What the end-to-end and integration tests check, and how they wait for it: the same in both
//! harnesses ([`crate::e2e`], [`crate::envtest`]), which re-export these.

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::ListParams;
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use tokio::time::{Duration, Instant, sleep, timeout_at};

/// The object `name`, or what was seen instead.
pub async fn fetch<K>(api: &Api<K>, name: &str) -> Result<K, String>
where
    K: Resource + Clone + Debug + DeserializeOwned,
{
    match api.get_opt(name).await {
        Ok(Some(obj)) => Ok(obj),
        Ok(None) => Err("not found".to_owned()),
        Err(error) => Err(format!("cannot get it: {error}")),
    }
}

/// Succeeds once the object `name` no longer exists.
///
/// ```no_run
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use rbuilder_runtime::envtest::Environment;
/// # async fn f(env: Environment) {
/// use kube::Api;
/// use kube::api::DeleteParams;
/// use rbuilder_runtime::envtest::gone;
///
/// let config_maps: Api<ConfigMap> = env.api();
/// config_maps.delete("settings", &DeleteParams::default()).await.expect("deleted");
/// // "still there, deletionTimestamp ..., finalizers [...]" until its finalizers are done.
/// env.wait_for("settings to be deleted", async || gone(&config_maps, "settings").await)
///     .await;
/// # }
/// ```
pub async fn gone<K>(api: &Api<K>, name: &str) -> Result<(), String>
where
    K: Resource + Clone + Debug + DeserializeOwned,
{
    match api.get_opt(name).await {
        Ok(None) => Ok(()),
        Ok(Some(obj)) => Err(format!(
            "still there, deletionTimestamp {:?}, finalizers {:?}",
            obj.meta().deletion_timestamp,
            obj.finalizers()
        )),
        Err(error) => Err(format!("cannot get it: {error}")),
    }
}

/// Succeeds if `conditions` say Ready=True, observed at `generation`.
///
/// ```
/// use rbuilder_runtime::conditions::condition;
/// use rbuilder_runtime::envtest::{has_condition, is_ready};
///
/// let conditions = [condition(&[], "Ready", "True", "Reconciled", "", Some(2))];
/// assert!(is_ready(&conditions, Some(2)).is_ok());
/// // Observed at an older generation: not ready yet for generation 3, and the error says why.
/// let error = is_ready(&conditions, Some(3)).expect_err("not at 3");
/// assert!(error.contains("at generation Some(2)"), "{error}");
/// assert!(has_condition(&conditions, "Degraded", "False", Some(2)).is_err());
/// ```
pub fn is_ready(conditions: &[Condition], generation: Option<i64>) -> Result<(), String> {
    has_condition(conditions, "Ready", "True", generation)
}

/// Succeeds if `conditions` hold the condition `type_` with `status`, observed at `generation`.
pub fn has_condition(
    conditions: &[Condition],
    type_: &str,
    status: &str,
    generation: Option<i64>,
) -> Result<(), String> {
    let found = conditions.iter().find(|condition| condition.type_ == type_);
    match found {
        Some(found) if found.status == status && found.observed_generation == generation => Ok(()),
        Some(found) => Err(format!(
            "{type_} is {} ({}: {}) at generation {:?}, not {status} at {generation:?}",
            found.status, found.reason, found.message, found.observed_generation
        )),
        None => Err(format!("no {type_} condition in {conditions:?}")),
    }
}

/// Succeeds once `deployment` has rolled out its spec, as `kubectl rollout status` waits for it:
/// the Deployment controller has seen this generation, and every replica runs the current pod
/// template and is available. Returns the number of replicas. (On a cluster whose Pods cannot
/// run, it waits in vain.)
pub fn is_rolled_out(deployment: &Deployment) -> Result<i32, String> {
    // Kubernetes' default when nothing sets spec.replicas.
    let wanted = deployment.spec.replicas.unwrap_or(1);
    let status = deployment.status.clone().unwrap_or_default();
    let seen = status.observed_generation >= deployment.metadata.generation;
    let (updated, available) = (status.updated_replicas, status.available_replicas);
    let (replicas, ready) = (status.replicas, status.ready_replicas);
    let counts = [updated, available, replicas, ready].map(|count| count.unwrap_or(0));
    if seen && counts == [wanted; 4] {
        return Ok(wanted);
    }
    Err(format!(
        "generation {:?} observed at {:?}; of {wanted} replicas: {} updated, {} available, {} \
         in all, {} ready",
        deployment.metadata.generation,
        status.observed_generation,
        counts[0],
        counts[1],
        counts[2],
        counts[3]
    ))
}

/// The ReplicaSets that `deployment` controls, each with the images its pods run and its
/// replica count and ready replicas: the new one of a finished rollout runs the new images with
/// every replica ready, the old ones are scaled to zero.
pub async fn replica_sets(
    api: &Api<ReplicaSet>,
    deployment: &Deployment,
) -> Result<Vec<ReplicaSetState>, String> {
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(|error| format!("cannot list ReplicaSets: {error}"))?;
    let controlled = list
        .items
        .iter()
        .filter(|set| is_controller(*set, deployment))
        .map(|set| {
            let template = set.spec.template.as_ref();
            let pod = template.and_then(|template| template.spec.as_ref());
            let status = set.status.as_ref();
            ReplicaSetState {
                name: set.name_any(),
                images: pod
                    .into_iter()
                    .flat_map(|pod| &pod.containers)
                    .filter_map(|container| container.image.clone())
                    .collect(),
                replicas: status.map_or(0, |status| status.replicas),
                ready: status.and_then(|status| status.ready_replicas).unwrap_or(0),
            }
        })
        .collect();
    Ok(controlled)
}

/// What a test sees of a ReplicaSet: see [`replica_sets`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaSetState {
    pub name: String,
    /// The images of its pods' containers.
    pub images: Vec<String>,
    /// Its pods (`status.replicas`), and those of them that are ready.
    pub replicas: i32,
    pub ready: i32,
}

/// Whether `owner` is the controller of `obj` (by uid).
fn is_controller(obj: &impl Resource, owner: &impl Resource) -> bool {
    obj.owner_references().iter().any(|reference| {
        reference.controller == Some(true) && owner.meta().uid.as_ref() == Some(&reference.uid)
    })
}

/// Succeeds if `obj` has a controller owner reference to `owner` that blocks its deletion until
/// `obj` is gone, as `controller_owner_ref` with `block_owner_deletion` makes it.
///
/// ```
/// use k8s_openapi::api::apps::v1::Deployment;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::Resource;
/// use rbuilder_runtime::envtest::is_controlled_by;
///
/// let mut owner = ConfigMap::default();
/// owner.metadata.name = Some("guestbook".into());
/// owner.metadata.uid = Some("1b9e".into());
/// let mut deployment = Deployment::default();
/// assert!(is_controlled_by(&deployment, &owner).is_err());
/// let mut reference = owner.controller_owner_ref(&()).expect("named, with a uid");
/// reference.block_owner_deletion = Some(true);
/// deployment.metadata.owner_references = Some(vec![reference]);
/// assert!(is_controlled_by(&deployment, &owner).is_ok());
/// ```
pub fn is_controlled_by(obj: &impl Resource, owner: &impl Resource) -> Result<(), String> {
    let references = obj.owner_references();
    let controlled = references.iter().any(|reference| {
        reference.controller == Some(true)
            && reference.block_owner_deletion == Some(true)
            && owner.meta().uid.as_ref() == Some(&reference.uid)
    });
    if controlled {
        Ok(())
    } else {
        Err(format!("owner references {references:?}"))
    }
}

/// The images of the containers of `deployment`'s pods.
pub fn images(deployment: &Deployment) -> Vec<&str> {
    let pod = deployment.spec.template.spec.as_ref();
    pod.into_iter()
        .flat_map(|pod| &pod.containers)
        .filter_map(|container| container.image.as_deref())
        .collect()
}

/// Calls `probe` until it succeeds, every `interval`, and returns what it returned; panics after
/// `limit`, with `what` it waited for and why `probe` last failed. `check` runs before each
/// call, and panics if what the test needs stopped (a manager, a controller).
pub(crate) async fn poll<T>(
    what: &str,
    limit: Duration,
    interval: Duration,
    check: impl Fn(&str),
    mut probe: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + limit;
    let mut last = "no answer".to_owned();
    loop {
        check(what);
        // A request that hangs counts against the deadline too. A probe cut short by the
        // deadline keeps the reason the one before it gave, which says more than its silence.
        match timeout_at(deadline, probe()).await {
            Ok(Ok(value)) => return value,
            Ok(Err(reason)) => last = reason,
            Err(_) => {}
        }
        if Instant::now() >= deadline {
            panic!("timed out after {limit:?} waiting for {what}; last seen: {last}");
        }
        sleep(interval).await;
    }
}
