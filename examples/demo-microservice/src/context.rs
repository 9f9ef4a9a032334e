// Copyright 2026 The demo-microservice Authors.
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

//! The state shared by every controller.

use kube::core::NamespaceResourceScope;
use kube::runtime::events::Recorder;
use kube::{Api, Client, Resource};

use crate::OPERATOR_NAME;
use crate::metrics::Metrics;

/// What each reconciler gets besides the object: built once by the manager, shared (in an
/// `Arc`) by all controllers.
#[derive(Clone)]
pub struct Context {
    /// Client for the Kubernetes API.
    pub client: Client,
    /// Publishes Events (`events.k8s.io/v1`) about the objects being reconciled.
    pub recorder: Recorder,
    /// Reconcile counters and durations, served on `/metrics`.
    pub metrics: Metrics,
    /// The namespace from `WATCH_NAMESPACE`: when set, controllers watch only that namespace
    /// (a project made with `rbuilder init --namespaced` sets it, and binds a namespaced Role
    /// instead of a ClusterRole); `None` means all namespaces.
    pub watch_namespace: Option<String>,
}

impl Context {
    pub fn new(client: Client, metrics: Metrics, watch_namespace: Option<String>) -> Self {
        // The reporting instance is the host name, i.e. the pod name in a cluster.
        let recorder = Recorder::new(client.clone(), OPERATOR_NAME.into());
        Self {
            client,
            recorder,
            metrics,
            watch_namespace,
        }
    }

    /// An [`Api`] over the watched namespace, or over all namespaces.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        match &self.watch_namespace {
            Some(namespace) => Api::namespaced(self.client.clone(), namespace),
            None => Api::all(self.client.clone()),
        }
    }
}
