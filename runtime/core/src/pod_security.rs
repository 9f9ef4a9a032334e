//! The "restricted" Pod Security Standard for the Pods a controller makes, as security
//! contexts to put in a pod template: what a namespace labelled
//! `pod-security.kubernetes.io/enforce: restricted` admits, and what the manager's own Pod
//! has (config/manager/manager.yaml).
//!
//! ```
//! use k8s_openapi::api::core::v1::{Container, PodSpec};
//! use rbuilder_runtime::pod_security;
//!
//! let user = Some(1001);
//! let pod = PodSpec {
//!     security_context: Some(pod_security::restricted_pod(user)),
//!     containers: vec![Container {
//!         name: "app".to_owned(),
//!         security_context: Some(pod_security::restricted_container(user)),
//!         ..Default::default()
//!     }],
//!     ..Default::default()
//! };
//! ```

use k8s_openapi::api::core::v1::{
    Capabilities, PodSecurityContext, SeccompProfile, SecurityContext,
};

/// The pod's part, for all its containers: not root, the runtime's default seccomp profile.
/// `user` is the user id the containers run as: Kubernetes checks `runAsNonRoot` against a
/// number only, not an image's user name; `None` keeps the image's own (non-root) user.
pub fn restricted_pod(user: Option<i64>) -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: Some(true),
        run_as_user: user,
        seccomp_profile: runtime_default(),
        ..Default::default()
    }
}

/// Each container's part: the pod's (so that a container that the pod's settings do not
/// reach, as a tool may check one by one, still passes), no privilege escalation, no
/// capability. Not `readOnlyRootFilesystem`: the standard does not ask for it, and many images
/// write to /tmp or a cache folder.
pub fn restricted_container(user: Option<i64>) -> SecurityContext {
    SecurityContext {
        run_as_non_root: Some(true),
        run_as_user: user,
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_owned()]),
            ..Default::default()
        }),
        seccomp_profile: runtime_default(),
        ..Default::default()
    }
}

/// The container runtime's default seccomp profile.
fn runtime_default() -> Option<SeccompProfile> {
    Some(SeccompProfile {
        type_: "RuntimeDefault".to_owned(),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What the restricted standard checks, as the API server reads it.
    #[test]
    fn the_contexts_are_what_the_restricted_standard_asks() {
        assert_eq!(
            json!(restricted_pod(Some(1001))),
            json!({"runAsNonRoot": true, "runAsUser": 1001,
                   "seccompProfile": {"type": "RuntimeDefault"}})
        );
        assert_eq!(json!(restricted_pod(None)).get("runAsUser"), None);
        assert_eq!(
            json!(restricted_container(None)),
            json!({"runAsNonRoot": true, "allowPrivilegeEscalation": false,
                   "capabilities": {"drop": ["ALL"]},
                   "seccompProfile": {"type": "RuntimeDefault"}})
        );
    }
}
