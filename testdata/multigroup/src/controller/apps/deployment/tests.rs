// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! Unit tests of the Deployment controller, against a mocked API server.

use kube::Resource;
use rbuilder_testing::testing::{mock_context, within_timeout};

use super::*;

/// The reconciler under test.
type Tested = DeploymentReconciler;

#[tokio::test]
async fn apply_requeues_for_the_periodic_resync() {
    let mut obj = v1::Deployment::default();
    obj.meta_mut().name = Some("test".into());
    let (ctx, _server) = mock_context();
    let action = within_timeout(Tested::apply(Arc::new(obj), ctx))
        .await
        .expect("apply");
    assert_eq!(action, Action::requeue(Duration::from_secs(60 * 60)));
}
