//! Status conditions (`metav1.Condition`), set the way apimachinery's `meta.SetStatusCondition`
//! sets them, so that `kubectl wait --for=condition=...`, kstatus and Argo CD read them as they
//! read any Kubernetes object's.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Value, json};

/// A condition of `type_`, keeping the `lastTransitionTime` of the current condition of that
/// type when its status is unchanged, so that re-applying an unchanged status changes nothing.
/// `observed_generation` is the `metadata.generation` the condition was computed from.
///
/// ```
/// use rbuilder_runtime::conditions::{condition, is_true};
///
/// let ready = condition(&[], "Ready", "True", "Reconciled", "All set", Some(3));
/// let again = condition(&[ready.clone()], "Ready", "True", "Reconciled", "All set", Some(4));
/// // The same status: the same transition time, so an unchanged status applies as no change.
/// assert_eq!(again.last_transition_time, ready.last_transition_time);
/// assert!(is_true(&[again], "Ready"));
/// ```
pub fn condition(
    current: &[Condition],
    type_: &str,
    status: &str,
    reason: &str,
    message: impl Into<String>,
    observed_generation: Option<i64>,
) -> Condition {
    let last_transition_time = current
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map_or_else(
            || Time(Timestamp::now()),
            |c| c.last_transition_time.clone(),
        );
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.into(),
        observed_generation,
        last_transition_time,
    }
}

/// Whether `conditions` hold `type_` with status `"True"`.
///
/// ```
/// use rbuilder_runtime::conditions::{is_true, refused};
///
/// let conditions = refused(&[], "DeploymentTaken", "Deployment web is someone else's", None);
/// assert!(is_true(&conditions, "Degraded"));
/// assert!(!is_true(&conditions, "Available"));
/// ```
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// The conditions `Available`, `Progressing` and `Degraded` of an object that runs as
/// `deployment` (the object's `current` conditions, for their transition times), read from the
/// Deployment's status as `kubectl rollout status` reads it:
///
/// - `Available` is the Deployment's own (`Unknown`, reason `Pending`, until it has one);
/// - `Progressing` is `True` (reason `RollingOut`) until the Deployment controller has seen the
///   latest spec and every replica runs it and is available, then `False` (`RolloutComplete`);
///   its message counts the ready replicas;
/// - `Degraded` is `True` when the rollout is stuck: the progress deadline exceeded, or pods that
///   cannot be created (`ReplicaFailure`), with the Deployment's reason and message.
///
/// `observed_generation` is the object's `metadata.generation`.
///
/// ```
/// use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
/// use rbuilder_runtime::conditions::{is_true, of_deployment};
///
/// // Two replicas wanted, the Deployment controller's report of one ready.
/// let deployment = Deployment {
///     spec: DeploymentSpec {
///         replicas: Some(2),
///         ..Default::default()
///     },
///     status: Some(DeploymentStatus {
///         ready_replicas: Some(1),
///         ..Default::default()
///     }),
///     ..Default::default()
/// };
/// let conditions = of_deployment(&[], &deployment, Some(1));
/// assert!(is_true(&conditions, "Progressing"));
/// assert_eq!(conditions[1].message, "1/2 replicas ready");
/// // No `Available` condition reported yet: `Unknown`, reason `Pending`.
/// assert_eq!(conditions[0].reason, "Pending");
/// ```
pub fn of_deployment(
    current: &[Condition],
    deployment: &Deployment,
    observed_generation: Option<i64>,
) -> Vec<Condition> {
    let observed = deployment.status.clone().unwrap_or_default();
    let conditions = observed.conditions.unwrap_or_default();
    let find = |type_: &str| {
        let mut conditions = conditions.iter();
        conditions.find(|c| c.type_.as_deref() == Some(type_))
    };
    let text = |text: &Option<String>, default: &str| text.clone().unwrap_or(default.to_owned());
    let condition = |type_, status: &str, reason: &str, message: String| {
        condition(current, type_, status, reason, message, observed_generation)
    };
    // Kubernetes' default, when neither the object nor an autoscaler sets it.
    let wanted = deployment.spec.replicas.unwrap_or(1);
    let ready = observed.ready_replicas.unwrap_or(0);

    let available = match find("Available") {
        Some(c) => condition(
            "Available",
            &text(&c.status, "Unknown"),
            &text(&c.reason, "Deployment"),
            text(&c.message, ""),
        ),
        None => condition(
            "Available",
            "Unknown",
            "Pending",
            "Waiting for the Deployment to report its state".into(),
        ),
    };

    let counts = [
        observed.updated_replicas,
        observed.available_replicas,
        observed.replicas,
    ];
    let rolled_out = observed.observed_generation >= deployment.metadata.generation
        && counts.iter().all(|count| count.unwrap_or(0) == wanted);
    let (status, reason) = match rolled_out {
        true => ("False", "RolloutComplete"),
        false => ("True", "RollingOut"),
    };
    let progressing = condition(
        "Progressing",
        status,
        reason,
        format!("{ready}/{wanted} replicas ready"),
    );

    let failed = find("ReplicaFailure").filter(|c| c.status.as_deref() == Some("True"));
    let deadline =
        |c: &&DeploymentCondition| c.reason.as_deref() == Some("ProgressDeadlineExceeded");
    let stuck = failed.or_else(|| find("Progressing").filter(deadline));
    let degraded = match stuck {
        Some(c) => condition(
            "Degraded",
            "True",
            &text(&c.reason, "DeploymentFailed"),
            text(&c.message, ""),
        ),
        None => condition("Degraded", "False", "AsExpected", String::new()),
    };
    vec![available, progressing, degraded]
}

/// How long the status of an object waits for the first report of the Deployment it runs as,
/// at most: see [`first_report_due`]. A Deployment controller that keeps up reports well within
/// it; one further behind (a burst of thousands of new Deployments) costs the `Pending` write
/// that waiting would have saved, nothing more. A test without one (envtest) waits this much
/// longer for the status. `creationTimestamp` counts whole seconds: the wait is 1 to 2 s.
pub const FIRST_REPORT_WAIT: Duration = Duration::from_secs(2);

/// How long to wait before writing the status of an object that runs as `deployment`, when
/// waiting saves a write: the Deployment was made less than [`FIRST_REPORT_WAIT`] ago and the
/// Deployment controller has not reported on it yet (no `status.observedGeneration`). On a
/// working cluster it reports within moments, and its report brings another reconcile (the
/// controller watches its Deployments); a status written before it would only say that the
/// Deployment has not reported yet (`Available` `Unknown`, reason `Pending`), and be replaced
/// at once. `None`: write the status now, `Pending` included when the report is late (no
/// Deployment controller, as in envtest, or one far behind). A later change of the Deployment
/// writes the status at once: the report of the one before is there.
///
/// ```no_run
/// # use k8s_openapi::api::apps::v1::Deployment;
/// # use rbuilder_runtime::{conditions, controller::Action};
/// # fn f(deployment: &Deployment) -> Option<Action> {
/// if let Some(wait) = conditions::first_report_due(deployment) {
///     return Some(Action::requeue(wait));
/// }
/// # None }
/// ```
pub fn first_report_due(deployment: &Deployment) -> Option<Duration> {
    let reported = deployment.status.as_ref();
    if reported.is_some_and(|status| status.observed_generation.is_some()) {
        return None;
    }
    let created = deployment.metadata.creation_timestamp.as_ref()?.0;
    let wait = SignedDuration::try_from(FIRST_REPORT_WAIT).ok()?;
    let left = wait - Timestamp::now().duration_since(created);
    // Never longer than the whole wait, should this clock be behind the API server's.
    let left = Duration::try_from(left.min(wait)).ok()?;
    (!left.is_zero()).then_some(left)
}

/// The conditions `Available` and `Progressing` `False`, and `Degraded` `True`, all with `reason`
/// and `message`: an object that cannot run, e.g. because its Deployment is someone else's.
///
/// ```
/// use rbuilder_runtime::conditions::refused;
///
/// let message = "Deployment web is controlled by Guestbook web, not by this DemoMicroService";
/// let conditions = refused(&[], "DeploymentTaken", message, Some(2));
/// let types: Vec<_> = conditions.iter().map(|c| (c.type_.as_str(), c.status.as_str())).collect();
/// assert_eq!(types, [("Available", "False"), ("Progressing", "False"), ("Degraded", "True")]);
/// ```
pub fn refused(
    current: &[Condition],
    reason: &str,
    message: &str,
    observed_generation: Option<i64>,
) -> Vec<Condition> {
    let types = [
        ("Available", "False"),
        ("Progressing", "False"),
        ("Degraded", "True"),
    ];
    let conditions = types.into_iter().map(|(type_, status)| {
        condition(current, type_, status, reason, message, observed_generation)
    });
    conditions.collect()
}

/// The schema of a status's `conditions` list, for `#[schemars(schema_with = ...)]`: a list
/// of `metav1.Condition` keyed by `type` (so that server-side apply merges conditions one by
/// one), with the validations controller-gen writes for it, so that the API server refuses a
/// malformed condition as it does in a kubebuilder project's CRD.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
/// pub struct GuestbookStatus {
///     #[serde(default, skip_serializing_if = "Vec::is_empty")]
///     #[schemars(schema_with = "rbuilder_runtime::conditions::schema")]
///     pub conditions: Vec<Condition>,
/// }
///
/// let schema = schemars::schema_for!(GuestbookStatus);
/// let conditions = &schema.as_value()["properties"]["conditions"];
/// assert_eq!(conditions["x-kubernetes-list-map-keys"][0], "type");
/// ```
pub fn schema(generator: &mut SchemaGenerator) -> Schema {
    let mut item = Condition::json_schema(generator);
    // What the Go type's kubebuilder markers say, as controller-gen renders them.
    let checks = [
        ("message", json!({"maxLength": 32768})),
        ("observedGeneration", json!({"minimum": 0})),
        (
            "reason",
            json!({
                "maxLength": 1024,
                "minLength": 1,
                "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
            }),
        ),
        ("status", json!({"enum": ["True", "False", "Unknown"]})),
        (
            "type",
            json!({
                "maxLength": 316,
                "pattern": TYPE_PATTERN,
            }),
        ),
    ];
    if let Some(properties) = item.get_mut("properties").and_then(Value::as_object_mut) {
        for (field, check) in checks {
            if let (Some(Value::Object(property)), Value::Object(check)) =
                (properties.get_mut(field), check)
            {
                property.extend(check);
            }
        }
    }
    let mut list = Schema::default();
    list.insert("type".into(), json!("array"));
    list.insert("items".into(), item.to_value());
    list.insert("x-kubernetes-list-type".into(), json!("map"));
    list.insert("x-kubernetes-list-map-keys".into(), json!(["type"]));
    list
}

/// A condition type: a qualified name, optionally prefixed with a DNS subdomain and '/'.
const TYPE_PATTERN: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";

#[cfg(test)]
mod tests {
    use super::*;

    /// A Deployment made `age` ago (negative: this clock is behind the API server's), with the
    /// status `reported`.
    fn made_ago(age: SignedDuration, reported: Value) -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "creationTimestamp": Timestamp::now() - age},
            "status": reported,
        }))
        .expect("a Deployment")
    }

    #[test]
    fn a_new_deployment_without_a_report_is_waited_for() {
        let wait = first_report_due(&made_ago(SignedDuration::from_millis(500), json!({})));
        let wait = wait.expect("a wait");
        assert!(
            wait <= Duration::from_millis(1500) && wait > Duration::from_secs(1),
            "{wait:?}"
        );
    }

    #[test]
    fn a_late_report_or_one_that_came_is_not_waited_for() {
        let late = made_ago(SignedDuration::from_secs(3), json!({}));
        assert_eq!(first_report_due(&late), None);
        let reported = json!({"observedGeneration": 1});
        let reported = made_ago(SignedDuration::from_secs(1), reported);
        assert_eq!(first_report_due(&reported), None);
        let mut unknown = made_ago(SignedDuration::ZERO, json!(null));
        unknown.metadata.creation_timestamp = None;
        assert_eq!(first_report_due(&unknown), None);
    }

    #[test]
    fn a_clock_behind_the_api_servers_waits_no_longer_than_the_whole_wait() {
        let ahead = made_ago(SignedDuration::from_secs(-3600), json!({}));
        assert_eq!(first_report_due(&ahead), Some(FIRST_REPORT_WAIT));
    }

    #[test]
    fn the_transition_time_is_kept_while_the_status_is_unchanged() {
        let old = condition(&[], "Ready", "True", "Reconciled", "", Some(1));
        let current = [Condition {
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
            ..old
        }];

        let same = condition(&current, "Ready", "True", "Reconciled", "again", Some(2));
        assert_eq!(same.last_transition_time, Time(Timestamp::UNIX_EPOCH));
        assert_eq!(same.observed_generation, Some(2));
        assert!(is_true(&current, "Ready"));

        let changed = condition(&current, "Ready", "False", "Failed", "", Some(2));
        assert_ne!(changed.last_transition_time, Time(Timestamp::UNIX_EPOCH));
        assert!(!is_true(&[changed], "Ready"));
    }

    fn deployment(status: serde_json::Value) -> Deployment {
        let deployment = json!({
            "metadata": {"generation": 2},
            "spec": {"replicas": 3, "selector": {}, "template": {}},
            "status": status,
        });
        serde_json::from_value(deployment).expect("a Deployment")
    }

    /// Each condition's status, reason and message, in order.
    fn read(conditions: &[Condition]) -> Vec<(&str, &str, &str, &str)> {
        let read = conditions.iter().map(|c| {
            let (type_, status) = (c.type_.as_str(), c.status.as_str());
            (type_, status, c.reason.as_str(), c.message.as_str())
        });
        read.collect()
    }

    #[test]
    fn a_rolled_out_deployment_is_available_and_no_longer_progressing() {
        let available = json!({
            "type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
            "message": "up",
        });
        let progressing =
            json!({"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"});
        let rolled_out = deployment(json!({
            "observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
            "availableReplicas": 3, "conditions": [available, progressing],
        }));
        let conditions = of_deployment(&[], &rolled_out, Some(7));
        assert_eq!(
            read(&conditions),
            [
                ("Available", "True", "MinimumReplicasAvailable", "up"),
                (
                    "Progressing",
                    "False",
                    "RolloutComplete",
                    "3/3 replicas ready"
                ),
                ("Degraded", "False", "AsExpected", ""),
            ]
        );
        assert!(conditions.iter().all(|c| c.observed_generation == Some(7)));
    }

    #[test]
    fn a_deployment_not_yet_seen_or_still_rolling_out_is_progressing() {
        let new = of_deployment(&[], &deployment(json!(null)), Some(1));
        assert_eq!(
            read(&new),
            [
                (
                    "Available",
                    "Unknown",
                    "Pending",
                    "Waiting for the Deployment to report its state"
                ),
                ("Progressing", "True", "RollingOut", "0/3 replicas ready"),
                ("Degraded", "False", "AsExpected", ""),
            ]
        );
        // Every replica ready, but the Deployment controller has not seen generation 2 yet.
        let behind = deployment(json!({
            "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
            "availableReplicas": 3,
        }));
        let conditions = of_deployment(&[], &behind, Some(1));
        assert_eq!(read(&conditions)[1].1, "True");
    }

    #[test]
    fn a_stuck_rollout_is_degraded_with_the_deployments_reason() {
        let deadline = json!({
            "type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
            "message": "too slow",
        });
        let failure = json!({
            "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
            "message": "quota",
        });
        for (condition, reason, message) in [
            (deadline, "ProgressDeadlineExceeded", "too slow"),
            (failure, "FailedCreate", "quota"),
        ] {
            let stuck = deployment(json!({
                "observedGeneration": 2, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 2,
                "availableReplicas": 2, "conditions": [condition],
            }));
            let conditions = of_deployment(&[], &stuck, Some(1));
            let read = read(&conditions);
            assert_eq!(
                read[1],
                ("Progressing", "True", "RollingOut", "2/3 replicas ready")
            );
            assert_eq!(read[2], ("Degraded", "True", reason, message));
        }
    }

    #[test]
    fn a_refused_object_is_degraded_and_not_available() {
        let conditions = refused(&[], "DeploymentTaken", "theirs", Some(4));
        assert_eq!(
            read(&conditions),
            [
                ("Available", "False", "DeploymentTaken", "theirs"),
                ("Progressing", "False", "DeploymentTaken", "theirs"),
                ("Degraded", "True", "DeploymentTaken", "theirs"),
            ]
        );
    }

    #[test]
    fn the_schema_validates_conditions_as_controller_gens_does() {
        let schema = schema(&mut SchemaGenerator::default()).to_value();
        assert_eq!(schema["x-kubernetes-list-type"], "map");
        let properties = &schema["items"]["properties"];
        assert_eq!(
            properties["status"]["enum"],
            json!(["True", "False", "Unknown"])
        );
        assert_eq!(properties["reason"]["minLength"], 1);
        assert_eq!(properties["observedGeneration"]["minimum"], 0);
        assert_eq!(properties["type"]["maxLength"], 316);
        let required = schema["items"]["required"].as_array().expect("required");
        assert!(
            required.contains(&json!("lastTransitionTime")),
            "{required:?}"
        );
    }
}
