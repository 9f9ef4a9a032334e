// Copyright 2026 The external Authors.
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

//! Unit tests of the Application controller, against a mocked API server.

use kube::Resource;
use rbuilder_testing::testing::{mock_context, within_timeout};

use super::*;

/// The reconciler under test.
type Tested = ApplicationReconciler;

#[tokio::test]
async fn apply_requeues_for_the_periodic_resync() {
    let mut obj = v1alpha1::Application::default();
    obj.meta_mut().name = Some("test".into());
    let (ctx, _server) = mock_context();
    let action = within_timeout(Tested::apply(Arc::new(obj), ctx))
        .await
        .expect("apply");
    assert_eq!(action, Action::requeue(Duration::from_secs(60 * 60)));
}
