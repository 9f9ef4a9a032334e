//! Kubernetes' built-in types that `create api --resource=false` can write a controller for.
//! The generated code names them through k8s-openapi, so a type must be known here to be
//! sure it compiles; the list covers the types operators commonly reconcile.

use super::Group;

/// One built-in type: how the command line names it and how the API and k8s-openapi do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// `--group` as kubebuilder takes it: `core`, `apps`, `networking`, ...
    pub group: &'static str,
    /// The API group: `""` for core, `networking.k8s.io`, ...
    pub api_group: &'static str,
    /// The k8s-openapi module under `k8s_openapi::api`.
    pub module: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
}

const fn b(
    group: &'static str,
    api_group: &'static str,
    module: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
) -> Builtin {
    Builtin {
        group,
        api_group,
        module,
        version,
        kind,
        plural,
        namespaced,
    }
}

/// (group, API group, k8s-openapi module, version, kind, plural, namespaced)
#[rustfmt::skip]
pub const BUILTINS: &[Builtin] = &[
    b("apps", "apps", "apps", "v1", "DaemonSet", "daemonsets", true),
    b("apps", "apps", "apps", "v1", "Deployment", "deployments", true),
    b("apps", "apps", "apps", "v1", "ReplicaSet", "replicasets", true),
    b("apps", "apps", "apps", "v1", "StatefulSet", "statefulsets", true),
    b("autoscaling", "autoscaling", "autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true),
    b("batch", "batch", "batch", "v1", "CronJob", "cronjobs", true),
    b("batch", "batch", "batch", "v1", "Job", "jobs", true),
    b("coordination", "coordination.k8s.io", "coordination", "v1", "Lease", "leases", true),
    b("core", "", "core", "v1", "ConfigMap", "configmaps", true),
    b("core", "", "core", "v1", "Namespace", "namespaces", false),
    b("core", "", "core", "v1", "Node", "nodes", false),
    b("core", "", "core", "v1", "PersistentVolume", "persistentvolumes", false),
    b("core", "", "core", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true),
    b("core", "", "core", "v1", "Pod", "pods", true),
    b("core", "", "core", "v1", "Secret", "secrets", true),
    b("core", "", "core", "v1", "Service", "services", true),
    b("core", "", "core", "v1", "ServiceAccount", "serviceaccounts", true),
    b("networking", "networking.k8s.io", "networking", "v1", "Ingress", "ingresses", true),
    b("networking", "networking.k8s.io", "networking", "v1", "NetworkPolicy", "networkpolicies", true),
    b("policy", "policy", "policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", true),
    b("rbac", "rbac.authorization.k8s.io", "rbac", "v1", "ClusterRole", "clusterroles", false),
    b("rbac", "rbac.authorization.k8s.io", "rbac", "v1", "Role", "roles", true),
    b("rbac", "rbac.authorization.k8s.io", "rbac", "v1", "RoleBinding", "rolebindings", true),
    b("storage", "storage.k8s.io", "storage", "v1", "StorageClass", "storageclasses", false),
];

impl Builtin {
    /// The group as PROJECT records it: `""` for core, else kubebuilder's short name.
    pub fn project_group(&self) -> anyhow::Result<Group> {
        if self.api_group.is_empty() {
            Ok(Group::core())
        } else {
            Group::parse(self.group)
        }
    }

    /// Whether `group` names this type's group, by kubebuilder's short name or in full.
    fn in_group(&self, group: &str) -> bool {
        self.group == group || (!self.api_group.is_empty() && self.api_group == group)
    }
}

/// Whether `group` names a built-in API group (by kubebuilder's short name or its full name).
pub fn is_builtin_group(group: &str) -> bool {
    BUILTINS.iter().any(|b| b.in_group(group))
}

/// The built-in type `group/version/kind`, if rbuilder knows it.
pub fn find(group: &str, version: &str, kind: &str) -> Option<Builtin> {
    BUILTINS
        .iter()
        .find(|b| b.in_group(group) && b.version == version && b.kind == kind)
        .copied()
}

/// The kinds rbuilder knows in a built-in group, for error messages.
pub fn kinds_in(group: &str) -> Vec<String> {
    BUILTINS
        .iter()
        .filter(|b| b.in_group(group))
        .map(|b| format!("{}/{}", b.version, b.kind))
        .collect()
}
