//! The machinery of the kinds that controllers most often own (a Deployment, a Service, a
//! ConfigMap), compiled here, once, rather than in the project's crate at each edit.
//!
//! The owned-object code is generic over the kind: applying, reading and deleting a
//! Deployment, and the watch of its cache, are compiled for `Deployment` where they are first
//! used with it. Used only by a project's controller, that is the project's crate, which every
//! edit of the controller recompiles; and nearly all of it is Deployment's deserializers
//! (k8s-openapi's are generic over the JSON reader, so each reader gets its own copy of each of
//! the hundred-odd types a Deployment holds). The DemoMicroService example's crate had 822,000
//! lines of LLVM IR to generate when it compiled them, 151,000 since (`cargo llvm-lines
//! --lib`). In builds not optimized for speed (the dev profile, and the release profile's
//! `opt-level = "s"`), Rust reuses a dependency's instances of generic code rather than
//! compiling its own: so these are instantiated here, by [`instances`], which nothing calls. A
//! project that owns other kinds compiles their machinery itself, as before.

use futures::StreamExt;
use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::runtime::watcher;

use super::{Ownable, Owned};
use crate::context::Context;

/// The owned-object machinery of the kinds above, instantiated. Public, and so compiled into
/// the runtime's library where a project's crate finds it, but not meant to be called: its
/// futures do nothing useful.
pub fn instances<'a>(
    deployment: (&'a Owned<'a, Deployment>, Deployment),
    service: (&'a Owned<'a, Service>, Service),
    config_map: (&'a Owned<'a, ConfigMap>, ConfigMap),
    ctx: &'a Context,
) -> Vec<BoxFuture<'a, ()>> {
    let mut all = of(deployment.0, deployment.1, ctx);
    all.extend(of(service.0, service.1, ctx));
    all.extend(of(config_map.0, config_map.1, ctx));
    all
}

/// What a controller uses of an owned kind `K`: [`Owned::get`], [`Owned::apply`],
/// [`Owned::delete`] and the watch of its cache ([`Owns::kind`](super::Owns::kind)).
fn of<'a, K: Ownable>(
    owned: &'a Owned<'a, K>,
    desired: K,
    ctx: &'a Context,
) -> Vec<BoxFuture<'a, ()>> {
    let cache = super::watch::owned_cache::<K>(ctx, watcher::Config::default());
    vec![
        Box::pin(async move {
            let _ = owned.get().await;
        }),
        Box::pin(async move {
            let _ = owned.apply(desired).await;
        }),
        Box::pin(async move {
            let _ = owned.delete().await;
        }),
        Box::pin(cache.for_each(|_| async {})),
    ]
}
