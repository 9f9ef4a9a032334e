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

/// Whether the API server refused to create an object because its namespace is being deleted
/// (403 Forbidden with the cause `NamespaceTerminating`: "unable to create new content in
/// namespace ... because it is being terminated").
pub(crate) fn is_namespace_terminating(error: &kube::Error) -> bool {
    let Some(status) = api_status(error) else {
        return false;
    };
    let terminating = status.details.as_ref().is_some_and(|details| {
        details
            .causes
            .iter()
            .any(|cause| cause.reason == "NamespaceTerminating")
    }) || status.message.contains("because it is being terminated");
    status.is_forbidden() && terminating
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
        let terminating = api_error(json!({
            "code": 403,
            "reason": "Forbidden",
            "message": "unable to create new content in namespace e2e",
            "details": {"causes": [{"reason": "NamespaceTerminating"}]},
        }));
        assert!(is_finalizer_refused_by_deletion(&finalizer));
        assert!(!is_namespace_terminating(&finalizer));
        assert!(is_namespace_terminating(&terminating));
        assert!(!is_finalizer_refused_by_deletion(&terminating));
        let forbidden = api_error(json!({"code": 403, "reason": "Forbidden", "message": "no"}));
        let conflict = api_error(json!({"code": 409, "reason": "Conflict", "message": "changed"}));
        let not_found = api_error(json!({"code": 404, "reason": "NotFound", "message": "gone"}));
        for error in [forbidden, conflict, not_found] {
            assert!(!is_finalizer_refused_by_deletion(&error), "{error}");
            assert!(!is_namespace_terminating(&error), "{error}");
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
