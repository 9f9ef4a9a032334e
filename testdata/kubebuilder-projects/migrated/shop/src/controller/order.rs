// Copyright 2026.
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

//! The `Order` controller: what the operator does with each Order.
//!
//! The runtime calls [`OrderReconciler`]'s `apply` for every change of a
//! Order (and of what `watches` adds); it retries failures and reports them as Events,
//! and, if you give the controller a finalizer, calls `cleanup` before a Order is
//! deleted (see `rbuilder_runtime::controller`).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::rbac::v1::PolicyRule;
use kube::Resource;
use kube::runtime::Controller;
use rbuilder_runtime::conditions::{condition, is_true};
use rbuilder_runtime::controller::Action;
use rbuilder_runtime::rbac::policy_rule;
use rbuilder_runtime::{Context, Event, EventType, Reconciler, Registration, register};

use crate::api::v1;

#[cfg(test)]
mod tests;

/// Reconciles orders.
pub struct OrderReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<OrderReconciler>();

impl Reconciler for OrderReconciler {
    type Resource = v1::Order;
    type Error = Error;
    const NAME: &'static str = "order";
    /// No finalizer: what `apply` makes in the cluster carries an owner reference and goes
    /// with the Order, so deleting one waits for nothing. If `apply` makes something
    /// outside the cluster, hold a finalizer so that `cleanup` releases it first:
    /// `const FINALIZER: Option<&'static str> = Some("shop.example.com/finalizer");`
    const FINALIZER: Option<&'static str> = None;

    /// Brings the world in line with `obj.spec`, then reports it in the status.
    async fn apply(obj: Arc<v1::Order>, ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): your reconcile logic. Read `obj.spec` and create or update what it
        // describes, preferably with server-side apply (`Patch::Apply` with
        // `ctx.apply_params()`), giving what you create an owner reference
        // (`obj.controller_owner_ref(&())`) so that it is deleted with the Order.
        // Grant each API call its verb in `rbac_rules`. Return errors with `?`.

        let current = obj.status.as_ref().map(|s| s.conditions.as_slice());
        let current = current.unwrap_or_default();
        let generation = obj.metadata.generation;
        let message = "The spec has been reconciled";
        let status = v1::OrderStatus {
            conditions: vec![condition(
                current,
                "Ready",
                "True",
                "Reconciled",
                message,
                generation,
            )],
            observed_generation: generation,
            // TODO(user): the status's other fields.
            ..Default::default()
        };
        ctx.apply_status(&*obj, &status).await?;
        if !is_true(current, "Ready") {
            let event = Event {
                type_: EventType::Normal,
                reason: "Ready".into(),
                note: Some(message.into()),
                action: "Reconcile".into(),
                secondary: None,
            };
            ctx.publish(&*obj, event).await;
        }
        // Again after an hour without a change: a safety net against missed watch events.
        Ok(Action::requeue(Duration::from_secs(60 * 60)))
    }

    /// Releases what `apply` made outside the cluster, before the Order is deleted:
    /// called only while the controller holds a `FINALIZER`.
    async fn cleanup(_obj: Arc<v1::Order>, _ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): your clean-up logic. Objects in the cluster with an owner reference to
        // the Order are deleted by Kubernetes' garbage collector.
        Ok(Action::await_change())
    }

    /// What else brings a reconcile besides a change of the Order. For what `apply`
    /// creates, e.g. ConfigMaps made with `ctx.owned::<ConfigMap>(&*obj)`:
    /// `controller.watch_owned::<ConfigMap>(ctx)` (`rbuilder_runtime::owned::ControllerExt`),
    /// with `list` and `watch` on them in `rbac_rules`; unlike kube's `controller.owns(...)`, it
    /// also wakes the owner of one deleted while the watch was down. Here: nothing else.
    fn watches(
        controller: Controller<Self::Resource>,
        _ctx: &Context,
    ) -> Controller<Self::Resource> {
        // TODO(user): `controller.watch_owned::<K>(ctx)` for each kind `apply` creates.
        controller
    }

    fn rbac_rules() -> Vec<PolicyRule> {
        let group = v1::Order::group(&());
        let plural = v1::Order::plural(&());
        vec![
            policy_rule(&group, &[&plural], &["get", "list", "watch", "patch"]),
            policy_rule(&group, &[&format!("{plural}/status")], &["patch"]),
            // Needed to set blockOwnerDeletion on objects owned by an Order.
            policy_rule(&group, &[&format!("{plural}/finalizers")], &["update"]),
        ]
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Kube(#[from] kube::Error),
}
