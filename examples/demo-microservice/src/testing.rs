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

//! Test support: a mocked API server, to check the requests a reconciler sends without a cluster.

use std::future::Future;
use std::time::Duration;

use http::{Method, Request, Response};
use kube::Client;
use kube::client::Body;
use serde_json::Value;
use tower_test::mock::{self, Handle};

/// The API server side of [`mock_client`]: answers requests one at a time, as the test scripts.
pub struct ApiServer(Handle<Request<Body>, Response<Body>>);

/// A client whose requests go to the returned [`ApiServer`] (default namespace `default`).
pub fn mock_client() -> (Client, ApiServer) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    (Client::new(service, "default"), ApiServer(handle))
}

impl ApiServer {
    /// Waits for the next request, asserts its method and path (without the query), answers
    /// with `status` and the JSON `response`, and returns the request's JSON body (`Null` if
    /// empty).
    pub async fn expect(
        &mut self,
        method: Method,
        path: &str,
        status: u16,
        response: Value,
    ) -> Value {
        self.handle(method, path, |_| (status, response)).await
    }

    /// Like [`expect`](Self::expect), answering `200 OK` with the request body itself, as the
    /// API server does for a create or a server-side apply of a new object.
    pub async fn echo(&mut self, method: Method, path: &str) -> Value {
        self.handle(method, path, |body| (200, body.clone())).await
    }

    async fn handle(
        &mut self,
        method: Method,
        path: &str,
        respond: impl FnOnce(&Value) -> (u16, Value),
    ) -> Value {
        let (request, send) = within_timeout(self.0.next_request())
            .await
            .expect("the client is gone: no request was sent");
        assert_eq!(
            (request.method(), request.uri().path()),
            (&method, path),
            "unexpected request"
        );
        let body = request.into_body().collect_bytes().await.expect("body");
        let body = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body).expect("a JSON request body")
        };
        let (status, response) = respond(&body);
        let response = Response::builder()
            .status(status)
            .body(Body::from(serde_json::to_vec(&response).expect("JSON")))
            .expect("response");
        send.send_response(response);
        body
    }
}

/// A `Status` body, as the API server sends with errors.
pub fn status_error(code: u16, reason: &str) -> Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Status",
        "status": "Failure",
        "message": format!("mocked {reason}"),
        "reason": reason,
        "code": code,
    })
}

/// Awaits `future`, failing the test if it takes more than a few seconds (e.g. a reconciler
/// waiting for a response that the test does not script).
pub async fn within_timeout<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), future)
        .await
        .expect("timed out")
}
