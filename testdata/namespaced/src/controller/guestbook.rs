//! The `Guestbook` controller: what the operator does with each Guestbook.
//!
//! The runtime calls [`GuestbookReconciler`]'s `apply` for every change of a
//! Guestbook (and of what `watches` adds); it retries failures and reports them as Events,
//! and, if you give the controller a finalizer, calls `cleanup` before a Guestbook is
//! deleted (see `rbuilder_runtime::controller`).

use std::sync::Arc;
use std::time::Duration;

use rbuilder_runtime::conditions::{condition, is_true};
use rbuilder_runtime::controller::Action;
use rbuilder_runtime::owned::Owns;
use rbuilder_runtime::{Context, Event, EventType, Reconciler, Registration, register};

use crate::api::v1;

#[cfg(test)]
mod tests;

/// Reconciles guestbooks.
pub struct GuestbookReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<GuestbookReconciler>();

impl Reconciler for GuestbookReconciler {
    type Resource = v1::Guestbook;
    type Error = Error;
    const NAME: &'static str = "guestbook";
    /// No finalizer: what `apply` makes in the cluster carries an owner reference and goes
    /// with the Guestbook, so deleting one waits for nothing. If `apply` makes something
    /// outside the cluster, hold a finalizer so that `cleanup` releases it first:
    /// `const FINALIZER: Option<&'static str> = Some("devops.my.domain/finalizer");`
    const FINALIZER: Option<&'static str> = None;

    /// Brings the world in line with `obj.spec`, then reports it in the status.
    async fn apply(obj: Arc<v1::Guestbook>, ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): your reconcile logic. Read `obj.spec` and create or update what it
        // describes with `ctx.owned::<K>(&*obj).apply(desired)` (and `K` in `owns` below):
        // a server-side apply with an owner reference, so that it is deleted with the
        // Guestbook. Return errors with `?`.

        let current = obj.status.as_ref().map(|s| s.conditions.as_slice());
        let current = current.unwrap_or_default();
        let generation = obj.metadata.generation;
        let message = "The spec has been reconciled";
        let status = v1::GuestbookStatus {
            conditions: vec![condition(
                current,
                "Ready",
                "True",
                "Reconciled",
                message,
                generation,
            )],
            observed_generation: generation,
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

    /// Releases what `apply` made outside the cluster, before the Guestbook is deleted:
    /// called only while the controller holds a `FINALIZER`.
    async fn cleanup(_obj: Arc<v1::Guestbook>, _ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): your clean-up logic. Objects in the cluster with an owner reference to
        // the Guestbook are deleted by Kubernetes' garbage collector.
        Ok(Action::await_change())
    }

    /// The kinds `apply` makes with `ctx.owned::<K>(&*obj)` (ConfigMaps, say): the runtime
    /// watches them, so that a change to one reconciles its owner, and grants the manager what
    /// `owned` does to them. The manager's other rules come from `Resource` and `FINALIZER`;
    /// add those your own code needs in `rbac_rules` (then `make manifests`).
    fn owns() -> Owns<Self::Resource> {
        // TODO(user): `Owns::kind::<ConfigMap>()`, `.and::<K>()`, for the kinds `apply` makes.
        Owns::none()
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Kube(#[from] kube::Error),
}
