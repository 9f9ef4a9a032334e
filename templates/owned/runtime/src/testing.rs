//! Test support for unit tests: a mocked API server, to check the requests a reconciler sends
//! without a cluster.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::{Request, Response};
use kube::Client;
use kube::client::Body;
use serde_json::Value;
use tower_test::mock::{self, Handle};

pub use http::Method;

use crate::Context;

/// The API server side of [`mock_client`]: answers requests one at a time, as the test scripts.
pub struct ApiServer(Handle<Request<Body>, Response<Body>>);

/// A client whose requests go to the returned [`ApiServer`] (default namespace `default`).
pub fn mock_client() -> (Client, ApiServer) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    (Client::new(service, "default"), ApiServer(handle))
}

/// A [`Context`] for an operator named `test`, whose client talks to the returned
/// [`ApiServer`], watching all namespaces.
pub fn mock_context() -> (Arc<Context>, ApiServer) {
    let (client, server) = mock_client();
    let ctx = Context::new(client, "test-operator".to_owned(), None);
    (Arc::new(ctx), server)
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
        let (_, body) = self
            .answer(|seen_method, seen_path, body| {
                assert_eq!(
                    (seen_method, seen_path),
                    (&method, path),
                    "unexpected request"
                );
                respond(body)
            })
            .await;
        body
    }

    /// Waits for the next request and answers it with what `respond` returns for its method,
    /// path (without the query) and JSON body (`Null` if empty); returns the method and the body.
    pub async fn answer(
        &mut self,
        respond: impl FnOnce(&Method, &str, &Value) -> (u16, Value),
    ) -> (Method, Value) {
        let answered = self.try_answer(Duration::from_secs(5), respond).await;
        answered.expect("timed out waiting for a request")
    }

    /// [`answer`](Self::answer), or `None` if no request comes `within` that long.
    pub async fn try_answer(
        &mut self,
        within: Duration,
        respond: impl FnOnce(&Method, &str, &Value) -> (u16, Value),
    ) -> Option<(Method, Value)> {
        let (request, send) = tokio::time::timeout(within, self.0.next_request())
            .await
            .ok()
            .flatten()?;
        let (method, path) = (request.method().clone(), request.uri().path().to_owned());
        let body = request.into_body().collect_bytes().await.expect("body");
        let body = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&body).expect("a JSON request body")
        };
        let (status, response) = respond(&method, &path, &body);
        let response = Response::builder()
            .status(status)
            .body(Body::from(serde_json::to_vec(&response).expect("JSON")))
            .expect("response");
        send.send_response(response);
        Some((method, body))
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
