//! What the end-to-end and integration tests check, and how they wait for it: the same in both
//! harnesses ([`crate::e2e`], [`crate::envtest`]), which re-export these.

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
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
pub fn is_ready(conditions: &[Condition], generation: Option<i64>) -> Result<(), String> {
    let ready = conditions
        .iter()
        .find(|condition| condition.type_ == "Ready");
    match ready {
        Some(ready) if ready.status == "True" && ready.observed_generation == generation => Ok(()),
        Some(ready) => Err(format!(
            "Ready is {} ({}: {}) at generation {:?}, not {generation:?}",
            ready.status, ready.reason, ready.message, ready.observed_generation
        )),
        None => Err(format!("no Ready condition in {conditions:?}")),
    }
}

/// Succeeds if `obj` has a controller owner reference to `owner` that blocks its deletion until
/// `obj` is gone, as `controller_owner_ref` with `block_owner_deletion` makes it.
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
    loop {
        check(what);
        // A request that hangs counts against the deadline too.
        let last = match timeout_at(deadline, probe()).await {
            Ok(Ok(value)) => return value,
            Ok(Err(last)) => last,
            Err(_) => "no answer".to_owned(),
        };
        if Instant::now() >= deadline {
            panic!("timed out after {limit:?} waiting for {what}; last seen: {last}");
        }
        sleep(interval).await;
    }
}
