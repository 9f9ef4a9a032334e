//! [`Operator`]: what a project says of itself to the runtime (its name, version, controllers,
//! webhooks, CRDs and scope), in its `src/lib.rs`; the manager, the build-time tools and the
//! test support all start from it.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::crd::MergeError;

use crate::controller::Registration;
use crate::webhook::Webhook;

/// An operator, as the project describes itself to the runtime (in its `src/lib.rs`).
///
/// Build it with [`Operator::new`] and its methods, which work in a `static`:
///
/// ```
/// # use rbuilder_runtime::{Operator, WatchScope};
/// # mod controller { pub const CONTROLLERS: &[rbuilder_runtime::Registration] = &[]; }
/// pub static OPERATOR: Operator = Operator::new("guestbook")
///     .version("0.1.0")
///     .controllers(controller::CONTROLLERS)
///     .scope(WatchScope::Namespace);
/// ```
///
/// A later runtime may give an operator more to say (a new field, with a method to set it and
/// a default): an operator built this way keeps compiling after `rbuilder update`, as one
/// written out field by field (`Operator { name: ..., ... }`) would not. The fields stay public,
/// and hidden here, only for the projects made before the methods, whose `src/lib.rs` lists
/// them all, and deprecated: the methods are the one way to build an operator.
pub struct Operator {
    /// The project's name. The runtime derives from it the name the operator gives itself to
    /// the API server (`<name>-operator`: field manager, Event reporter, `managed-by` label) and
    /// its leader-election Lease (`<name>-leader-election`).
    #[doc(hidden)]
    #[deprecated(note = "build the Operator with `Operator::new(name)` and its methods")]
    pub name: &'static str,
    /// The project's version, printed by `--version`.
    #[doc(hidden)]
    #[deprecated(note = "build the Operator with `Operator::new(name)` and its methods")]
    pub version: &'static str,
    /// Every controller the manager runs, in start order.
    #[doc(hidden)]
    #[deprecated(note = "build the Operator with `Operator::new(name)` and its methods")]
    pub controllers: &'static [Registration],
    /// Every admission and conversion webhook the manager serves (none: no webhook server).
    #[doc(hidden)]
    #[deprecated(note = "build the Operator with `Operator::new(name)` and its methods")]
    pub webhooks: &'static [Webhook],
    /// The CustomResourceDefinitions of the project's own kinds, one per kind.
    #[doc(hidden)]
    #[deprecated(note = "build the Operator with `Operator::new(name)` and its methods")]
    pub crds: fn() -> Result<Vec<CustomResourceDefinition>, MergeError>,
    /// What the operator watches and is granted: the whole cluster, or one namespace.
    #[doc(hidden)]
    #[deprecated(note = "build the Operator with `Operator::new(name)` and its methods")]
    pub scope: WatchScope,
}

/// Where an operator works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchScope {
    /// All namespaces: the manager's role is a ClusterRole.
    Cluster,
    /// The namespace in `WATCH_NAMESPACE` only: the manager's role is a Role in that namespace
    /// (`rbuilder init --namespaced`).
    Namespace,
}

// The fields are deprecated for the projects that set them, not for the methods.
#[allow(deprecated)]
impl Operator {
    /// An operator named `name`, with nothing else: version "0.0.0", no controllers, webhooks
    /// or CRDs, working in the whole cluster. The methods below add the rest.
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            version: "0.0.0",
            controllers: &[],
            webhooks: &[],
            crds: no_crds,
            scope: WatchScope::Cluster,
        }
    }

    /// This operator at `version` (`env!("CARGO_PKG_VERSION")`: the project's).
    #[must_use]
    pub const fn version(mut self, version: &'static str) -> Self {
        self.version = version;
        self
    }

    /// This operator with `controllers`, run by the manager in this order.
    #[must_use]
    pub const fn controllers(mut self, controllers: &'static [Registration]) -> Self {
        self.controllers = controllers;
        self
    }

    /// This operator with `webhooks`, served by the manager.
    #[must_use]
    pub const fn webhooks(mut self, webhooks: &'static [Webhook]) -> Self {
        self.webhooks = webhooks;
        self
    }

    /// This operator with the CRDs of its own kinds, as `crds` returns them.
    #[must_use]
    pub const fn crds(
        mut self,
        crds: fn() -> Result<Vec<CustomResourceDefinition>, MergeError>,
    ) -> Self {
        self.crds = crds;
        self
    }

    /// This operator working in `scope`.
    #[must_use]
    pub const fn scope(mut self, scope: WatchScope) -> Self {
        self.scope = scope;
        self
    }

    /// The name this operator uses towards the API server: the server-side apply field
    /// manager, the `reportingController` of its Events and the `app.kubernetes.io/managed-by`
    /// label of what it creates.
    pub fn field_manager(&self) -> String {
        format!("{}-operator", self.name)
    }

    /// What this operator says, as the runtime and its tools read it.
    #[doc(hidden)]
    pub const fn parts(&self) -> Parts {
        Parts {
            name: self.name,
            version: self.version,
            controllers: self.controllers,
            webhooks: self.webhooks,
            crds: self.crds,
            scope: self.scope,
        }
    }
}

/// An [`Operator`]'s fields, which the runtime reads through [`Operator::parts`]: deprecated
/// for the projects that set them, not for the runtime.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Parts {
    pub name: &'static str,
    pub version: &'static str,
    pub controllers: &'static [Registration],
    pub webhooks: &'static [Webhook],
    pub crds: fn() -> Result<Vec<CustomResourceDefinition>, MergeError>,
    pub scope: WatchScope,
}

/// The CRDs of an operator without kinds of its own.
fn no_crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    static BUILT: Operator = Operator::new("built")
        .version("1.2.3")
        .scope(WatchScope::Namespace);

    /// How `src/lib.rs` wrote OPERATOR before `Operator::new`: every field. Adding a field to
    /// `Operator` breaks those projects (`rbuilder update` does not change a user's file): do
    /// it knowingly, deleting this, and have `update` say how to port them.
    #[allow(deprecated)]
    static WRITTEN_OUT: Operator = Operator {
        name: "written-out",
        version: "0.1.0",
        controllers: &[],
        webhooks: &[],
        crds: no_crds,
        scope: WatchScope::Cluster,
    };

    #[test]
    fn an_operator_built_in_a_static_has_defaults_for_what_it_does_not_say() {
        let built = BUILT.parts();
        assert_eq!((built.name, built.version), ("built", "1.2.3"));
        assert!(built.controllers.is_empty() && built.webhooks.is_empty());
        assert!((built.crds)().is_ok_and(|crds| crds.is_empty()));
        assert_eq!(built.scope, WatchScope::Namespace);
        assert_eq!(Operator::new("x").parts().scope, WatchScope::Cluster);
        assert_eq!(BUILT.field_manager(), "built-operator");
    }

    #[test]
    fn an_operator_written_out_field_by_field_still_compiles() {
        assert_eq!(WRITTEN_OUT.field_manager(), "written-out-operator");
    }
}
