// Copyright 2026 The demo-microservice Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The controllers of this operator and the registry the manager starts them from.
//!
//! A controller is a module exposing a [`ControllerDescriptor`] named `CONTROLLER`; listing it in
//! [`CONTROLLERS`] makes the manager run it and the `manifests` binary grant its RBAC rules.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::ListParams;
use kube::runtime::controller::{Action, Error as ControllerError};
use kube::runtime::events::{Event, EventType};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use crate::Context;

pub mod demo_micro_service;
// +rbuilder:scaffold:controller-modules

/// Every controller the manager runs, in start order.
pub const CONTROLLERS: &[ControllerDescriptor] = &[
    demo_micro_service::CONTROLLER,
    // +rbuilder:scaffold:controllers
];

/// What the manager and the `manifests` binary need to know about one controller.
pub struct ControllerDescriptor {
    /// Name used in logs and in the `controller` label of the metrics.
    pub name: &'static str,
    /// Runs the controller until `shutdown` is cancelled and in-flight reconciles have finished.
    /// Fails early if its resource cannot be listed (e.g. the CRD is not installed).
    pub run: fn(Arc<Context>, CancellationToken) -> BoxFuture<'static, Result<(), kube::Error>>,
    /// The RBAC rules the controller needs, granted to the manager in `config/rbac/role.yaml`.
    pub rbac_rules: fn() -> Vec<PolicyRule>,
}

/// The RBAC rules of all registered controllers, merged and sorted so that `role.yaml` is stable:
/// one rule per API group and set of verbs. Rules naming `resourceNames` or `nonResourceURLs`
/// are kept as they are (merging them would widen them).
pub fn rbac_rules() -> Vec<PolicyRule> {
    let mut verbs: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let mut unmerged = Vec::new();
    for rule in CONTROLLERS.iter().flat_map(|c| (c.rbac_rules)()) {
        if rule.resource_names.is_some() || rule.non_resource_urls.is_some() {
            unmerged.push(rule);
            continue;
        }
        for group in rule.api_groups.iter().flatten() {
            for resource in rule.resources.iter().flatten() {
                let key = (group.clone(), resource.clone());
                verbs
                    .entry(key)
                    .or_default()
                    .extend(rule.verbs.iter().cloned());
            }
        }
    }

    let mut resources: BTreeMap<(String, Vec<String>), Vec<String>> = BTreeMap::new();
    for ((group, resource), verbs) in verbs {
        let key = (group, verbs.into_iter().collect());
        resources.entry(key).or_default().push(resource);
    }
    let mut rules: Vec<PolicyRule> = resources
        .into_iter()
        .map(|((group, verbs), resources)| PolicyRule {
            api_groups: Some(vec![group]),
            resources: Some(resources),
            verbs,
            ..PolicyRule::default()
        })
        .collect();
    rules.sort_by(|a, b| (&a.api_groups, &a.resources).cmp(&(&b.api_groups, &b.resources)));
    unmerged.sort_by_key(|rule| format!("{rule:?}"));
    unmerged.dedup();
    rules.extend(unmerged);
    rules
}

/// A rule granting `verbs` on `resources` of the API `group` (`""` for the core group).
pub fn policy_rule(group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..PolicyRule::default()
    }
}

/// Fails unless `api` can be listed, so that a missing CRD, or a missing RBAC rule for the
/// controller's own kind, stops the manager at start-up with a clear error instead of a watcher
/// retrying forever. (Other watched types are not checked: a missing rule for them shows as
/// repeated "watch failed" warnings.)
pub async fn check_api<K>(api: &Api<K>) -> Result<(), kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    api.list_metadata(&ListParams::default().limit(1)).await?;
    Ok(())
}

/// Logs one result of `Controller::run`.
pub fn log_result<K, E>(
    controller: &str,
    result: Result<(ObjectRef<K>, Action), ControllerError<E, kube::runtime::watcher::Error>>,
) where
    K: Resource,
    K::DynamicType: Debug,
    E: std::error::Error,
{
    match result {
        Ok((object, _)) => debug!(controller, %object, "reconciled"),
        Err(ControllerError::ReconcilerFailed(error, object)) => {
            warn!(controller, %object, %error, "reconcile failed");
        }
        // A queued object deleted before its turn: nothing to do.
        Err(ControllerError::ObjectNotFound(object)) => debug!(controller, %object, "gone"),
        // The watch failed (e.g. RBAC): it is retried with a backoff.
        Err(error) => warn!(controller, %error, "watch failed"),
    }
}

/// Publishes `event` about `obj`. Events are informational: a failure (e.g. in a namespace
/// being deleted, which refuses new objects) is logged, and must not block the reconcile or
/// the finalizer.
pub async fn publish<K>(ctx: &Context, controller: &str, obj: &K, mut event: Event)
where
    K: Resource<DynamicType = ()>,
{
    if let Some(note) = &mut event.note {
        shorten_note(note);
    }
    if let Err(error) = ctx.recorder.publish(&event, &obj.object_ref(&())).await {
        warn!(controller, %error, "cannot publish an Event");
    }
}

/// The Warning Event of a failed reconcile, so that `kubectl describe` shows the error, not
/// only the operator's log. Failures with the same reason are counted in one Event series.
pub fn failure_event(error: &impl std::fmt::Display) -> Event {
    Event {
        type_: EventType::Warning,
        reason: "ReconcileFailed".into(),
        note: Some(error.to_string()),
        action: "Reconcile".into(),
        secondary: None,
    }
}

/// Cuts `note` to the 1 kB the API server accepts in an Event (API errors can be longer).
fn shorten_note(note: &mut String) {
    const MAX: usize = 1024;
    const ELLIPSIS: char = '…';
    if note.len() <= MAX {
        return;
    }
    let mut end = MAX - ELLIPSIS.len_utf8();
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    note.truncate(end);
    note.push(ELLIPSIS);
}

/// A status condition of `type_`, keeping the `lastTransitionTime` of the current condition of
/// that type when its status is unchanged (as apimachinery's `meta.SetStatusCondition` does), so
/// that re-applying an unchanged status changes nothing.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rbac_rules_are_merged_and_sorted() {
        let rules = rbac_rules();
        let mut sorted = rules.clone();
        sorted.sort_by(|a, b| (&a.api_groups, &a.resources).cmp(&(&b.api_groups, &b.resources)));
        assert_eq!(rules, sorted);
        for rule in &rules {
            let mut verbs = rule.verbs.clone();
            verbs.sort();
            verbs.dedup();
            assert_eq!(rule.verbs, verbs);
        }
    }

    #[test]
    fn long_event_notes_are_cut_on_a_character_boundary() {
        let mut note = "é".repeat(600); // 1200 bytes
        shorten_note(&mut note);
        assert!(note.len() <= 1024, "{}", note.len());
        assert!(note.ends_with('…'));

        let mut short = "fine".to_owned();
        shorten_note(&mut short);
        assert_eq!(short, "fine");
    }

    #[test]
    fn condition_keeps_transition_time_while_status_is_unchanged() {
        let old = condition(&[], "Ready", "True", "Reconciled", "", Some(1));
        let current = [Condition {
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
            ..old
        }];

        let same = condition(&current, "Ready", "True", "Reconciled", "again", Some(2));
        assert_eq!(same.last_transition_time, Time(Timestamp::UNIX_EPOCH));
        assert_eq!(same.observed_generation, Some(2));

        let changed = condition(&current, "Ready", "False", "Failed", "", Some(2));
        assert_ne!(changed.last_transition_time, Time(Timestamp::UNIX_EPOCH));
    }
}
