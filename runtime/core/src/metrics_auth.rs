//! Who may read `/metrics`: controller-runtime's `WithAuthenticationAndAuthorization`. The
//! request's bearer token is checked with a TokenReview, then its user with a
//! SubjectAccessReview for the request's verb (the method in lower case) on the non-resource
//! URL (the path): `get /metrics`, which `config/rbac/metrics_reader_role.yaml` grants.
//!
//! Answers: no token, or one the API server does not authenticate, 401; a user not allowed,
//! 403; the API server failing, 500. Never an open door.
//!
//! Decisions are cached as controller-runtime's delegating authenticator and authorizer cache
//! them: a token review 1 minute, an allowed user 5 minutes, a denied one 30 seconds; failures
//! not at all. A Prometheus scraping every few seconds costs the API server two reviews a
//! minute at most. Tokens are kept as their SHA-256 only.
//!
//! The manager needs `create` on `tokenreviews` and `subjectaccessreviews`
//! (`config/rbac/metrics_auth_role.yaml`).

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Client;
use kube::api::{Api, PostParams};
use tracing::error;

/// How long a token review is trusted, authenticated or not.
pub const AUTHENTICATED_FOR: Duration = Duration::from_secs(60);
/// How long an allowed user stays allowed.
pub const ALLOWED_FOR: Duration = Duration::from_secs(5 * 60);
/// How long a denied user stays denied.
pub const DENIED_FOR: Duration = Duration::from_secs(30);
/// How long a review may take (controller-runtime's TokenAccessReviewTimeout).
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);
/// Past this many entries, expired ones go, then all: a flood of tokens cannot grow memory.
const MAX_ENTRIES: usize = 4096;

/// The state of the middleware; clones share the caches.
#[derive(Clone)]
pub struct MetricsAuth {
    client: Client,
    authenticated: Arc<Mutex<TtlCache<[u8; 32], Option<User>>>>,
    authorized: Arc<Mutex<TtlCache<Access, bool>>>,
}

/// What a SubjectAccessReview decides on: a user, a verb and a path.
type Access = (User, String, String);

/// A user, as a TokenReview names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct User {
    name: String,
    uid: Option<String>,
    groups: Vec<String>,
    extra: BTreeMap<String, Vec<String>>,
}

impl From<UserInfo> for User {
    fn from(info: UserInfo) -> Self {
        Self {
            name: info.username.unwrap_or_default(),
            uid: info.uid,
            groups: info.groups.unwrap_or_default(),
            extra: info.extra.unwrap_or_default(),
        }
    }
}

impl MetricsAuth {
    pub fn new(client: Client) -> Self {
        Self {
            client,
            authenticated: Arc::default(),
            authorized: Arc::default(),
        }
    }

    /// Whose `token` it is; `None` if the API server does not authenticate it.
    async fn authenticate(&self, token: &str) -> Result<Option<User>, kube::Error> {
        let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
        let mut key = [0; 32];
        key.copy_from_slice(digest.as_ref());
        if let Some(user) = lock(&self.authenticated).get(&key) {
            return Ok(user);
        }
        let review = TokenReview {
            // No audiences: the API server's own, as controller-runtime asks.
            spec: TokenReviewSpec {
                token: token.to_owned(),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let reviews = Api::<TokenReview>::all(self.client.clone());
        let reviewed = within_timeout(reviews.create(&PostParams::default(), &review)).await?;
        let user = reviewed
            .status
            .filter(|status| status.authenticated == Some(true))
            .and_then(|status| status.user)
            .map(User::from);
        lock(&self.authenticated).insert(key, user.clone(), AUTHENTICATED_FOR);
        Ok(user)
    }

    /// Whether `user` may `verb` the non-resource URL `path`.
    async fn authorize(&self, user: &User, verb: &str, path: &str) -> Result<bool, kube::Error> {
        let key = (user.clone(), verb.to_owned(), path.to_owned());
        if let Some(allowed) = lock(&self.authorized).get(&key) {
            return Ok(allowed);
        }
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(user.name.clone()),
                uid: user.uid.clone(),
                groups: Some(user.groups.clone()),
                extra: Some(user.extra.clone()),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(path.to_owned()),
                    verb: Some(verb.to_owned()),
                }),
                ..SubjectAccessReviewSpec::default()
            },
            ..SubjectAccessReview::default()
        };
        let reviews = Api::<SubjectAccessReview>::all(self.client.clone());
        let reviewed = within_timeout(reviews.create(&PostParams::default(), &review)).await?;
        let allowed = reviewed
            .status
            .is_some_and(|status| status.allowed && status.denied != Some(true));
        let ttl = if allowed { ALLOWED_FOR } else { DENIED_FOR };
        lock(&self.authorized).insert(key, allowed, ttl);
        Ok(allowed)
    }
}

async fn within_timeout<T>(
    call: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, kube::Error> {
    match tokio::time::timeout(REVIEW_TIMEOUT, call).await {
        Ok(result) => result,
        Err(_) => Err(kube::Error::Service("the review timed out".into())),
    }
}

/// The middleware, for `router.layer(axum::middleware::from_fn_with_state(auth, require))`.
pub async fn require(State(auth): State<MetricsAuth>, request: Request, next: Next) -> Response {
    let Some(token) = bearer_token(&request) else {
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    };
    let user = match auth.authenticate(token).await {
        Ok(Some(user)) => user,
        Ok(None) => return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response(),
        Err(e) => {
            error!(error = %e, "cannot authenticate a /metrics request");
            let body = "Authentication failed";
            return (StatusCode::INTERNAL_SERVER_ERROR, body).into_response();
        }
    };
    let verb = request.method().as_str().to_ascii_lowercase();
    let path = request.uri().path().to_owned();
    match auth.authorize(&user, &verb, &path).await {
        Ok(true) => next.run(request).await,
        Ok(false) => {
            let body = format!("Authorization denied for user {}", user.name);
            (StatusCode::FORBIDDEN, body).into_response()
        }
        Err(e) => {
            error!(error = %e, user = user.name, "cannot authorize a /metrics request");
            let body = format!("Authorization for user {} failed", user.name);
            (StatusCode::INTERNAL_SERVER_ERROR, body).into_response()
        }
    }
}

/// The token of `Authorization: Bearer <token>` (the scheme in any case).
fn bearer_token(request: &Request) -> Option<&str> {
    let value = request.headers().get(header::AUTHORIZATION)?;
    let (scheme, token) = value.to_str().ok()?.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The caches hold no invariant a panic could break.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A map whose entries expire.
#[derive(Debug)]
struct TtlCache<K, V> {
    entries: HashMap<K, (Instant, V)>,
}

impl<K, V> Default for TtlCache<K, V> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq, V: Clone> TtlCache<K, V> {
    fn get(&mut self, key: &K) -> Option<V> {
        match self.entries.get(key) {
            Some((expiry, value)) if *expiry > Instant::now() => Some(value.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn insert(&mut self, key: K, value: V, ttl: Duration) {
        if self.entries.len() >= MAX_ENTRIES {
            let now = Instant::now();
            self.entries.retain(|_, (expiry, _)| *expiry > now);
            if self.entries.len() >= MAX_ENTRIES {
                self.entries.clear();
            }
        }
        self.entries.insert(key, (Instant::now() + ttl, value));
    }
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use serde_json::{Value, json};
    use tower::ServiceExt;

    use super::*;
    use crate::testing::{ApiServer, Method, mock_client, status_error, within_timeout};

    const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";
    const ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

    /// `/metrics` behind the middleware, and the API server it asks.
    fn protected() -> (Router, ApiServer) {
        let (client, server) = mock_client();
        let router = Router::new()
            .route("/metrics", get(|| async { "metrics" }))
            .layer(axum::middleware::from_fn_with_state(
                MetricsAuth::new(client),
                require,
            ));
        (router, server)
    }

    async fn scrape(router: &Router, token: Option<&str>) -> (u16, String) {
        let mut request = axum::http::Request::get("/metrics");
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request.body(Body::empty()).expect("request");
        let response = router.clone().oneshot(request).await.expect("response");
        let status = response.status().as_u16();
        let body = axum::body::to_bytes(response.into_body(), 1 << 20).await;
        (
            status,
            String::from_utf8_lossy(&body.expect("body")).into_owned(),
        )
    }

    fn authenticated(name: &str) -> Value {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
               "spec": {}, "status": {"authenticated": true, "user": {"username": name}}})
    }

    fn decision(allowed: bool) -> Value {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
               "spec": {}, "status": {"allowed": allowed}})
    }

    #[tokio::test]
    async fn an_allowed_token_reads_the_metrics_and_the_decision_is_cached() {
        let (router, mut server) = protected();
        let script = tokio::spawn(async move {
            let review = server
                .expect(Method::POST, TOKEN_REVIEWS, 201, authenticated("prom"))
                .await;
            assert_eq!(review["spec"]["token"], "good");
            let access = server
                .expect(Method::POST, ACCESS_REVIEWS, 201, decision(true))
                .await;
            assert_eq!(access["spec"]["user"], "prom");
            assert_eq!(
                access["spec"]["nonResourceAttributes"],
                json!({"path": "/metrics", "verb": "get"})
            );
            server
        });
        assert_eq!(scrape(&router, Some("good")).await, (200, "metrics".into()));
        let mut server = script.await.expect("script");
        // Cached: the second scrape asks nothing.
        assert_eq!(scrape(&router, Some("good")).await.0, 200);
        let asked = server.try_answer(Duration::from_millis(200), |_, _, _| (500, Value::Null));
        assert!(asked.await.is_none());
    }

    #[tokio::test]
    async fn no_token_is_401_an_unknown_one_401_a_denied_user_403() {
        let (router, mut server) = protected();
        assert_eq!(scrape(&router, None).await.0, 401);
        let script = tokio::spawn(async move {
            let unknown = json!({"status": {"authenticated": false}});
            server
                .expect(Method::POST, TOKEN_REVIEWS, 201, unknown)
                .await;
            server
                .expect(Method::POST, TOKEN_REVIEWS, 201, authenticated("eve"))
                .await;
            server
                .expect(Method::POST, ACCESS_REVIEWS, 201, decision(false))
                .await;
        });
        assert_eq!(scrape(&router, Some("unknown")).await.0, 401);
        let (status, body) = scrape(&router, Some("eve-token")).await;
        assert_eq!(
            (status, body.as_str()),
            (403, "Authorization denied for user eve")
        );
        within_timeout(script).await.expect("script");
    }

    #[tokio::test]
    async fn an_api_server_failure_is_no_open_door() {
        let (router, mut server) = protected();
        let script = tokio::spawn(async move {
            let failure = status_error(500, "InternalError");
            server
                .expect(Method::POST, TOKEN_REVIEWS, 500, failure.clone())
                .await;
            server
                .expect(Method::POST, TOKEN_REVIEWS, 201, authenticated("prom"))
                .await;
            server
                .expect(Method::POST, ACCESS_REVIEWS, 500, failure)
                .await;
            // Failures are not cached: the next scrape asks again.
            server
                .expect(Method::POST, ACCESS_REVIEWS, 201, decision(true))
                .await;
        });
        assert_eq!(scrape(&router, Some("t")).await.0, 500);
        assert_eq!(scrape(&router, Some("t")).await.0, 500);
        assert_eq!(scrape(&router, Some("t")).await.0, 200);
        within_timeout(script).await.expect("script");
    }

    #[test]
    fn cached_decisions_expire() {
        let mut cache = TtlCache::default();
        cache.insert("allowed", true, Duration::from_secs(60));
        cache.insert("gone", true, Duration::ZERO);
        assert_eq!(cache.get(&"allowed"), Some(true));
        assert_eq!(cache.get(&"gone"), None);
    }

    #[test]
    fn bearer_tokens_are_read_as_the_api_server_reads_them() {
        let request = |value: &str| {
            axum::http::Request::get("/metrics")
                .header("authorization", value)
                .body(Body::empty())
                .expect("request")
        };
        assert_eq!(bearer_token(&request("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&request("bearer  abc ")), Some("abc"));
        assert_eq!(bearer_token(&request("Basic abc")), None);
        assert_eq!(bearer_token(&request("Bearer ")), None);
    }
}
