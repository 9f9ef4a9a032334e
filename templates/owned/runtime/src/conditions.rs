//! Status conditions (`metav1.Condition`), set the way apimachinery's `meta.SetStatusCondition`
//! sets them, so that `kubectl wait --for=condition=...`, kstatus and Argo CD read them as they
//! read any Kubernetes object's.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// A condition of `type_`, keeping the `lastTransitionTime` of the current condition of that
/// type when its status is unchanged, so that re-applying an unchanged status changes nothing.
/// `observed_generation` is the `metadata.generation` the condition was computed from.
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
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True")
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
