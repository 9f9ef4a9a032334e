//! What the runtime's test support (the crate rbuilder-testing: envtest, the mocked API server)
//! reaches inside it, to run controllers and webhooks as the manager does. Hidden: not for
//! projects, whose tests use that crate's API. One place, so that what the runtime lends its
//! test support is in sight.

use std::sync::Arc;

use futures::future::BoxFuture;
use kube::Client;
use tokio_util::sync::CancellationToken;

pub use crate::admission::SERVICE;
use crate::context::Context;
use crate::controller::Registration;
use crate::manager;
pub use crate::metrics::Metrics;
use crate::namespaces::Namespaces;
use crate::rate_limit::ClientRateLimitLayer;
pub use crate::serve::serve;
pub use crate::shared_watches::SharedWatches;
pub use crate::state::States;
pub use crate::tls::{CertReloader, TlsListener, provider, server_config};

/// The controllers' client as the manager makes it from `config`: its default rate limit, its
/// requests counted in `metrics`.
pub fn controllers_client(config: kube::Config, metrics: &Metrics) -> anyhow::Result<Client> {
    let limit = ClientRateLimitLayer::new(manager::KUBE_API_QPS, manager::KUBE_API_BURST);
    manager::controllers_client(config, metrics, limit)
}

/// The context the manager gives its controllers: `client`, the operator's `field_manager`,
/// the `namespaces` it watches, with `metrics` and the `watches` the controllers share.
pub fn controllers_context(
    client: Client,
    field_manager: String,
    namespaces: Namespaces,
    metrics: &Metrics,
    watches: Arc<SharedWatches>,
) -> Context {
    Context::new(client, field_manager, namespaces)
        .with_metrics(metrics.clone())
        .with_watches(watches)
}

/// `controller` run with `ctx` and the states of `states` until `shutdown`, as the manager
/// runs it; an error, saying why, if `states` lacks the controller's.
pub fn run_controller(
    controller: &Registration,
    ctx: Arc<Context>,
    states: &States,
    shutdown: CancellationToken,
) -> Result<BoxFuture<'static, Result<(), kube::Error>>, String> {
    (controller.run)(ctx, states, shutdown).map_err(|missing| missing.to_string())
}
