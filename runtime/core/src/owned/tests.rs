//! Unit tests of owned objects, against a mocked API server: each test fills the controller's
//! cache (or leaves it without one), and scripts the requests that must be sent and the API
//! server's answers. A request the script does not expect fails the test.

use std::future::Future;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
use serde_json::{Value, json};

use super::*;
use crate::testing::{ApiServer, Method, mock_context, status_error, within_timeout};

/// A namespaced owner.
#[derive(
    kube::CustomResource, schemars::JsonSchema, Serialize, serde::Deserialize, Clone, Debug,
)]
#[kube(group = "test.my.domain", version = "v1", kind = "Widget", namespaced)]
struct WidgetSpec {
    size: i32,
}

/// A cluster-scoped owner.
#[derive(
    kube::CustomResource, schemars::JsonSchema, Serialize, serde::Deserialize, Clone, Debug,
)]
#[kube(group = "test.my.domain", version = "v1", kind = "Fleet")]
struct FleetSpec {
    size: i32,
}

const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/default/deployments/w";
/// The owner, which an adoption reads again first.
const WIDGET: &str = "/apis/test.my.domain/v1/namespaces/default/widgets/w";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
/// The field manager of `mock_context`'s operator.
const MANAGER: &str = "test-operator";

fn widget() -> Widget {
    let mut widget = Widget::new("w", WidgetSpec { size: 1 });
    widget.metadata.namespace = Some("default".into());
    widget.metadata.uid = Some("1234".into());
    widget
}

fn fleet() -> Fleet {
    let mut fleet = Fleet::new("f", FleetSpec { size: 1 });
    fleet.metadata.uid = Some("5678".into());
    fleet
}

/// What a controller would apply: no name, namespace or owner (the handle's).
fn desired(image: &str) -> Deployment {
    let labels = json!({"app": "w"});
    serde_json::from_value(json!({
        "metadata": {"labels": labels},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    }))
    .expect("a Deployment")
}

/// `desired(image)` as `widget()`'s apply sends it, marked with its hash.
fn sent(image: &str) -> Deployment {
    let (ctx, _server) = mock_context();
    let owned = ctx.owned::<Deployment>(&widget());
    let mut sent = owned.complete(desired(image)).expect("complete");
    applied::stamp(&mut sent).expect("serializable");
    sent
}

/// `sent(image)` as the API server stores it.
fn stored(image: &str, generation: i64) -> Deployment {
    let mut stored = sent(image);
    stored.metadata.uid = Some("d-1".into());
    stored.metadata.generation = Some(generation);
    stored.metadata.resource_version = Some("41".into());
    stored
}

/// The stored Deployment, controlled by the object `uid` (`None`: by none), still with this
/// operator's labels.
fn controlled_by(uid: Option<&str>) -> Deployment {
    let mut deployment = stored("podinfo:1", 1);
    deployment.metadata.owner_references = uid.map(|uid| {
        vec![OwnerReference {
            uid: uid.into(),
            name: "other".into(),
            ..widget()
                .controller_owner_ref(&())
                .expect("an owner reference")
        }]
    });
    deployment
}

/// A Deployment of the same name that this operator did not make: no labels of its own.
fn someone_elses(uid: Option<&str>) -> Deployment {
    let mut deployment = controlled_by(uid);
    deployment.metadata.labels = None;
    deployment
}

/// Runs `act` with a context whose cache of Deployments holds `cached` (none at all: `None`)
/// against `script`, which plays the API server.
async fn run<T, F, A>(
    cached: Option<Vec<Deployment>>,
    script: impl FnOnce(ApiServer) -> F,
    act: impl FnOnce(Arc<Context>) -> A,
) -> T
where
    F: Future<Output = ()> + Send + 'static,
    A: Future<Output = T>,
{
    let (ctx, server) = mock_context();
    if let Some(cached) = cached {
        ctx.cache_of(cached);
    }
    let server = tokio::spawn(script(server));
    let result = within_timeout(act(ctx)).await;
    server.await.expect("the API server's script");
    result
}

async fn apply(ctx: Arc<Context>, image: &str) -> Result<Applied<Deployment>, Error> {
    ctx.owned::<Deployment>(&widget())
        .release(&["spec", "replicas"])
        .apply(desired(image))
        .await
}

fn container(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]["containers"][0]
}

/// Answers the Event the next request must publish, and checks its reason and note.
async fn expect_event(server: &mut ApiServer, reason: &str) {
    let event = server.echo(Method::POST, EVENTS).await;
    assert_eq!(event["type"], "Normal");
    assert_eq!(event["reason"], reason);
    assert_eq!(event["note"], format!("{reason} Deployment w"));
    assert_eq!(event["regarding"]["kind"], "Widget");
    assert_eq!(event["regarding"]["name"], "w");
}

/// Created by a server-side apply, as every later change is: one entry of the operator owns
/// the object's fields.
#[tokio::test]
async fn a_missing_object_is_created_by_an_apply() {
    let applied = run(
        Some(vec![]),
        |mut server| async move {
            // Not in the cache: read, to tell it from an object that someone else made.
            let not_found = status_error(404, "NotFound");
            server.expect(Method::GET, DEPLOYMENT, 404, not_found).await;
            let created = server.echo(Method::PATCH, DEPLOYMENT).await;
            assert_eq!(created["metadata"]["name"], "w");
            assert_eq!(created["metadata"]["namespace"], "default");
            // No uid: there is no object to name.
            assert!(created["metadata"].get("uid").is_none(), "{created}");
            assert_eq!(container(&created)["image"], "podinfo:1");
            let labels = json!({"app": "w", MANAGED_BY: MANAGER});
            assert_eq!(created["metadata"]["labels"], labels);
            let owner = &created["metadata"]["ownerReferences"][0];
            assert_eq!(owner["apiVersion"], "test.my.domain/v1");
            assert_eq!(owner["kind"], "Widget");
            assert_eq!(owner["name"], "w");
            assert_eq!(owner["uid"], "1234");
            assert_eq!(owner["controller"], true);
            assert_eq!(owner["blockOwnerDeletion"], true);
            let annotations = &created["metadata"]["annotations"];
            assert!(annotations.get(applied::ANNOTATION).is_some(), "{created}");
            expect_event(&mut server, "Created").await;
        },
        |ctx| apply(ctx, "podinfo:1"),
    )
    .await
    .expect("applied");
    assert_eq!(applied.change, Change::Created);
}

#[tokio::test]
async fn a_change_is_applied_to_that_very_object_as_read() {
    let answer = json!(stored("podinfo:2", 2));
    let applied = run(
        Some(vec![stored("podinfo:1", 1)]),
        |mut server| async move {
            // Read from the cache: the apply is the first request.
            let applied = server.expect(Method::PATCH, DEPLOYMENT, 200, answer).await;
            assert_eq!(container(&applied)["image"], "podinfo:2");
            // The uid and resourceVersion of the object read: the API server refuses the apply
            // if it was replaced, or changed since the cache saw it.
            assert_eq!(applied["metadata"]["uid"], "d-1");
            assert_eq!(applied["metadata"]["resourceVersion"], "41");
            expect_event(&mut server, "Updated").await;
        },
        |ctx| apply(ctx, "podinfo:2"),
    )
    .await
    .expect("applied");
    assert_eq!(applied.change, Change::Updated);
    assert_eq!(applied.object.metadata.generation, Some(2));
}

/// The cache lags: the apply, made to the object as cached, is refused, which is no failure
/// (see the controller driver's tests: a quiet retry).
#[tokio::test]
async fn an_apply_to_an_object_changed_since_it_was_read_is_stale() {
    let result = run(
        Some(vec![stored("podinfo:1", 1)]),
        |mut server| async move {
            let conflict = status_error(409, "Conflict");
            let applied = server
                .expect(Method::PATCH, DEPLOYMENT, 409, conflict)
                .await;
            assert_eq!(applied["metadata"]["resourceVersion"], "41");
            // No Event: the script ends here.
        },
        |ctx| apply(ctx, "podinfo:2"),
    )
    .await;
    let error = result.expect_err("refused");
    assert!(matches!(error, Error::Stale(_)), "{error:?}");
    assert!(is_stale(&error));
}

/// A reconcile that finds the object as it applied it (a resync, a status change of the
/// object) sends nothing, and reports the cached object.
#[tokio::test]
async fn an_object_as_applied_is_not_applied_again() {
    let applied = run(
        Some(vec![stored("podinfo:1", 1)]),
        |_server| async {},
        |ctx| apply(ctx, "podinfo:1"),
    )
    .await
    .expect("applied");
    assert_eq!(applied.change, Change::Unchanged);
    assert_eq!(
        applied.object.metadata.resource_version.as_deref(),
        Some("41")
    );
}

/// A field set here and changed by hand is applied back.
#[tokio::test]
async fn an_object_edited_by_hand_is_applied_back() {
    let mut edited = stored("podinfo:1", 2);
    let pod = edited.spec.template.spec.as_mut();
    pod.expect("a pod template").containers[0].image = Some("podinfo:edited".into());
    let answer = json!(stored("podinfo:1", 3));
    let applied = run(
        Some(vec![edited]),
        |mut server| async move {
            let applied = server.expect(Method::PATCH, DEPLOYMENT, 200, answer).await;
            assert_eq!(container(&applied)["image"], "podinfo:1");
            expect_event(&mut server, "Updated").await;
        },
        |ctx| apply(ctx, "podinfo:1"),
    )
    .await
    .expect("applied");
    assert_eq!(applied.change, Change::Updated);
}

/// An apply that changes no spec (here a label put back) is no Event.
#[tokio::test]
async fn an_apply_that_moves_no_generation_is_no_event() {
    let mut edited = stored("podinfo:1", 1);
    edited.labels_mut().remove("app");
    let answer = json!(stored("podinfo:1", 1));
    let applied = run(
        Some(vec![edited]),
        |mut server| async move {
            server.expect(Method::PATCH, DEPLOYMENT, 200, answer).await;
        },
        |ctx| apply(ctx, "podinfo:1"),
    )
    .await
    .expect("applied");
    assert_eq!(applied.change, Change::Unchanged);
}

#[tokio::test]
async fn someone_elses_object_is_refused_saying_whose() {
    // Labelled as this operator's, the object is in the cache; someone else's is not, and is
    // read. An orphan this operator made for another owner is not adopted.
    let mut for_another = controlled_by(None);
    for_another.labels_mut().insert("app".into(), "x".into());
    let controlled = "Deployment w is controlled by Widget other: \
                      rename the Widget or delete that Deployment";
    let no_controller = "Deployment w exists and has no controller: \
                         rename the Widget or delete that Deployment";
    for (theirs, labelled, says) in [
        (controlled_by(Some("other-uid")), true, controlled),
        (someone_elses(Some("other-uid")), false, controlled),
        (someone_elses(None), false, no_controller),
        (for_another, true, no_controller),
    ] {
        let cached = labelled.then(|| theirs.clone());
        let read = json!(theirs);
        let result = run(
            Some(cached.into_iter().collect()),
            |mut server| async move {
                if !labelled {
                    server.expect(Method::GET, DEPLOYMENT, 200, read).await;
                }
                // Nothing else: no write, no Event.
            },
            |ctx| apply(ctx, "podinfo:1"),
        )
        .await;
        match result {
            Err(Error::Taken(taken)) => {
                assert_eq!(taken.to_string(), says);
                let whose = taken.controller.map(|owner| owner.uid);
                assert_eq!(
                    whose,
                    theirs.owner_references().first().map(|o| o.uid.clone())
                );
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn an_api_error_is_returned() {
    let result = run(
        None,
        |mut server| async move {
            let error = status_error(500, "InternalError");
            server.expect(Method::GET, DEPLOYMENT, 500, error).await;
        },
        |ctx| apply(ctx, "podinfo:1"),
    )
    .await;
    let error = result.expect_err("failed");
    assert!(matches!(error, Error::Api(_)), "{error:?}");
    assert!(
        error.to_string().contains("mocked InternalError"),
        "{error}"
    );
    assert!(!is_stale(&error));
}

/// An object this operator made for an owner of the same name, left behind by an orphaning
/// deletion (no controller any more), is adopted: applied to, owner reference and all.
#[tokio::test]
async fn an_orphan_it_made_is_adopted() {
    let applied = run(
        Some(vec![controlled_by(None)]),
        |mut server| async move {
            let owner = json!({"metadata": {"name": "w", "namespace": "default", "uid": "1234"}});
            server.expect(Method::GET, WIDGET, 200, owner).await;
            let applied = server.echo(Method::PATCH, DEPLOYMENT).await;
            assert_eq!(applied["metadata"]["uid"], "d-1");
            assert_eq!(applied["metadata"]["ownerReferences"][0]["uid"], "1234");
            expect_event(&mut server, "Adopted").await;
        },
        |ctx| apply(ctx, "podinfo:2"),
    )
    .await
    .expect("applied");
    assert_eq!(applied.change, Change::Adopted);
}

/// An owner that the API server shows being deleted (or gone, or replaced) adopts nothing: the
/// apply is [`Stale`], and no write is sent.
#[tokio::test]
async fn an_owner_being_deleted_adopts_nothing() {
    for owner in [
        json!({"metadata": {"name": "w", "namespace": "default", "uid": "1234",
            "deletionTimestamp": "2026-12-05T10:00:00Z", "finalizers": ["orphan"]}}),
        json!({"metadata": {"name": "w", "namespace": "default", "uid": "another"}}),
    ] {
        let result = run(
            Some(vec![controlled_by(None)]),
            |mut server| async move {
                server.expect(Method::GET, WIDGET, 200, owner).await;
            },
            |ctx| apply(ctx, "podinfo:2"),
        )
        .await;
        assert!(matches!(result, Err(Error::Stale(_))), "{result:?}");
    }
}

/// A released field that the desired object leaves out, and that the operator's apply owned, is
/// handed over first (the same value, applied by a field manager of its own), so that the apply
/// that leaves it out does not remove it.
#[tokio::test]
async fn a_released_field_left_out_is_handed_over_at_its_value() {
    let mut desired = desired("podinfo:1");
    desired.spec.replicas = None;
    // The cache drops managedFields, which tell who owns the replicas: they are read.
    let cached = stored("podinfo:1", 1);
    let mut read = cached.clone();
    read.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some(MANAGER.into()),
        operation: Some("Apply".into()),
        fields_v1: Some(FieldsV1(json!({"f:spec": {"f:replicas": {}}}))),
        ..ManagedFieldsEntry::default()
    }]);
    let mut released = read.clone();
    released.metadata.resource_version = Some("43".into());
    let (read, released) = (json!(read), json!(released));
    run(
        Some(vec![cached]),
        |mut server| async move {
            server.expect(Method::GET, DEPLOYMENT, 200, read).await;
            let release = server
                .expect(Method::PATCH, DEPLOYMENT, 200, released.clone())
                .await;
            assert_eq!(release["spec"], json!({"replicas": 2}));
            // That very object: no apply may create one in its place.
            assert_eq!(release["metadata"]["uid"], "d-1");
            let applied = server
                .expect(Method::PATCH, DEPLOYMENT, 200, released)
                .await;
            assert!(applied["spec"].get("replicas").is_none(), "{applied}");
            // The object as released: the release changed its resourceVersion.
            assert_eq!(applied["metadata"]["resourceVersion"], "43");
        },
        |ctx| async move {
            let owned = ctx.owned::<Deployment>(&widget());
            owned.release(&["spec", "replicas"]).apply(desired).await
        },
    )
    .await
    .expect("applied");
}

/// A released field that the desired object sets is applied as any other (taken back).
#[tokio::test]
async fn a_released_field_that_is_set_is_applied() {
    let answer = json!(stored("podinfo:2", 2));
    run(
        Some(vec![stored("podinfo:1", 1)]),
        |mut server| async move {
            let applied = server.expect(Method::PATCH, DEPLOYMENT, 200, answer).await;
            assert_eq!(applied["spec"]["replicas"], 2);
            expect_event(&mut server, "Updated").await;
        },
        |ctx| apply(ctx, "podinfo:2"),
    )
    .await
    .expect("applied");
}

async fn delete(ctx: Arc<Context>, owner: Widget) -> Result<Deletion, Error> {
    ctx.owned::<Deployment>(&owner).delete().await
}

#[tokio::test]
async fn deletion_deletes_that_very_object_as_read() {
    let answer = json!(stored("podinfo:1", 1));
    let deletion = run(
        Some(vec![stored("podinfo:1", 1)]),
        |mut server| async move {
            expect_event(&mut server, "Deleting").await;
            let delete = server.expect(Method::DELETE, DEPLOYMENT, 200, answer).await;
            // Not one created in its place, or taken by someone else, since the cache saw it.
            assert_eq!(delete["preconditions"]["uid"], "d-1");
            assert_eq!(delete["preconditions"]["resourceVersion"], "41");
        },
        |ctx| delete(ctx, widget()),
    )
    .await;
    assert_eq!(deletion.expect("deleted"), Deletion::Deleted);
}

/// An object changed since the cache saw it is not deleted: the retry sees what it became.
#[tokio::test]
async fn deletion_of_an_object_changed_since_it_was_read_is_stale() {
    let result = run(
        Some(vec![stored("podinfo:1", 1)]),
        |mut server| async move {
            expect_event(&mut server, "Deleting").await;
            let conflict = status_error(409, "Conflict");
            server
                .expect(Method::DELETE, DEPLOYMENT, 409, conflict)
                .await;
        },
        |ctx| delete(ctx, widget()),
    )
    .await;
    assert!(matches!(result, Err(Error::Stale(_))), "{result:?}");
}

#[tokio::test]
async fn deletion_of_an_object_gone_meanwhile_succeeds() {
    let result = run(
        Some(vec![stored("podinfo:1", 1)]),
        |mut server| async move {
            expect_event(&mut server, "Deleting").await;
            let gone = status_error(404, "NotFound");
            server.expect(Method::DELETE, DEPLOYMENT, 404, gone).await;
        },
        |ctx| delete(ctx, widget()),
    )
    .await;
    assert_eq!(result.expect("deleted"), Deletion::Deleted);
}

#[tokio::test]
async fn deletion_leaves_what_it_does_not_control() {
    for owner in [Some("other-uid"), None] {
        // No request: the object is in the cache, and not this owner's.
        let result = run(
            Some(vec![controlled_by(owner)]),
            |_server| async {},
            |ctx| delete(ctx, widget()),
        )
        .await;
        assert_eq!(result.expect("left"), Deletion::NotControlled);
    }
    let result = run(
        None,
        |mut server| async move {
            let not_found = status_error(404, "NotFound");
            server.expect(Method::GET, DEPLOYMENT, 404, not_found).await;
        },
        |ctx| delete(ctx, widget()),
    )
    .await;
    assert_eq!(result.expect("nothing to delete"), Deletion::Absent);
}

/// `kubectl delete --cascade=orphan`: the API server adds the `orphan` finalizer, and the
/// object must survive its owner.
#[tokio::test]
async fn an_orphaning_deletion_keeps_the_object() {
    let mut orphaning = widget();
    orphaning.metadata.finalizers = Some(vec!["orphan".into(), "test.my.domain/f".into()]);
    // No request at all: not even a read.
    let result = run(
        Some(vec![stored("podinfo:1", 1)]),
        |_server| async {},
        |ctx| delete(ctx, orphaning),
    )
    .await;
    assert_eq!(result.expect("kept"), Deletion::Orphaned);
}

/// A ConfigMap named `name`.
fn config_map(name: Option<&str>) -> ConfigMap {
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = name.map(str::to_owned);
    config_map.data = Some([("key".to_owned(), "value".to_owned())].into());
    config_map
}

#[tokio::test]
async fn another_name_is_another_object() {
    let path = "/api/v1/namespaces/default/configmaps/w-config";
    let applied = run(
        None,
        |mut server| async move {
            let not_found = status_error(404, "NotFound");
            server.expect(Method::GET, path, 404, not_found).await;
            let created = server.echo(Method::PATCH, path).await;
            assert_eq!(created["metadata"]["name"], "w-config");
            let event = server.echo(Method::POST, EVENTS).await;
            assert_eq!(event["note"], "Created ConfigMap w-config");
        },
        |ctx| async move {
            let owned = ctx.owned::<ConfigMap>(&widget()).named("w-config");
            assert_eq!(owned.name(), "w-config");
            owned.apply(config_map(None)).await
        },
    )
    .await;
    assert_eq!(applied.expect("applied").change, Change::Created);
}

/// The desired object's name and namespace are the handle's: another is a mistake, refused
/// before any request.
#[tokio::test]
async fn a_desired_object_named_otherwise_is_refused() {
    let result = run(
        None,
        |_server| async {},
        |ctx| async move {
            let owned = ctx.owned::<ConfigMap>(&widget());
            owned.apply(config_map(Some("other"))).await
        },
    )
    .await;
    let error = result.expect_err("refused");
    assert!(matches!(error, Error::Invalid(_)), "{error:?}");
    assert_eq!(
        error.to_string(),
        "the desired ConfigMap has the name \"other\", not \"w\""
    );
}

#[tokio::test]
async fn an_owner_without_a_uid_owns_nothing_yet() {
    let mut owner = widget();
    owner.metadata.uid = None;
    let result = run(
        None,
        |_server| async {},
        |ctx| async move { ctx.owned::<ConfigMap>(&owner).apply(config_map(None)).await },
    )
    .await;
    let error = result.expect_err("refused");
    assert_eq!(error.to_string(), "Widget w has no uid yet");
}

/// A cluster-scoped owner owns cluster-scoped objects, without a namespace; its Events go to
/// `default`, as every cluster-scoped object's.
#[tokio::test]
async fn a_cluster_scoped_owner_owns_cluster_scoped_objects() {
    let path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/f";
    let applied = run(
        None,
        |mut server| async move {
            let not_found = status_error(404, "NotFound");
            server.expect(Method::GET, path, 404, not_found).await;
            let created = server.echo(Method::PATCH, path).await;
            assert!(created["metadata"].get("namespace").is_none(), "{created}");
            let owner = &created["metadata"]["ownerReferences"][0];
            assert_eq!(
                (&owner["kind"], &owner["uid"]),
                (&json!("Fleet"), &json!("5678"))
            );
            let event = server.echo(Method::POST, EVENTS).await;
            assert_eq!(event["note"], "Created ClusterRole f");
        },
        |ctx| async move {
            let role = ClusterRole::default();
            ctx.owned::<ClusterRole>(&fleet()).apply(role).await
        },
    )
    .await;
    assert_eq!(applied.expect("applied").change, Change::Created);
}

/// A cluster-scoped owner's objects in a namespace: the refusal names the namespace.
#[tokio::test]
async fn a_cluster_scoped_owner_owns_objects_in_a_namespace() {
    let path = "/api/v1/namespaces/team-a/configmaps/f";
    let mut theirs = config_map(Some("f"));
    theirs.metadata.namespace = Some("team-a".into());
    let read = json!(theirs);
    let result = run(
        None,
        |mut server| async move {
            server.expect(Method::GET, path, 200, read).await;
        },
        |ctx| async move {
            let owned = ctx.owned_in::<ConfigMap>(&fleet(), "team-a");
            owned.apply(config_map(None)).await
        },
    )
    .await;
    let error = result.expect_err("refused");
    assert_eq!(
        error.to_string(),
        "ConfigMap team-a/f exists and has no controller: rename the Fleet or delete that ConfigMap"
    );
}

/// The watch maps an owned object to its controller owner: in the object's namespace for a
/// namespaced owner, in none for a cluster-scoped one.
#[test]
fn an_owned_object_triggers_its_controller_owner() {
    let mut child = config_map(Some("c"));
    child.metadata.namespace = Some("team-a".into());
    let reference = |owner: &dyn Fn() -> Option<OwnerReference>, controller| {
        let mut child = child.clone();
        let mut reference = owner().expect("an owner reference");
        reference.controller = Some(controller);
        child.metadata.owner_references = Some(vec![reference]);
        child
    };
    let by_widget = || widget().controller_owner_ref(&());
    let by_fleet = || fleet().controller_owner_ref(&());

    let owner = watch::controller_of::<_, Widget>(reference(&by_widget, true));
    assert_eq!(owner, Some(ObjectRef::new("w").within("team-a")));
    let owner = watch::controller_of::<_, Fleet>(reference(&by_fleet, true));
    assert_eq!(owner, Some(ObjectRef::new("f")));
    // Another kind, or an owner that is not the controller: no reconcile.
    assert_eq!(
        watch::controller_of::<_, Widget>(reference(&by_fleet, true)),
        None
    );
    assert_eq!(
        watch::controller_of::<_, Fleet>(reference(&by_fleet, false)),
        None
    );
    // Another version of the kind: the same owner.
    let other_version = || {
        let reference = by_widget()?;
        Some(OwnerReference {
            api_version: "test.my.domain/v1beta1".into(),
            ..reference
        })
    };
    let owner = watch::controller_of::<_, Widget>(reference(&other_version, true));
    assert_eq!(owner, Some(ObjectRef::new("w").within("team-a")));
}

/// However a reconciler's error wraps [`Error`], the runtime finds a [`Stale`] in its chain.
#[test]
fn a_stale_error_is_found_in_a_reconcilers_error() {
    #[derive(Debug, thiserror::Error)]
    enum Wrapped {
        #[error("{0}")]
        Owned(#[from] Error),
    }
    #[derive(Debug, thiserror::Error)]
    enum Transparent {
        #[error(transparent)]
        Owned(#[from] Error),
    }
    let stale = || {
        Error::Stale(Stale {
            kind: "Deployment".into(),
            name: "w".into(),
            error: kube::Error::Api(Box::new(
                serde_json::from_value(status_error(409, "Conflict")).expect("a Status"),
            )),
        })
    };
    assert!(is_stale(&Wrapped::from(stale())));
    assert!(is_stale(&Transparent::from(stale())));
    assert!(!is_stale(&Wrapped::from(Error::Invalid("x".into()))));
}
