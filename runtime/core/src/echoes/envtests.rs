//! A controller's own writes against a real kube-apiserver and etcd (envtest): the finalizer,
//! an owned object and the status it writes bring no reconcile of their own, and a change
//! someone else makes, to the object or to what it owns, still does.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams};
use kube::core::crd::MergeError;
use kube::runtime::controller::Action;
use kube::{Api, CustomResource, CustomResourceExt, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::context::Context;
use crate::controller::{Reconciler, Registration, register};
use crate::envtest::{Environment, fetch, step};
use crate::operator::Operator;
use crate::owned::{self, Owns};

/// A count the controller writes into a ConfigMap of its name and reports in its status.
#[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
#[kube(
    group = "echoes.rbuilder.io",
    version = "v1",
    kind = "Tally",
    namespaced,
    status = "TallyStatus"
)]
struct TallySpec {
    count: i32,
}

#[derive(JsonSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
struct TallyStatus {
    count: i32,
}

/// The count each reconcile of a Tally saw, in order.
static TURNS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn turns() -> Vec<i32> {
    TURNS.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

struct Tallies;

impl Reconciler for Tallies {
    type Resource = Tally;
    type Error = owned::Error;
    const NAME: &'static str = "tallies";
    const FINALIZER: Option<&'static str> = Some("echoes.rbuilder.io/finalizer");

    /// Three writes on the first turn (the finalizer, the ConfigMap, the status), none after.
    async fn apply(tally: Arc<Tally>, ctx: Arc<Context>) -> Result<Action, owned::Error> {
        let count = tally.spec.count;
        TURNS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(count);
        let config_map = ConfigMap {
            data: Some([("count".to_owned(), count.to_string())].into()),
            ..ConfigMap::default()
        };
        ctx.owned::<ConfigMap>(&*tally).apply(config_map).await?;
        ctx.apply_status(&*tally, &TallyStatus { count }).await?;
        Ok(Action::await_change())
    }

    fn owns() -> Owns<Tally> {
        Owns::kind::<ConfigMap>()
    }
}

const TALLIES: Registration = register::<Tallies>();

fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
    Ok(vec![Tally::crd()])
}

static OPERATOR: Operator = Operator::new("echoes").controllers(&[TALLIES]).crds(crds);

/// Long enough for the watches to bring back every write and the controller to take them.
const SETTLE: Duration = Duration::from_secs(2);

/// Waits until the ConfigMap `clicks` holds `count` and the Tally's status reports it.
async fn wait_for_count(env: &Environment, count: i32) {
    let (tallies, config_maps): (Api<Tally>, Api<ConfigMap>) = (env.api(), env.api());
    env.wait_for(&format!("the count {count} written"), async || {
        let config_map = fetch(&config_maps, "clicks").await?;
        let written = config_map.data.unwrap_or_default().remove("count");
        let status = fetch(&tallies, "clicks").await?.status;
        match (written, status) {
            (Some(written), Some(status))
                if written == count.to_string() && status.count == count =>
            {
                Ok(())
            }
            (written, status) => Err(format!("ConfigMap {written:?}, status {status:?}")),
        }
    })
    .await;
}

#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_controller_is_not_reconciled_again_by_its_own_writes() {
    let env = Environment::start(&OPERATOR).await;
    env.run(&TALLIES).await;
    let tallies: Api<Tally> = env.api();
    let config_maps: Api<ConfigMap> = env.api();

    step("a new Tally: its finalizer, its ConfigMap and its status, in one reconcile");
    env.apply(&tallies, &Tally::new("clicks", TallySpec { count: 1 }))
        .await;
    wait_for_count(&env, 1).await;
    tokio::time::sleep(SETTLE).await;
    let held = fetch(&tallies, "clicks").await.expect("the Tally");
    assert_eq!(held.finalizers(), ["echoes.rbuilder.io/finalizer"]);
    assert_eq!(
        turns(),
        [1],
        "the writes of the first reconcile brought more"
    );
    assert_eq!(env.reconciles(&TALLIES), 1);

    step("someone else's change of the Tally is reconciled, once");
    env.apply(&tallies, &Tally::new("clicks", TallySpec { count: 2 }))
        .await;
    wait_for_count(&env, 2).await;
    tokio::time::sleep(SETTLE).await;
    assert_eq!(turns(), [1, 2]);

    step("someone else's change of the ConfigMap is reconciled, and undone");
    let edit = json!({"data": {"count": "99"}});
    config_maps
        .patch("clicks", &PatchParams::default(), &Patch::Merge(&edit))
        .await
        .expect("the ConfigMap edited");
    wait_for_count(&env, 2).await;
    tokio::time::sleep(SETTLE).await;
    assert_eq!(turns(), [1, 2, 2]);

    step("someone else's change of the status is reconciled, and undone");
    let edit = json!({"status": {"count": 7}});
    tallies
        .patch_status("clicks", &PatchParams::default(), &Patch::Merge(&edit))
        .await
        .expect("the status edited");
    wait_for_count(&env, 2).await;
    tokio::time::sleep(SETTLE).await;
    assert_eq!(turns(), [1, 2, 2, 2]);
}
