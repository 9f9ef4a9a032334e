//! What the runtime needs to know about errors: how to print them, and which API errors may
//! only mean that an object, or its namespace, is being deleted.

use kube::Resource;

/// `error` and its sources, joined by ": ": kube's errors keep the useful part (e.g.
/// "Connection refused") in their sources.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // Some errors repeat their source in their own message.
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

/// The API server's answer in `error`, if it sent one.
pub(crate) fn api_status(error: &kube::Error) -> Option<&kube::core::Status> {
    match error {
        kube::Error::Api(status) => Some(status),
        _ => None,
    }
}

/// Whether the API server refused to add a finalizer because the object is being deleted
/// (422 Invalid: "no new finalizers can be added if the object is being deleted"): the cached
/// object did not show the deletion yet.
pub(crate) fn is_finalizer_refused_by_deletion(error: &kube::Error) -> bool {
    api_status(error)
        .is_some_and(|status| status.code == 422 && status.message.contains("being deleted"))
}

/// The namespace whose deletion made the API server refuse to create an object: a 403
/// Forbidden with the cause `NamespaceTerminating` ("namespace X is being terminated"; the
/// message: "unable to create new content in namespace X because it is being terminated", as
/// kube-apiserver's NamespaceLifecycle admission writes them). None for any other error, and
/// for one that does not name its namespace.
pub(crate) fn terminating_namespace(error: &kube::Error) -> Option<String> {
    let status = api_status(error).filter(|status| status.is_forbidden())?;
    let from_cause = status.details.as_ref().and_then(|details| {
        details
            .causes
            .iter()
            .filter(|cause| cause.reason == "NamespaceTerminating")
            .find_map(|cause| {
                cause
                    .message
                    .strip_prefix("namespace ")?
                    .strip_suffix(" is being terminated")
                    .map(str::to_owned)
            })
    });
    from_cause.or_else(|| {
        let (_, rest) = status.message.split_once("new content in namespace ")?;
        let (namespace, _) = rest.split_once(" because it is being terminated")?;
        Some(namespace.to_owned())
    })
}

/// Whether `error` is a 404 naming `obj`. It may say that `obj` is gone (e.g. its status
/// written just after it was deleted), but not always: the API server answers the same to a
/// write to a subresource that the kind does not serve (a status written to a CRD installed
/// before the status was added). Only a read of `obj` tells the two apart.
pub(crate) fn names_as_not_found<K: Resource<DynamicType = ()>>(
    error: &kube::Error,
    obj: &K,
) -> bool {
    api_status(error).is_some_and(|status| {
        let details = status.details.as_ref();
        status.is_not_found()
            && details.is_some_and(|d| {
                Some(&d.name) == obj.meta().name.as_ref() && d.kind == K::plural(&())
            })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The error for a `Status` the API server sent.
    fn api_error(status: Value) -> kube::Error {
        kube::Error::Api(Box::new(serde_json::from_value(status).expect("a Status")))
    }

    #[test]
    fn deletions_getting_ahead_are_recognized() {
        let finalizer = api_error(json!({
            "code": 422,
            "reason": "Invalid",
            "message": "Forbidden: no new finalizers can be added if the object is being deleted",
        }));
        // As kube-apiserver's NamespaceLifecycle admission writes it.
        let terminating = api_error(json!({
            "code": 403,
            "reason": "Forbidden",
            "message": "configmaps \"c\" is forbidden: unable to create new content in namespace e2e because it is being terminated",
            "details": {"name": "c", "kind": "configmaps", "causes": [{
                "reason": "NamespaceTerminating",
                "message": "namespace e2e is being terminated",
                "field": "metadata.namespace",
            }]},
        }));
        let message_only = api_error(json!({
            "code": 403,
            "reason": "Forbidden",
            "message": "unable to create new content in namespace team-a because it is being terminated",
        }));
        assert!(is_finalizer_refused_by_deletion(&finalizer));
        assert_eq!(terminating_namespace(&finalizer), None);
        assert_eq!(terminating_namespace(&terminating).as_deref(), Some("e2e"));
        assert_eq!(
            terminating_namespace(&message_only).as_deref(),
            Some("team-a")
        );
        assert!(!is_finalizer_refused_by_deletion(&terminating));
        let forbidden = api_error(json!({"code": 403, "reason": "Forbidden", "message": "no"}));
        let conflict = api_error(json!({"code": 409, "reason": "Conflict", "message": "changed"}));
        let not_found = api_error(json!({"code": 404, "reason": "NotFound", "message": "gone"}));
        for error in [forbidden, conflict, not_found] {
            assert!(!is_finalizer_refused_by_deletion(&error), "{error}");
            assert_eq!(terminating_namespace(&error), None, "{error}");
        }
    }

    #[test]
    fn only_a_404_naming_the_object_names_it_as_not_found() {
        let mut obj = k8s_openapi::api::core::v1::ConfigMap::default();
        obj.metadata.name = Some("x".into());
        let not_found = |name: &str, kind: &str| {
            api_error(json!({
                "code": 404,
                "reason": "NotFound",
                "message": "not found",
                "details": {"name": name, "kind": kind},
            }))
        };
        assert!(names_as_not_found(&not_found("x", "configmaps"), &obj));
        assert!(!names_as_not_found(&not_found("y", "configmaps"), &obj));
        // e.g. a CRD that is not installed.
        assert!(!names_as_not_found(&not_found("x", "widgets"), &obj));
    }
}
