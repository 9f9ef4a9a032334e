// Copyright 2026 The multiversion Authors.
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

//! Unit tests of the Guestbook controller, against a mocked API server: each test
//! scripts the requests the controller must send and the API server's answers.

use rbuilder_testing::testing::{ApiServer, Method, mock_context, status_error, within_timeout};
use serde_json::json;

use super::*;

/// The reconciler under test.
type Tested = GuestbookReconciler;

const PATH: &str = "/apis/devops.my.domain/v1alpha1/namespaces/default/guestbooks/test";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";

fn test_object() -> v1alpha1::Guestbook {
    let spec = v1alpha1::GuestbookSpec::default();
    let mut obj = v1alpha1::Guestbook::new("test", spec);
    obj.metadata.namespace = Some("default".into());
    obj.metadata.uid = Some("1234".into());
    obj.metadata.generation = Some(2);
    obj
}

/// Runs `apply` on `obj` against `script`, which plays the API server.
async fn apply_with<F>(
    obj: v1alpha1::Guestbook,
    script: impl FnOnce(ApiServer) -> F,
) -> Result<Action, Error>
where
    F: Future<Output = ()> + Send + 'static,
{
    let (ctx, server) = mock_context();
    let server = tokio::spawn(script(server));
    let result = within_timeout(Tested::apply(Arc::new(obj), ctx)).await;
    server.await.expect("API server script");
    result
}

#[tokio::test]
async fn apply_reports_ready_for_the_current_generation() {
    let stored = json!(test_object());
    let action = apply_with(test_object(), |mut server| async move {
        let apply = server
            .expect(Method::PATCH, &format!("{PATH}/status"), 200, stored)
            .await;
        let status = &apply["status"];
        assert_eq!(status["observedGeneration"], 2);
        assert_eq!(status["conditions"][0]["type"], "Ready");
        assert_eq!(status["conditions"][0]["status"], "True");
        assert_eq!(status["conditions"][0]["observedGeneration"], 2);
        let event = server.echo(Method::POST, EVENTS).await;
        assert_eq!(event["reason"], "Ready");
    })
    .await
    .expect("apply");
    assert_eq!(action, Action::requeue(Duration::from_secs(60 * 60)));
}

#[tokio::test]
async fn an_api_error_fails_apply() {
    let result = apply_with(test_object(), |mut server| async move {
        let error = status_error(500, "InternalError");
        server
            .expect(Method::PATCH, &format!("{PATH}/status"), 500, error)
            .await;
    })
    .await;
    let error = result.expect_err("apply must fail");
    assert!(
        error.to_string().contains("mocked InternalError"),
        "{error}"
    );
}
