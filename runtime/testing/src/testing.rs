//! Test support for unit tests: a mocked API server, to check the requests a reconciler sends
//! without a cluster.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! use rbuilder_runtime::testing::{Method, mock_context, within_timeout};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (ctx, mut server) = mock_context();
//! // What the code under test does (a reconciler's `apply`, say), in a task of its own...
//! let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), "default");
//! let read = tokio::spawn(async move { api.get_opt("settings").await });
//! // ...while the test answers each request as the API server would.
//! let missing = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
//!     "reason": "NotFound", "code": 404, "message": "not found"});
//! server
//!     .expect(Method::GET, "/api/v1/namespaces/default/configmaps/settings", 404, missing)
//!     .await;
//! let read = within_timeout(read).await.expect("the task");
//! assert!(read.expect("a 404 is no error").is_none());
//! # }
//! ```

use std::future::Future;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use http::{Request, Response};
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

pub use http::Method;

use rbuilder_runtime_core::Context;
use rbuilder_runtime_core::harness;

/// The API server side of [`mock_client`]: answers requests one at a time, as the test scripts.
pub struct ApiServer(mpsc::UnboundedReceiver<Exchange>);

/// A request of the mocked client, with the way its answer goes back.
type Exchange = (Request<Body>, oneshot::Sender<Response<Body>>);

/// A client whose requests go to the returned [`ApiServer`] (default namespace `default`).
pub fn mock_client() -> (Client, ApiServer) {
    let (service, server) = mock_service();
    (Client::new(service, "default"), server)
}

/// The service under a mocked client, whose requests go to the returned [`ApiServer`]: to
/// build a client with layers of its own (`kube::Client::new(layered, "default")`).
pub fn mock_service() -> (MockService, ApiServer) {
    let (requests, received) = mpsc::unbounded_channel();
    (MockService(requests), ApiServer(received))
}

/// The service of [`mock_service`]: hands each request to its [`ApiServer`] and waits for the
/// answer. (Written here rather than taken from tower-test, whose tokio-test turns on tokio's
/// `test-util` in every build of the tests: tokio and every crate above it, the runtime
/// included, would be compiled again for the tests instead of shared with the manager's build.)
#[derive(Clone)]
pub struct MockService(mpsc::UnboundedSender<Exchange>);

/// What a mocked client's request fails with: its [`ApiServer`] is gone, or dropped it
/// unanswered ([`ApiServer::hold`]).
#[derive(Debug, thiserror::Error)]
#[error("the mocked API server closed the connection")]
pub struct Closed;

impl tower::Service<Request<Body>> for MockService {
    type Response = Response<Body>;
    type Error = Closed;
    type Future = BoxFuture<'static, Result<Response<Body>, Closed>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), Closed>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let (answer, answered) = oneshot::channel();
        let sent = self.0.send((request, answer));
        Box::pin(async move {
            sent.map_err(|_| Closed)?;
            answered.await.map_err(|_| Closed)
        })
    }
}

/// A [`Context`] for an operator named `test`, whose client talks to the returned
/// [`ApiServer`], watching all namespaces.
pub fn mock_context() -> (Arc<Context>, ApiServer) {
    let (client, server) = mock_client();
    let ctx = Context::new(
        client,
        "test-operator".to_owned(),
        rbuilder_runtime_core::namespaces::Namespaces::all(),
    );
    (Arc::new(ctx), server)
}

impl ApiServer {
    /// The next request, with the way to answer it; `None` once no client is left.
    async fn next_request(&mut self) -> Option<Exchange> {
        self.0.recv().await
    }

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
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::Api;
    /// use kube::api::PostParams;
    /// use rbuilder_runtime::testing::{Method, mock_client, within_timeout};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (client, mut server) = mock_client();
    /// let api: Api<ConfigMap> = Api::default_namespaced(client);
    /// let mut settings = ConfigMap::default();
    /// settings.metadata.name = Some("settings".to_owned());
    /// let create = tokio::spawn(async move { api.create(&PostParams::default(), &settings).await });
    /// let sent = server.echo(Method::POST, "/api/v1/namespaces/default/configmaps").await;
    /// assert_eq!(sent["metadata"]["name"], "settings");
    /// within_timeout(create).await.expect("the task").expect("created");
    /// # }
    /// ```
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
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::Api;
    /// use rbuilder_runtime::testing::{Method, mock_client, status_error, within_timeout};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let (client, mut server) = mock_client();
    /// let api: Api<ConfigMap> = Api::default_namespaced(client);
    /// let read = tokio::spawn(async move { api.get("settings").await });
    /// // Any request: here the API server is overloaded.
    /// let (method, _) = server.answer(|_, _, _| (503, status_error(503, "ServiceUnavailable"))).await;
    /// assert_eq!(method, Method::GET);
    /// let read = within_timeout(read).await.expect("the task");
    /// assert!(matches!(read, Err(kube::Error::Api(status)) if status.code == 503));
    /// # }
    /// ```
    pub async fn answer(
        &mut self,
        respond: impl FnOnce(&Method, &str, &Value) -> (u16, Value),
    ) -> (Method, Value) {
        let answered = self.try_answer(Duration::from_secs(5), respond).await;
        answered.expect("timed out waiting for a request")
    }

    /// Waits for the next request and never answers it, as an API server that accepted it
    /// and then hung (or died without closing the connection): its client waits for as long
    /// as the returned [`Held`] lives. Returns its method and path (without the query).
    pub async fn hold(&mut self) -> (Method, String, Held) {
        let next = tokio::time::timeout(Duration::from_secs(5), self.next_request()).await;
        let (request, send) = next
            .ok()
            .flatten()
            .expect("timed out waiting for a request");
        let (method, path) = (request.method().clone(), request.uri().path().to_owned());
        (method, path, Held { _response: send })
    }

    /// [`answer`](Self::answer), or `None` if no request comes `within` that long.
    pub async fn try_answer(
        &mut self,
        within: Duration,
        respond: impl FnOnce(&Method, &str, &Value) -> (u16, Value),
    ) -> Option<(Method, Value)> {
        let (request, send) = tokio::time::timeout(within, self.next_request())
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
        // The client may have given up waiting (a timeout): nothing to answer then.
        let _ = send.send(response);
        Some((method, body))
    }
}

/// A request [`ApiServer::hold`] never answers; dropping it fails the request.
pub struct Held {
    _response: oneshot::Sender<Response<Body>>,
}

/// What [`https_get`] got.
#[derive(Debug)]
pub struct HttpsAnswer {
    pub status: u16,
    pub body: String,
    /// The certificate the server presented.
    pub server_cert: rustls::pki_types::CertificateDer<'static>,
}

/// `GET https://localhost<path>` at `address`, trusting only `root`, with `token` as a bearer
/// token if given. HTTP/1.0 on the TLS stream, so that tests need no HTTP client crate.
pub async fn https_get(
    address: std::net::SocketAddr,
    path: &str,
    root: &rustls::pki_types::CertificateDer<'_>,
    token: Option<&str>,
) -> Result<HttpsAnswer, String> {
    let authorization = token
        .map(|token| format!("Authorization: Bearer {token}\r\n"))
        .unwrap_or_default();
    https_request(
        address,
        root,
        &format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n{authorization}\r\n"),
    )
    .await
}

/// `POST https://localhost<path>` of the JSON `body` at `address`, trusting only `root`, as the
/// API server calls a webhook.
pub async fn https_post(
    address: std::net::SocketAddr,
    path: &str,
    root: &rustls::pki_types::CertificateDer<'_>,
    body: &str,
) -> Result<HttpsAnswer, String> {
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    https_request(address, root, &request).await
}

/// Sends `request` over TLS to `address`, trusting only `root`, and reads the answer.
async fn https_request(
    address: std::net::SocketAddr,
    root: &rustls::pki_types::CertificateDer<'_>,
    request: &str,
) -> Result<HttpsAnswer, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(root.clone().into_owned())
        .map_err(|e| e.to_string())?;
    let config = rustls::ClientConfig::builder_with_provider(harness::provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|e| e.to_string())?;
    let name = rustls::pki_types::ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS handshake: {e}"))?;
    let server_cert = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|certs| certs.first())
        .map(|cert| cert.clone().into_owned())
        .ok_or("no server certificate")?;
    tls.write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    // The server closes an HTTP/1.0 connection after its answer; some close it without a TLS
    // close_notify, which is no error here.
    let _ = tls.read_to_end(&mut response).await;
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("no HTTP status in {head:?}"))?;
    Ok(HttpsAnswer {
        status,
        body: body.to_owned(),
        server_cert,
    })
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

/// An AdmissionReview as the API server sends it to a webhook of `K`: `operation` is
/// `CREATE`, `UPDATE` or `DELETE`; `object` is absent for a deletion, `old_object` present for
/// an update or a deletion.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap as Site;
/// use rbuilder_runtime::testing::{admission_review, patched};
/// use rbuilder_runtime::webhook::{self, Defaulter, Denied, Webhook};
///
/// struct SiteWebhook;
/// const DEFAULTING: Webhook = webhook::defaulting::<SiteWebhook>();
///
/// impl Defaulter for SiteWebhook {
///     type Resource = Site;
///
///     fn default(site: &mut Site) -> Result<(), Denied> {
///         let data = site.data.get_or_insert_with(Default::default);
///         data.entry("port".into()).or_insert_with(|| "8080".into());
///         Ok(())
///     }
/// }
///
/// // A new object, its name still to be generated (`generateName`).
/// let site = Site::default();
/// // The AdmissionReview the API server would send, answered as the manager answers it.
/// let answer = DEFAULTING.answer(&admission_review("CREATE", Some(&site), None));
/// assert_eq!(answer["response"]["allowed"], true);
/// let defaulted = patched(&site, &answer);
/// assert_eq!(defaulted.data.expect("data")["port"], "8080");
/// ```
pub fn admission_review<K>(operation: &str, object: Option<&K>, old_object: Option<&K>) -> Vec<u8>
where
    K: kube::Resource<DynamicType = ()> + serde::Serialize,
{
    let gvk = json!({"group": K::group(&()), "version": K::version(&()), "kind": K::kind(&())});
    let gvr =
        json!({"group": K::group(&()), "version": K::version(&()), "resource": K::plural(&())});
    let meta = object
        .or(old_object)
        .map(|o| o.meta().clone())
        .unwrap_or_default();
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "test-request",
            "kind": gvk,
            "resource": gvr,
            // The API server leaves it out when the object has none yet (`generateName`).
            "name": meta.name.unwrap_or_default(),
            "namespace": meta.namespace,
            "operation": operation,
            "userInfo": {"username": "test"},
            "object": object,
            "oldObject": old_object,
            "dryRun": false,
        }
    })
    .to_string()
    .into_bytes()
}

/// `object` with the JSON patch of a defaulting webhook's `answer` applied, as the API server
/// applies it; `object` unchanged if the answer has no patch. Panics if the answer denies.
pub fn patched<K>(object: &K, answer: &Value) -> K
where
    K: serde::Serialize + serde::de::DeserializeOwned,
{
    use base64::prelude::{BASE64_STANDARD, Engine as _};

    assert_eq!(answer["response"]["allowed"], true, "denied: {answer}");
    let mut value = serde_json::to_value(object).expect("serializable");
    if let Some(patch) = answer["response"]["patch"].as_str() {
        let patch = BASE64_STANDARD.decode(patch).expect("a base64 patch");
        let patch: json_patch::Patch = serde_json::from_slice(&patch).expect("a JSON patch");
        json_patch::patch(&mut value, &patch).expect("the patch applies");
    }
    serde_json::from_value(value).expect("the patched object is still a valid object")
}
