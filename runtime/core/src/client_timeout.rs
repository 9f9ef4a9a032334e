//! A deadline on each request of the manager's client, as a tower layer: a request to an API
//! server that died after accepting it (or a network that dropped it without a reset) fails
//! instead of hanging for ever, and with it the reconcile that sent it.
//!
//! The deadline covers the whole exchange, the response's body included (a list can stall
//! half-way). It is left off long-running requests: a watch may go minutes without an event,
//! and is ended by the API server after the `timeoutSeconds` kube sends (290 s), with kube's
//! watcher giving up on a silent one a few seconds after that; likewise a log followed, or an
//! upgraded connection (exec, attach, port-forward). kube's own `read_timeout` cannot tell them
//! apart, which is why kube leaves it unset, and why this layer is the runtime's.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response, header};
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep, sleep_until};
use tower::{Layer, Service};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The error of a request that had no (whole) answer in time.
#[derive(Debug, thiserror::Error)]
#[error("no answer from the API server within {0:?}")]
pub(crate) struct TimedOut(pub(crate) Duration);

/// Gives each request that is not long-running `timeout` to be answered, body included.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RequestTimeoutLayer {
    timeout: Duration,
}

impl RequestTimeoutLayer {
    pub(crate) fn new(timeout: Duration) -> Self {
        Self { timeout }
    }
}

impl<S> Layer<S> for RequestTimeoutLayer {
    type Service = RequestTimeout<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestTimeout {
            inner,
            timeout: self.timeout,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct RequestTimeout<S> {
    inner: S,
    timeout: Duration,
}

/// Whether `request` may rightly go on for long: a watch, a log followed, an upgrade. (The API
/// server's own request timeout spares the same ones.)
fn is_long_running<B>(request: &Request<B>) -> bool {
    let query = request.uri().query().unwrap_or_default();
    let streams = query
        .split('&')
        .any(|pair| matches!(pair, "watch=true" | "watch=1" | "follow=true" | "follow=1"));
    streams || request.headers().contains_key(header::UPGRADE)
}

impl<S, B, RB> Service<Request<B>> for RequestTimeout<S>
where
    S: Service<Request<B>, Response = Response<RB>>,
    S::Error: Into<BoxError>,
{
    type Response = Response<DeadlineBody<RB>>;
    type Error = BoxError;
    type Future = Deadlined<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let deadline = (!is_long_running(&request)).then(|| Instant::now() + self.timeout);
        Deadlined {
            inner: self.inner.call(request),
            timeout: self.timeout,
            sleep: deadline.map(|deadline| Box::pin(sleep_until(deadline))),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request under way, failed at its deadline if it has one.
    pub(crate) struct Deadlined<F> {
        #[pin]
        inner: F,
        timeout: Duration,
        sleep: Option<Pin<Box<Sleep>>>,
    }
}

impl<F, RB, E> Future for Deadlined<F>
where
    F: Future<Output = Result<Response<RB>, E>>,
    E: Into<BoxError>,
{
    type Output = Result<Response<DeadlineBody<RB>>, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(result) = this.inner.poll(cx) {
            let response = result.map_err(Into::into)?;
            // The body has what is left of the time.
            let sleep = this.sleep.take();
            let timeout = *this.timeout;
            return Poll::Ready(Ok(response.map(|inner| DeadlineBody {
                inner,
                timeout,
                sleep,
            })));
        }
        let expired = this
            .sleep
            .as_mut()
            .is_some_and(|sleep| sleep.as_mut().poll(cx).is_ready());
        if expired {
            return Poll::Ready(Err(Box::new(TimedOut(*this.timeout))));
        }
        Poll::Pending
    }
}

pin_project_lite::pin_project! {
    /// A response's body, failed at the request's deadline if it has one.
    pub(crate) struct DeadlineBody<B> {
        #[pin]
        inner: B,
        timeout: Duration,
        sleep: Option<Pin<Box<Sleep>>>,
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    type Data = B::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        if let Poll::Ready(frame) = this.inner.poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        let expired = this
            .sleep
            .as_mut()
            .is_some_and(|sleep| sleep.as_mut().poll(cx).is_ready());
        if expired {
            return Poll::Ready(Some(Err(Box::new(TimedOut(*this.timeout)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(uri: &str) -> Request<()> {
        Request::get(uri).body(()).expect("a request")
    }

    #[test]
    fn watches_logs_followed_and_upgrades_are_long_running() {
        for uri in [
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1",
            "/api/v1/configmaps?resourceVersion=1&watch=1",
            "/api/v1/namespaces/default/pods/p/log?follow=true",
        ] {
            assert!(is_long_running(&request(uri)), "{uri}");
        }
        let mut exec = request("/api/v1/namespaces/default/pods/p/exec?command=ls");
        exec.headers_mut()
            .insert(header::UPGRADE, "websocket".parse().expect("a value"));
        assert!(is_long_running(&exec));
        for uri in [
            "/api/v1/namespaces/default/configmaps/watch",
            "/api/v1/configmaps?limit=500",
            "/api/v1/configmaps?watch=false",
            "/api/v1/namespaces/default/pods/p/log",
        ] {
            assert!(!is_long_running(&request(uri)), "{uri}");
        }
    }
}
