//! `rest_client_requests_total{code,method,host}`: client-go's count of the requests the
//! operator makes to the API server, which controller-runtime exports, as a tower layer on the
//! kube client.
//!
//! The layer wraps the whole stack kube builds, so it sees one call per API request: request
//! URIs are still relative there, hence the host taken from the client's configuration; the
//! retries kube makes inside are one request here (client-go counts each); a watch is counted
//! once, when its response headers arrive. The watches among the GETs are also counted apart
//! (not exported), so that a test can tell a read from a cache's watch (re)opened meanwhile.

use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tower::{Layer, Service};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RequestLabels {
    /// The HTTP status code, or `<error>` when no answer came (client-go's value).
    code: String,
    method: String,
    host: String,
}

/// The counters: client-go's series, one per status code, method and host, and the watches.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestCounters {
    /// The series `/metrics` exports.
    pub(crate) by_code: Family<RequestLabels, Counter>,
    /// The GETs that opened a watch, answered or not.
    pub(crate) watches: Counter,
}

/// Counts the requests of the client it is added to.
#[derive(Clone, Debug)]
pub(crate) struct RequestCounterLayer {
    host: String,
    counters: RequestCounters,
}

impl RequestCounterLayer {
    pub(crate) fn new(config: &kube::Config, counters: RequestCounters) -> Self {
        let url = &config.cluster_url;
        let host = match (url.host(), url.port_u16()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            _ => String::new(),
        };
        Self { host, counters }
    }
}

impl<S> Layer<S> for RequestCounterLayer {
    type Service = RequestCounter<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestCounter {
            inner,
            host: self.host.clone(),
            counters: self.counters.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct RequestCounter<S> {
    inner: S,
    host: String,
    counters: RequestCounters,
}

impl<S, B, RB> Service<Request<B>> for RequestCounter<S>
where
    S: Service<Request<B>, Response = Response<RB>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Counted<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let labels = RequestLabels {
            code: String::new(),
            method: request.method().as_str().to_owned(),
            host: self.host.clone(),
        };
        let watch = is_watch(request.uri());
        Counted {
            inner: self.inner.call(request),
            labels: Some(labels),
            watch,
            counters: self.counters.clone(),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request under way; counted when its answer (or failure) comes.
    pub(crate) struct Counted<F> {
        #[pin]
        inner: F,
        labels: Option<RequestLabels>,
        watch: bool,
        counters: RequestCounters,
    }
}

/// Whether `uri` opens a watch: kube sends `watch=true` (the API server also takes `1`).
fn is_watch(uri: &http::Uri) -> bool {
    uri.query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair == "watch=true" || pair == "watch=1")
    })
}

impl<F, RB, E> Future for Counted<F>
where
    F: Future<Output = Result<Response<RB>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = std::task::ready!(this.inner.poll(cx));
        if let Some(mut labels) = this.labels.take() {
            labels.code = match &result {
                Ok(response) => response.status().as_u16().to_string(),
                Err(_) => "<error>".to_owned(),
            };
            this.counters.by_code.get_or_create(&labels).inc();
            if *this.watch {
                this.counters.watches.inc();
            }
        }
        Poll::Ready(result)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::Api;
    use tower::ServiceBuilder;

    use super::*;
    use crate::testing::{Method, mock_service, status_error};

    #[tokio::test]
    async fn requests_are_counted_by_code_and_method() {
        let (service, mut server) = mock_service();
        let counters = RequestCounters::default();
        let layer = RequestCounterLayer {
            host: "10.96.0.1:443".into(),
            counters: counters.clone(),
        };
        let client = kube::Client::new(
            ServiceBuilder::new().layer(layer).service(service),
            "default",
        );
        let script = tokio::spawn(async move {
            let path = "/api/v1/namespaces/default/configmaps/x";
            server
                .expect(Method::GET, path, 404, status_error(404, "NotFound"))
                .await;
        });
        let configmaps: Api<ConfigMap> = Api::default_namespaced(client);
        assert!(configmaps.get_opt("x").await.expect("GET").is_none());
        script.await.expect("script");
        let labels = RequestLabels {
            code: "404".into(),
            method: "GET".into(),
            host: "10.96.0.1:443".into(),
        };
        assert_eq!(counters.by_code.get_or_create(&labels).get(), 1);
        assert_eq!(counters.watches.get(), 0, "a read taken for a watch");
    }

    #[test]
    fn a_watch_is_told_from_a_read_by_its_query() {
        let uri = |text: &str| text.parse::<http::Uri>().expect("a URI");
        let path = "/api/v1/configmaps";
        assert!(is_watch(&uri(&format!(
            "{path}?&watch=true&resourceVersion=7"
        ))));
        assert!(is_watch(&uri(&format!("{path}?watch=1"))));
        assert!(!is_watch(&uri(&format!("{path}?&limit=500"))));
        assert!(!is_watch(&uri(&format!(
            "{path}?&labelSelector=watch%3Dtrue"
        ))));
        assert!(!is_watch(&uri(path)));
    }
}
