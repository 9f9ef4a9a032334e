// Copyright 2026 The helm-chart Authors.
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

//! Integration tests: each kind's controller and webhooks against a real kube-apiserver and
//! etcd, one module per kind and per kind's webhooks. The tests share one control plane
//! (`rbuilder_testing::envtest`, `Environment::shared`), as a kubebuilder suite's share its
//! envtest: the first test starts it, with the project's CRDs installed from the code and its
//! webhooks served from the test process and called by the API server; each test works in a
//! namespace of its own, where its controllers run with only the role `make manifests`
//! writes. The tests of a kind of the cluster start a control plane each
//! (`Environment::start`, about 3 s): no namespace keeps their objects apart. As with
//! kubebuilder's envtest there is no kube-controller-manager, scheduler or kubelet: no garbage
//! collection, and no Pod runs.
//!
//! They run with the kube-apiserver and etcd that `make setup-envtest` downloads into
//! `bin/k8s/` (`make test` runs it first): a plain `cargo test`, or an editor's "run test",
//! finds them there too. `KUBEBUILDER_ASSETS` names binaries of your own instead; where there
//! are none, each test fails saying how to get them.

// One module per kind, and per kind's webhooks, in tests/integration/<name>.rs.
mod demo_micro_service;
mod demo_micro_service_v1_webhooks;
mod guestbook;
// +rbuilder:scaffold:integration-tests
