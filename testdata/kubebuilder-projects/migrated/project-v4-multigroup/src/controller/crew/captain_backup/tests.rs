// Copyright 2026 The Kubernetes authors.
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

//! Unit tests of the `crew-captain-backup` controller, against a mocked API server.

use rbuilder_testing::envtest::from_yaml;
use rbuilder_testing::testing::{mock_context, within_timeout};

use super::*;

/// The reconciler under test.
type Tested = CaptainBackupReconciler;
/// The kind's own controller.
type Own = crate::controller::crew::captain::CaptainReconciler;

/// The sample of `config/samples`.
const SAMPLE: &str = include_str!("../../../../config/samples/crew_v1_captain.yaml");

#[tokio::test]
async fn apply_requeues_for_the_periodic_resync() {
    let obj: v1::Captain = from_yaml(SAMPLE);
    let (ctx, _server) = mock_context();
    let action = within_timeout(Tested::apply(Arc::new(obj), ctx))
        .await
        .expect("apply");
    assert_eq!(action, Action::requeue(Duration::from_secs(60 * 60)));
}

/// Each controller of the kind holds its own finalizer, and is told apart by its own name in
/// logs and metrics.
#[test]
fn its_name_and_finalizer_are_its_own() {
    assert_ne!(Tested::NAME, Own::NAME);
    assert_ne!(Tested::FINALIZER, Own::FINALIZER);
}
