// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! Unit tests of the `devops-dms-backup` controller, against a mocked API server.

use rbuilder_testing::envtest::from_yaml;
use rbuilder_testing::testing::{mock_context, within_timeout};

use super::*;

/// The reconciler under test.
type Tested = DmsBackupReconciler;
/// The kind's own controller.
type Own = crate::controller::devops::demo_micro_service::DemoMicroServiceReconciler;

/// The sample of `config/samples`.
const SAMPLE: &str = include_str!("../../../../config/samples/devops_v1_demomicroservice.yaml");

#[tokio::test]
async fn apply_requeues_for_the_periodic_resync() {
    let obj: v1::DemoMicroService = from_yaml(SAMPLE);
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
