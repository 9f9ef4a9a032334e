//! Owned objects against a real kube-apiserver and etcd (envtest): the API server's own
//! answers to the applies, preconditions and deletions, and controllers run as the manager
//! runs them, with only the role their rules grant. There is no garbage collector
//! (kube-controller-manager): the tests do what it would where it matters.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::events::v1::Event as KubeEvent;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ListParams, PostParams};
use kube::core::crd::MergeError;
use kube::runtime::controller::Action;
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::controller::{Reconciler, Registration, register};
use crate::envtest::{Environment, fetch, gone, images, is_controlled_by, step};
use crate::operator::Operator;

/// A namespaced owner: runs `image` as a Deployment of its name.
#[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
#[kube(group = "owned.rbuilder.io", version = "v1", kind = "App", namespaced)]
struct AppSpec {
    image: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replicas: Option<i32>,
}

/// A cluster-scoped owner: a ConfigMap of its name in `namespace`, and a ClusterRole.
#[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
#[kube(group = "owned.rbuilder.io", version = "v1", kind = "Team")]
struct TeamSpec {
    namespace: String,
}

/// The Deployment that runs `app`, as a controller builds it: no name, namespace or owner.
fn deployment(app: &App) -> Deployment {
    let labels = json!({"app.kubernetes.io/instance": app.name_any()});
    let container = json!({"name": "app", "image": app.spec.image});
    serde_json::from_value(json!({
        "metadata": {"labels": labels},
        "spec": {
            "replicas": app.spec.replicas,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }))
    .expect("a Deployment")
}

#[derive(Debug, thiserror::Error)]
enum Failed {
    #[error("{0}")]
    Owned(#[from] Error),
}

struct Apps;

impl Reconciler for Apps {
    type Resource = App;
    type Error = Failed;
    const NAME: &'static str = "apps";
    const FINALIZER: Option<&'static str> = Some("owned.rbuilder.io/finalizer");

    async fn apply(app: Arc<App>, ctx: Arc<Context>) -> Result<Action, Failed> {
        let owned = ctx.owned::<Deployment>(&*app);
        owned
            .release(&["spec", "replicas"])
            .apply(deployment(&app))
            .await?;
        Ok(Action::await_change())
    }

    async fn cleanup(app: Arc<App>, ctx: Arc<Context>) -> Result<Action, Failed> {
        ctx.owned::<Deployment>(&*app).delete().await?;
        Ok(Action::await_change())
    }

    // Its rules all come from what it declares: the manager runs with no other.
    fn owns() -> Owns<App> {
        Owns::kind::<Deployment>()
    }
}

struct Teams;

impl Reconciler for Teams {
    type Resource = Team;
    type Error = Failed;
    const NAME: &'static str = "teams";
    const FINALIZER: Option<&'static str> = Some("owned.rbuilder.io/finalizer");

    async fn apply(team: Arc<Team>, ctx: Arc<Context>) -> Result<Action, Failed> {
        let config_map = ConfigMap {
            data: Some([("team".to_owned(), team.name_any())].into()),
            ..ConfigMap::default()
        };
        let namespace = &team.spec.namespace;
        ctx.owned_in::<ConfigMap>(&*team, namespace)
            .apply(config_map)
            .await?;
        ctx.owned::<ClusterRole>(&*team)
            .apply(ClusterRole::default())
            .await?;
        Ok(Action::await_change())
    }

    async fn cleanup(team: Arc<Team>, ctx: Arc<Context>) -> Result<Action, Failed> {
        let namespace = &team.spec.namespace;
        ctx.owned_in::<ConfigMap>(&*team, namespace)
            .delete()
            .await?;
        ctx.owned::<ClusterRole>(&*team).delete().await?;
        Ok(Action::await_change())
    }

    fn owns() -> Owns<Team> {
        Owns::kind::<ConfigMap>().and::<ClusterRole>()
    }
}

/// A namespaced owner of a ConfigMap of its name holding its title: with [`Teams`], a second
/// controller that owns ConfigMaps.
#[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
#[kube(
    group = "owned.rbuilder.io",
    version = "v1",
    kind = "Board",
    namespaced
)]
struct BoardSpec {
    title: String,
}

struct Boards;

impl Reconciler for Boards {
    type Resource = Board;
    type Error = Failed;
    const NAME: &'static str = "boards";
    const FINALIZER: Option<&'static str> = None;

    async fn apply(board: Arc<Board>, ctx: Arc<Context>) -> Result<Action, Failed> {
        let config_map = ConfigMap {
            data: Some([("title".to_owned(), board.spec.title.clone())].into()),
            ..ConfigMap::default()
        };
        ctx.owned::<ConfigMap>(&*board).apply(config_map).await?;
        Ok(Action::await_change())
    }

    fn owns() -> Owns<Board> {
        Owns::kind::<ConfigMap>()
    }
}

const APPS: Registration = register::<Apps>();
const TEAMS: Registration = register::<Teams>();
const BOARDS: Registration = register::<Boards>();

fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
    Ok(vec![App::crd(), Team::crd(), Board::crd()])
}

static OPERATOR: Operator = Operator::new("owned")
    .controllers(&[APPS, TEAMS, BOARDS])
    .crds(crds);

fn app(image: &str) -> App {
    App::new(
        "web",
        AppSpec {
            image: image.into(),
            replicas: Some(2),
        },
    )
}

/// The Events about `name` with `reason`.
async fn events(env: &Environment, name: &str, reason: &str) -> Result<usize, String> {
    let events: Api<KubeEvent> = env.api();
    let all = events.list(&ListParams::default()).await;
    let all = all.map_err(|error| error.to_string())?;
    let about = all.items.iter().filter(|event| {
        let regarding = event.regarding.as_ref();
        regarding.and_then(|r| r.name.as_deref()) == Some(name)
            && event.reason.as_deref() == Some(reason)
    });
    Ok(about.count())
}

/// Waits until the Deployment `web` is controlled by `owner` and runs `image`.
async fn wait_for_image(env: &Environment, owner: &App, image: &str) -> Deployment {
    let deployments: Api<Deployment> = env.api();
    env.wait_for(&format!("Deployment web with {image}"), async || {
        let deployment = fetch(&deployments, "web").await?;
        is_controlled_by(&deployment, owner)?;
        match images(&deployment)[..] {
            [running] if running == image => Ok(deployment),
            ref running => Err(format!("its containers run {running:?}")),
        }
    })
    .await
}

/// The owner's Deployment is created, applied again when the owner or it changes, read from
/// the cache when nothing changed, and deleted before its owner; each change is an Event.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn an_owned_deployment_follows_its_owner() {
    let env = Environment::start(&OPERATOR).await;
    env.run(&APPS).await;
    let apps: Api<App> = env.api();
    let deployments: Api<Deployment> = env.api();

    step("an App gets its Deployment, labelled, with one Apply entry of the operator");
    let owner = env.apply(&apps, &app("podinfo:1")).await;
    let deployment = wait_for_image(&env, &owner, "podinfo:1").await;
    let labels = deployment.labels();
    assert_eq!(labels.get(MANAGED_BY), Some(&OPERATOR.field_manager()));
    let manager = OPERATOR.field_manager();
    let entries = deployment.metadata.managed_fields.iter().flatten();
    let ours = entries.filter(|entry| entry.manager.as_deref() == Some(manager.as_str()));
    let operations: Vec<_> = ours.map(|entry| entry.operation.clone()).collect();
    assert_eq!(operations, [Some("Apply".to_owned())]);
    env.wait_for("the Event Created", async || {
        match events(&env, "web", "Created").await? {
            1 => Ok(()),
            n => Err(format!("{n} Events")),
        }
    })
    .await;

    step("a new image is applied to it, an Event Updated");
    env.apply(&apps, &app("podinfo:2")).await;
    wait_for_image(&env, &owner, "podinfo:2").await;
    env.wait_for("the Event Updated", async || {
        match events(&env, "web", "Updated").await? {
            1 => Ok(()),
            n => Err(format!("{n} Events")),
        }
    })
    .await;

    step("an image set by hand is put back");
    let container = json!({"name": "app", "image": "podinfo:edited"});
    let edit = json!({"spec": {"template": {"spec": {"containers": [container]}}}});
    let patch = Patch::Strategic(&edit);
    deployments
        .patch("web", &PatchParams::default(), &patch)
        .await
        .expect("edited");
    wait_for_image(&env, &owner, "podinfo:2").await;

    step("its cache keeps what the operator set, not what the API server defaulted");
    let fetched = deployments.get("web").await.expect("the Deployment");
    let kept = Slim::new(&fetched, &manager).object().expect("read back");
    let container = |deployment: &Deployment| {
        let spec = deployment.spec.template.spec.as_ref();
        spec.expect("a Pod spec").containers[0].clone()
    };
    assert_eq!(container(&kept).image.as_deref(), Some("podinfo:2"));
    assert!(container(&fetched).image_pull_policy.is_some());
    assert_eq!(container(&kept).image_pull_policy, None);
    assert!(fetched.spec.strategy.is_some());
    assert_eq!(kept.spec.strategy, None);
    assert_eq!(kept.metadata.uid, fetched.metadata.uid);

    step("a label added by hand: a reconcile that reads the cache and writes nothing");
    // Settled: what the put-back brought is reconciled.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (reads, writes, reconciles) = (env.reads(), env.writes(), env.reconciles(&APPS));
    let label = json!({"metadata": {"labels": {"touched": "by-hand"}}});
    let patch = Patch::Merge(&label);
    deployments
        .patch("web", &PatchParams::default(), &patch)
        .await
        .expect("labelled");
    env.wait_for("one more reconcile", async || match env.reconciles(&APPS) {
        done if done > reconciles => Ok(()),
        done => Err(format!("{done} reconciles")),
    })
    .await;
    assert_eq!(env.reads(), reads, "the reconcile read the Deployment");
    assert_eq!(env.writes(), writes, "the reconcile wrote");

    step("deleting the App deletes the Deployment first");
    apps.delete("web", &DeleteParams::default())
        .await
        .expect("deleted");
    env.wait_for("the Deployment to go", async || {
        gone(&deployments, "web").await
    })
    .await;
    env.wait_for("the App to go", async || gone(&apps, "web").await)
        .await;
}

/// Without `replicas`, the Deployment keeps the count it had, for whoever scales it next.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_released_field_keeps_its_value() {
    let env = Environment::start(&OPERATOR).await;
    env.run(&APPS).await;
    let apps: Api<App> = env.api();
    let deployments: Api<Deployment> = env.api();
    let mut app = app("podinfo:1");
    app.spec.replicas = Some(3);
    let owner = env.apply(&apps, &app).await;
    wait_for_image(&env, &owner, "podinfo:1").await;

    step("without replicas, the Deployment keeps 3");
    app.spec.replicas = None;
    app.spec.image = "podinfo:2".into();
    env.apply(&apps, &app).await;
    let deployment = wait_for_image(&env, &owner, "podinfo:2").await;
    assert_eq!(deployment.spec.replicas, Some(3));

    step("kubectl scale takes the field over without a conflict");
    let scale = json!({"spec": {"replicas": 5}});
    let patch = Patch::Merge(&scale);
    deployments
        .patch("web", &PatchParams::default(), &patch)
        .await
        .expect("scaled");
    app.spec.image = "podinfo:3".into();
    env.apply(&apps, &app).await;
    let deployment = wait_for_image(&env, &owner, "podinfo:3").await;
    assert_eq!(deployment.spec.replicas, Some(5));
}

/// A context for calling the API directly, as the admin.
fn context(env: &Environment) -> Context {
    Context::new(
        env.client(),
        OPERATOR.field_manager(),
        crate::namespaces::Namespaces::all(),
    )
}

/// The App `web` (image podinfo:1), and its Deployment as `owned` created it, with no
/// controller running.
async fn an_app_with_its_deployment(env: &Environment) -> (App, Arc<Deployment>) {
    let apps: Api<App> = env.api();
    let owner = env.apply(&apps, &app("podinfo:1")).await;
    let created = context(env)
        .owned::<Deployment>(&owner)
        .apply(deployment(&owner))
        .await;
    (owner, created.expect("created").object)
}

/// Someone else's Deployment of the owner's name is refused, saying whose, and left as it is;
/// an orphan this operator made is adopted.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn others_objects_are_refused_and_orphans_adopted() {
    let env = Environment::start(&OPERATOR).await;
    let ctx = context(&env);
    let apps: Api<App> = env.api();
    let deployments: Api<Deployment> = env.api();
    let owner = env.apply(&apps, &app("podinfo:1")).await;

    step("someone else's Deployment web is refused");
    let mut theirs = deployment(&owner);
    theirs.metadata.name = Some("web".into());
    theirs.metadata.labels = Some([("app".to_owned(), "theirs".to_owned())].into());
    let created = deployments.create(&PostParams::default(), &theirs).await;
    created.expect("their Deployment");
    let result = ctx
        .owned::<Deployment>(&owner)
        .apply(deployment(&owner))
        .await;
    match result {
        Err(Error::Taken(taken)) => assert_eq!(
            taken.to_string(),
            "Deployment web exists and has no controller: rename the App or delete that Deployment"
        ),
        other => panic!("not refused: {other:?}"),
    }
    let deletion = ctx.owned::<Deployment>(&owner).delete().await;
    assert_eq!(deletion.expect("left"), Deletion::NotControlled);
    let left = fetch(&deployments, "web").await.expect("theirs");
    assert!(left.owner_references().is_empty());
    assert_eq!(left.labels().get("app").map(String::as_str), Some("theirs"));
    deployments
        .delete("web", &DeleteParams::default())
        .await
        .expect("deleted");

    step("the App's own Deployment, orphaned, is adopted by the App made again");
    let made = ctx
        .owned::<Deployment>(&owner)
        .apply(deployment(&owner))
        .await;
    let made = made.expect("created").object;
    // What the garbage collector does after `kubectl delete --cascade=orphan`.
    let orphan = json!({"metadata": {"ownerReferences": null}});
    let patch = Patch::Merge(&orphan);
    deployments
        .patch("web", &PatchParams::default(), &patch)
        .await
        .expect("orphaned");
    apps.delete("web", &DeleteParams::default())
        .await
        .expect("deleted");
    env.wait_for("the App to go", async || gone(&apps, "web").await)
        .await;
    let again = env.apply(&apps, &app("podinfo:2")).await;
    assert_ne!(again.uid(), owner.uid());
    let adopted = ctx
        .owned::<Deployment>(&again)
        .apply(deployment(&again))
        .await;
    let adopted = adopted.expect("adopted");
    assert_eq!(adopted.change, Change::Adopted);
    assert_eq!(adopted.object.uid(), made.uid(), "replaced, not adopted");
    is_controlled_by(&*adopted.object, &again).expect("controlled by the new App");
    assert_eq!(images(&adopted.object), ["podinfo:2"]);
}

/// A write based on a stale cache is refused by the API server and reported as [`Stale`]; it
/// changes nothing.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_write_based_on_a_stale_cache_is_refused() {
    let env = Environment::start(&OPERATOR).await;
    let deployments: Api<Deployment> = env.api();
    let (owner, cached) = an_app_with_its_deployment(&env).await;

    step("the Deployment changes after the cache saw it");
    let label = json!({"metadata": {"labels": {"touched": "by-hand"}}});
    let patch = Patch::Merge(&label);
    deployments
        .patch("web", &PatchParams::default(), &patch)
        .await
        .expect("labelled");
    let stale = context(&env);
    stale.cache_of([(*cached).clone()]);

    step("an apply to it as cached is refused");
    let mut newer = owner.clone();
    newer.spec.image = "podinfo:2".into();
    let result = stale
        .owned::<Deployment>(&newer)
        .apply(deployment(&newer))
        .await;
    assert!(matches!(result, Err(Error::Stale(_))), "{result:?}");
    let deployment_now = fetch(&deployments, "web").await.expect("the Deployment");
    assert_eq!(images(&deployment_now), ["podinfo:1"]);

    step("so is its deletion");
    let result = stale.owned::<Deployment>(&owner).delete().await;
    assert!(matches!(result, Err(Error::Stale(_))), "{result:?}");
    fetch(&deployments, "web").await.expect("still there");

    step("replaced by someone else's since: the apply is refused, theirs stays");
    deployments
        .delete("web", &DeleteParams::default())
        .await
        .expect("deleted");
    env.wait_for("the Deployment to go", async || {
        gone(&deployments, "web").await
    })
    .await;
    let mut theirs = deployment(&owner);
    theirs.metadata.name = Some("web".into());
    let created = deployments.create(&PostParams::default(), &theirs).await;
    created.expect("their Deployment");
    let result = stale
        .owned::<Deployment>(&newer)
        .apply(deployment(&newer))
        .await;
    assert!(matches!(result, Err(Error::Stale(_))), "{result:?}");
    let left = fetch(&deployments, "web").await.expect("theirs");
    assert!(left.owner_references().is_empty(), "taken over");
}

/// A reconcile queued before `kubectl delete --cascade=orphan` (here: an apply with the owner
/// as it was read before the deletion) adopts nothing once the garbage collector has let the
/// Deployment go: the owner is read again from the API server, found being deleted, and the
/// apply is [`Stale`]; the orphan stays one. (It was adopted back, and the owner's cleanup, or
/// the garbage collector, then deleted it.)
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_reconcile_queued_before_an_orphaning_deletion_adopts_nothing() {
    let env = Environment::start(&OPERATOR).await;
    let apps: Api<App> = env.api();
    let deployments: Api<Deployment> = env.api();
    let (owner, created) = an_app_with_its_deployment(&env).await;
    is_controlled_by(&*created, &owner).expect("controlled");

    step("delete the App with --cascade=orphan; the garbage collector lets the Deployment go");
    apps.delete("web", &DeleteParams::orphan())
        .await
        .expect("deleted");
    // As kube-controller-manager's garbage collector does (envtest runs none).
    let released = json!({"metadata": {"ownerReferences": null}});
    deployments
        .patch("web", &PatchParams::default(), &Patch::Merge(&released))
        .await
        .expect("released");

    step("the queued reconcile applies with the App as it read it: no adoption");
    let result = context(&env)
        .owned::<Deployment>(&owner)
        .apply(deployment(&owner))
        .await;
    assert!(matches!(result, Err(Error::Stale(_))), "{result:?}");
    let orphan = fetch(&deployments, "web").await.expect("the orphan");
    assert!(
        orphan.owner_references().is_empty(),
        "adopted: {:?}",
        orphan.owner_references()
    );

    step("nor with the App as the deletion left it");
    let deleting = fetch(&apps, "web").await.expect("the App, being deleted");
    let result = context(&env)
        .owned::<Deployment>(&deleting)
        .apply(deployment(&deleting))
        .await;
    assert!(matches!(result, Err(Error::Stale(_))), "{result:?}");
    let orphan = fetch(&deployments, "web").await.expect("the orphan");
    assert!(orphan.owner_references().is_empty());
}

/// `kubectl delete --cascade=orphan` of the owner leaves its Deployment.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn an_orphaning_deletion_leaves_the_object() {
    let env = Environment::start(&OPERATOR).await;
    env.run(&APPS).await;
    let apps: Api<App> = env.api();
    let deployments: Api<Deployment> = env.api();
    let owner = env.apply(&apps, &app("podinfo:1")).await;
    wait_for_image(&env, &owner, "podinfo:1").await;

    step("delete the App with --cascade=orphan: the cleanup leaves the Deployment");
    apps.delete("web", &DeleteParams::orphan())
        .await
        .expect("deleted");
    // The garbage collector would then remove the owner reference, and the finalizer.
    env.wait_for("only the orphan finalizer", async || {
        let finalizers = fetch(&apps, "web").await?.finalizers().to_vec();
        match &finalizers[..] {
            [only] if only == "orphan" => Ok(()),
            _ => Err(format!("finalizers {finalizers:?}")),
        }
    })
    .await;
    let deployment = fetch(&deployments, "web").await.expect("kept");
    assert!(deployment.metadata.deletion_timestamp.is_none());
}

/// A cluster-scoped owner owns a ConfigMap in a namespace and a ClusterRole: both made, each
/// put back when deleted by hand (its watch finds the owner), both deleted with it.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn a_cluster_scoped_owner_owns_objects_in_namespaces_and_cluster_scoped_ones() {
    let env = Environment::start(&OPERATOR).await;
    let namespaces: Api<Namespace> = env.api();
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "team-a"}})).expect("a Namespace");
    let created = namespaces.create(&PostParams::default(), &namespace).await;
    created.expect("the namespace");
    env.run(&TEAMS).await;
    let teams: Api<Team> = env.api();
    let config_maps: Api<ConfigMap> = Api::namespaced(env.client(), "team-a");
    let roles: Api<ClusterRole> = env.api();

    step("a Team gets its ConfigMap in team-a and its ClusterRole");
    let team = Team::new(
        "blue",
        TeamSpec {
            namespace: "team-a".into(),
        },
    );
    let owner = env.apply(&teams, &team).await;
    let owned = async || {
        let config_map = fetch(&config_maps, "blue").await?;
        is_controlled_by(&config_map, &owner)?;
        let role = fetch(&roles, "blue").await?;
        is_controlled_by(&role, &owner)
    };
    env.wait_for("the Team's objects", owned).await;

    step("deleted by hand, each comes back");
    let deleted = config_maps.delete("blue", &DeleteParams::default()).await;
    deleted.expect("deleted");
    env.wait_for("the ConfigMap again", owned).await;
    let deleted = roles.delete("blue", &DeleteParams::default()).await;
    deleted.expect("deleted");
    env.wait_for("the ClusterRole again", owned).await;

    step("deleting the Team deletes them");
    teams
        .delete("blue", &DeleteParams::default())
        .await
        .expect("deleted");
    env.wait_for("the Team to go", async || gone(&teams, "blue").await)
        .await;
    gone(&config_maps, "blue")
        .await
        .expect("the ConfigMap deleted");
    gone(&roles, "blue").await.expect("the ClusterRole deleted");
}

/// How many watches of ConfigMaps the API server serves now (its gauge of long-running
/// requests): to count those the controllers opened.
async fn config_map_watches(env: &Environment) -> Result<f64, String> {
    let request = http::Request::get("/metrics").body(Vec::new());
    let request = request.map_err(|error| error.to_string())?;
    let metrics = env.client().request_text(request).await;
    let metrics = metrics.map_err(|error| error.to_string())?;
    let watches = metrics.lines().filter(|line| {
        line.starts_with("apiserver_longrunning_requests{")
            && line.contains(r#"resource="configmaps""#)
            && line.contains(r#"verb="WATCH""#)
    });
    let counts = watches.map(|line| line.rsplit(' ').next().and_then(|n| n.parse::<f64>().ok()));
    counts
        .sum::<Option<f64>>()
        .ok_or_else(|| "an unreadable line".to_owned())
}

/// Two controllers that own ConfigMaps share one watch of them and one cache, as
/// controller-runtime's informers are shared per kind; each still gets what it owns, and an
/// object of each deleted by hand is put back by its own controller.
#[tokio::test]
#[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
async fn controllers_that_own_one_kind_share_its_watch() {
    let env = Environment::start(&OPERATOR).await;
    let before = config_map_watches(&env)
        .await
        .expect("the API server's metrics");
    env.run(&TEAMS).await;
    env.run(&BOARDS).await;
    let teams: Api<Team> = env.api();
    let boards: Api<Board> = env.api();
    let config_maps: Api<ConfigMap> = env.api();

    step("a Team and a Board each get their ConfigMap");
    env.apply(
        &teams,
        &Team::new(
            "team",
            TeamSpec {
                namespace: "default".into(),
            },
        ),
    )
    .await;
    let title = BoardSpec {
        title: "Plans".into(),
    };
    let board = env.apply(&boards, &Board::new("board", title)).await;
    let owned_by = async |name: &str, owner: &dyn Fn(&ConfigMap) -> Result<(), String>| {
        env.wait_for(&format!("ConfigMap {name}"), async || {
            let config_map = fetch(&config_maps, name).await?;
            owner(&config_map)
        })
        .await
    };
    let team = teams.get("team").await.expect("the Team");
    owned_by("team", &|cm| is_controlled_by(cm, &team)).await;
    owned_by("board", &|cm| is_controlled_by(cm, &board)).await;

    step("the controllers opened one watch of ConfigMaps between them");
    env.wait_for("the watches to settle", async || {
        match config_map_watches(&env).await? - before {
            1.0 => Ok(()),
            opened => Err(format!("{opened} watches of ConfigMaps opened")),
        }
    })
    .await;

    step("each ConfigMap deleted by hand is put back, by its own controller");
    for name in ["team", "board"] {
        let deleted = fetch(&config_maps, name)
            .await
            .expect("the ConfigMap")
            .uid();
        let params = DeleteParams::default();
        config_maps.delete(name, &params).await.expect("deleted");
        env.wait_for(&format!("ConfigMap {name} again"), async || {
            let again = fetch(&config_maps, name).await?;
            match again.uid() != deleted {
                true => Ok(()),
                false => Err("the old one".to_owned()),
            }
        })
        .await;
    }
    owned_by("team", &|cm| is_controlled_by(cm, &team)).await;
    owned_by("board", &|cm| is_controlled_by(cm, &board)).await;
}
