//! The token bucket behind every limit the runtime puts on its load on the API server: the
//! rate of a controller's retries ([`controller`](crate::controller)), of the manager's
//! requests ([`ClientRateLimitLayer`]) and of the Events about one object
//! ([`events`](crate::events)). It is golang.org/x/time/rate's model, which client-go and
//! controller-runtime use for the same limits: `burst` tokens at most, refilled at `rate` per
//! second; each action takes one.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};
use tower::{Layer, Service};

/// A token bucket: up to `burst` actions at once, `rate` per second after that.
#[derive(Debug)]
pub(crate) struct TokenBucket {
    rate: f64,
    burst: f64,
    /// Tokens left at `updated`; below zero when tokens are reserved ahead.
    tokens: f64,
    updated: Instant,
}

impl TokenBucket {
    /// A full bucket of `burst` tokens, refilled at `rate` per second.
    pub(crate) fn new(rate: f64, burst: u32, now: Instant) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            rate,
            burst,
            tokens: burst,
            updated: now,
        }
    }

    /// Adds the tokens refilled since the last update.
    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.updated = self.updated.max(now);
    }

    /// Takes a token if there is one now (client-go's `TryAccept`): whether it did.
    pub(crate) fn try_take(&mut self, now: Instant) -> bool {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Takes a token, now or ahead of its refill, and returns how long to wait for it
    /// (x/time/rate's `Reserve().Delay()`): the n-th reservation past the burst waits n/rate.
    pub(crate) fn reserve(&mut self, now: Instant) -> Duration {
        self.refill(now);
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.rate)
        }
    }

    /// Whether the bucket is full again at `now`: it then limits nothing that a new bucket
    /// would not, and can be forgotten.
    pub(crate) fn is_full(&self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens + elapsed * self.rate >= self.burst
    }
}

/// A [`TokenBucket`] shared by the clones of whatever it limits.
pub(crate) type SharedBucket = Arc<Mutex<TokenBucket>>;

/// Takes a token from `bucket` ahead if need be; how long to wait for it.
pub(crate) fn reserve(bucket: &SharedBucket) -> Duration {
    // Only counters: a panic while it was held leaves it usable.
    let mut bucket = bucket.lock().unwrap_or_else(PoisonError::into_inner);
    bucket.reserve(Instant::now())
}

/// The manager's requests to the API server, at most `qps` a second after a burst of `burst`:
/// client-go's client-side rate limit (`--kube-api-qps`, `--kube-api-burst`).
/// A request waits for its token before it is sent, in the order they came.
#[derive(Clone, Debug)]
pub(crate) struct ClientRateLimitLayer {
    bucket: SharedBucket,
}

impl ClientRateLimitLayer {
    /// A limit of `qps` requests a second, `burst` at once; `qps` 0 for no limit.
    pub(crate) fn new(qps: f32, burst: u32) -> Option<Self> {
        (qps > 0.0).then(|| Self {
            bucket: Arc::new(Mutex::new(TokenBucket::new(
                f64::from(qps),
                burst,
                Instant::now(),
            ))),
        })
    }
}

impl<S> Layer<S> for ClientRateLimitLayer {
    type Service = ClientRateLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ClientRateLimit {
            inner,
            bucket: Arc::clone(&self.bucket),
            wait: None,
        }
    }
}

/// The service of [`ClientRateLimitLayer`]: ready once its request's token is there. kube's
/// client calls it from one task (its `Buffer`), so requests queue for tokens in order.
#[derive(Debug)]
pub(crate) struct ClientRateLimit<S> {
    inner: S,
    bucket: SharedBucket,
    /// The wait for the token reserved for the next request, once reserved.
    wait: Option<Pin<Box<Sleep>>>,
}

impl<S: Clone> Clone for ClientRateLimit<S> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
            bucket: Arc::clone(&self.bucket),
            wait: None,
        }
    }
}

impl<S, R> Service<R> for ClientRateLimit<S>
where
    S: Service<R>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let bucket = &self.bucket;
        let wait = self
            .wait
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(reserve(bucket))));
        std::task::ready!(wait.as_mut().poll(cx));
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        // The token is spent: the next request reserves its own.
        self.wait = None;
        self.inner.call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_allows_its_burst_then_its_rate() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(10.0, 3, start);
        assert!((0..3).all(|_| bucket.try_take(start)));
        assert!(!bucket.try_take(start));
        assert!(bucket.try_take(start + Duration::from_millis(100)));
        assert!(!bucket.try_take(start + Duration::from_millis(150)));
    }

    #[test]
    fn reservations_past_the_burst_wait_in_turn() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(10.0, 2, start);
        let delays: Vec<_> = (0..5).map(|_| bucket.reserve(start)).collect();
        let ms = Duration::from_millis;
        assert_eq!(delays, [ms(0), ms(0), ms(100), ms(200), ms(300)]);
        // Reserved tokens are owed: the bucket is full again once they are paid back.
        assert!(!bucket.is_full(start + ms(400)));
        assert!(bucket.is_full(start + ms(500)));
    }

    /// 100 requests through a client limited to 20 a second with a burst of 30 take
    /// (100 - 30) / 20 = 3.5 s.
    #[tokio::test(start_paused = true)]
    async fn the_client_sends_its_burst_then_its_rate() {
        let (service, mut handle) = tower_test::mock::pair::<u32, ()>();
        let layer = ClientRateLimitLayer::new(20.0, 30).expect("a limit");
        let mut service = layer.layer(service);
        let start = Instant::now();
        let answered = tokio::spawn(async move {
            let mut sent = Vec::new();
            while let Some((request, respond)) = handle.next_request().await {
                sent.push((request, start.elapsed()));
                respond.send_response(());
            }
            sent
        });
        for request in 0..100 {
            std::future::poll_fn(|cx| service.poll_ready(cx))
                .await
                .expect("ready");
            service.call(request).await.expect("answered");
        }
        drop(service);
        let sent = answered.await.expect("the server");
        assert_eq!(sent.len(), 100);
        assert!(sent[29].1 < Duration::from_millis(1), "{:?}", sent[29]);
        let last = sent[99].1;
        assert!(
            (Duration::from_millis(3450)..Duration::from_millis(3550)).contains(&last),
            "{last:?}"
        );
    }

    #[test]
    fn no_limit_when_qps_is_zero() {
        assert!(ClientRateLimitLayer::new(0.0, 30).is_none());
    }
}
