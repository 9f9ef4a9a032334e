//! What can go wrong with an owned object, as types a controller can match on.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

/// Why an [`Owned`](super::Owned) operation failed.
///
/// Wrap it in your reconciler's error as a source (`#[error("{0}")] Owned(#[from]
/// owned::Error)`, or `#[error(transparent)]`), so that the runtime finds a [`Stale`] or a
/// [`kube::Error`] in the error's chain.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An object of that name is someone else's: left as it is.
    #[error("{0}")]
    Taken(#[source] Box<Taken>),
    /// The object changed since it was read: the controller driver retries the reconcile with
    /// the object's backoff, and reports it once it recurs (see the driver's
    /// `STALE_EVENT_AFTER`).
    #[error("{0}")]
    Stale(#[from] Stale),
    /// The API server refused a request, or could not be reached.
    #[error("{0}")]
    Api(#[from] kube::Error),
    /// The owner or the desired object cannot make an owned object (e.g. an owner without a
    /// uid, a desired object named otherwise than the handle).
    #[error("{0}")]
    Invalid(String),
}

impl From<Taken> for Error {
    fn from(taken: Taken) -> Self {
        Self::Taken(Box::new(taken))
    }
}

/// An object of the owned object's name that its owner does not control and may not adopt:
/// one controlled by another object, or one that this operator did not make. It is left as it
/// is; the message says whose it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub struct Taken {
    /// The object's kind, e.g. `Deployment`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its namespace, when its owner is in none (a cluster-scoped owner's child in a namespace
    /// of its choice).
    pub namespace: Option<String>,
    /// The object's controller, if it has one.
    pub controller: Option<OwnerReference>,
    /// The kind of the owner that wanted it.
    pub owner_kind: String,
}

impl Taken {
    /// The reason that reports it, on the owner's Warning Event and its status conditions:
    /// the kind followed by `Taken`, e.g. `DeploymentTaken`, `ServiceTaken`.
    ///
    /// ```
    /// # use rbuilder_runtime::owned::Taken;
    /// # fn reason(taken: &Taken) -> String {
    /// taken.reason()
    /// # }
    /// ```
    pub fn reason(&self) -> String {
        format!("{}Taken", self.kind)
    }
}

/// The [`Taken`] in `error`'s chain of sources, if there is one.
pub fn taken<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Taken> {
    let mut source = Some(error);
    while let Some(error) = source {
        // As the variant of [`Error`] (whose source is the box, not the `Taken` in it), or
        // on its own.
        if let Some(Error::Taken(taken)) = error.downcast_ref::<Error>() {
            return Some(taken);
        }
        if let Some(taken) = error.downcast_ref::<Taken>() {
            return Some(taken);
        }
        source = error.source();
    }
    None
}

impl fmt::Display for Taken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { kind, name, .. } = self;
        write!(f, "{kind} ")?;
        if let Some(namespace) = &self.namespace {
            write!(f, "{namespace}/")?;
        }
        match &self.controller {
            Some(owner) => write!(f, "{name} is controlled by {} {}", owner.kind, owner.name)?,
            None => write!(f, "{name} exists and has no controller")?,
        }
        write!(f, ": rename the {} or delete that {kind}", self.owner_kind)
    }
}

/// The API server refused a write made to an object as it was read (a 409 on its
/// `resourceVersion` or `uid`): it changed since, or was replaced. The read was from a cache
/// that lags the cluster, or the object changed between the read and the write; the change
/// brings a reconcile of its own, and the controller driver retries with the object's backoff
/// as a safety net (its first retry after a second), counted as a failure; a Warning Event
/// follows once it recurs.
#[derive(Debug, thiserror::Error)]
#[error("{kind} {name} changed since it was read; retrying with what it became")]
pub struct Stale {
    pub(super) kind: String,
    pub(super) name: String,
    #[source]
    pub(super) error: kube::Error,
}

impl Stale {
    /// A refusal of the API server (`error`, a 409) of a write to the `kind` named `name`, for
    /// the driver's tests, which meet one on kube-apiserver without an owned object.
    #[cfg(test)]
    pub(crate) fn new(kind: &str, name: &str, error: kube::Error) -> Self {
        let (kind, name) = (kind.to_owned(), name.to_owned());
        Self { kind, name, error }
    }
}

/// Whether `error`, or an error in its chain of sources, is [`Stale`].
pub(crate) fn is_stale(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(error);
    while let Some(error) = source {
        if error.is::<Stale>() {
            return true;
        }
        source = error.source();
    }
    false
}
