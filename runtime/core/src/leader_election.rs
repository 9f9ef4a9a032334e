//! Leader election with a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection` (and
//! so controller-runtime) does it, with controller-runtime's timings:
//!
//! - Every instance tries to take or renew the Lease every [`RETRY_PERIOD`].
//! - Another instance's Lease counts as held until [`LEASE_DURATION`] has passed since this
//!   instance last saw it change, measured on this instance's own clock (no clock skew).
//! - The leader steps down (the manager exits) when it could not renew the Lease for
//!   [`RENEW_DEADLINE`], which is shorter than [`LEASE_DURATION`]: it stops before any other
//!   instance may take over.
//! - On a graceful shutdown the leader releases the Lease (no holder, a 1 s duration), so the
//!   next leader takes over within one [`RETRY_PERIOD`] instead of waiting for it to expire.
//!   A leader that lost the Lease never writes it again.
//!
//! Writes replace the Lease as last read, with only the election's fields changed (holder,
//! duration, acquire and renew times, transitions): what others put on it (labels,
//! annotations, spec fields such as `strategy` and `preferredHolder`) stays. Its
//! `resourceVersion` goes with it, so two instances can never both believe they took it: one
//! of the writes fails with a conflict.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::{Api, Client};
use ring::error::Unspecified;
use ring::rand::{SecureRandom, SystemRandom};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, timeout, timeout_at};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::client_timeout::TimedOut;
use crate::errors::error_chain;

/// How long a Lease stays held without a renewal (controller-runtime's default).
pub(crate) const LEASE_DURATION: Duration = Duration::from_secs(15);
/// How long the leader keeps trying to renew before it steps down (controller-runtime's
/// default).
pub(crate) const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// How often instances try to take or renew the Lease (controller-runtime's default).
pub(crate) const RETRY_PERIOD: Duration = Duration::from_secs(2);
/// How long each request about the Lease may take: half the [`RENEW_DEADLINE`], as
/// controller-runtime sets its leader-election client's timeout
/// (`pkg/leaderelection/leader_election.go`), so that one hung request neither costs the
/// leadership nor holds up taking it, or releasing it at shutdown.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(RENEW_DEADLINE.as_secs() / 2);

/// `request` about the Lease, given up after [`REQUEST_TIMEOUT`].
async fn bounded<T>(
    request: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, kube::Error> {
    match timeout(REQUEST_TIMEOUT, request).await {
        Ok(answered) => answered,
        Err(_) => Err(kube::Error::Service(Box::new(TimedOut(REQUEST_TIMEOUT)))),
    }
}

/// This instance's identity in the Lease, on the machine (the pod) named `hostname`: the
/// hostname, for people to read, and a random UUID (version 4), as controller-runtime makes it
/// (`pkg/leaderelection/leader_election.go`: `os.Hostname() + "_" + uuid.NewUUID()`). Neither
/// the hostname nor the process id is unique: a pod template that sets `spec.hostname` gives
/// every replica the same one, and each container's process is pid 1. The randomness is the
/// operating system's, through ring, which the client's TLS already builds.
pub(crate) fn identity(hostname: &str) -> Result<String, Unspecified> {
    let mut bytes = [0u8; 16];
    SystemRandom::new().fill(&mut bytes)?;
    Ok(format!("{hostname}_{}", uuid_v4(bytes)))
}

/// `random` as a version 4 (random) UUID, in its usual text form.
fn uuid_v4(mut random: [u8; 16]) -> String {
    random[6] = (random[6] & 0x0f) | 0x40;
    random[8] = (random[8] & 0x3f) | 0x80;
    let hex: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The Lease and this instance's identity in it.
pub(crate) struct LeaderElection {
    leases: Api<Lease>,
    name: String,
    identity: String,
}

/// The Lease as this instance last saw it, and when (on this instance's clock).
struct Observed {
    lease: Option<Lease>,
    at: Instant,
}

/// What one attempt to take or renew the Lease found.
#[derive(Debug, PartialEq, Eq)]
enum Attempt {
    /// This instance holds the Lease, renewed just now.
    Held,
    /// Another instance holds it.
    HeldBy(String),
}

impl LeaderElection {
    /// Election for the Lease `name` in `namespace`, as `identity` (unique per instance).
    pub(crate) fn new(client: Client, namespace: &str, name: String, identity: String) -> Self {
        Self {
            leases: Api::namespaced(client, namespace),
            name,
            identity,
        }
    }

    /// Waits until this instance holds the Lease; `None` if `shutdown` comes first.
    pub(crate) async fn acquire(self, shutdown: &CancellationToken) -> Option<Leadership> {
        info!(
            lease = self.name,
            identity = self.identity,
            "waiting for leadership"
        );
        let mut observed = Observed {
            lease: None,
            at: Instant::now(),
        };
        loop {
            match self.try_acquire_or_renew(&mut observed).await {
                Ok(Attempt::Held) => break,
                Ok(Attempt::HeldBy(_)) => {}
                Err(error) => warn!(error = error_chain(&error), "cannot take the Lease"),
            }
            tokio::select! {
                () = sleep(RETRY_PERIOD) => {}
                () = shutdown.cancelled() => return None,
            }
        }
        info!(lease = self.name, "became the leader");
        let (lost_tx, lost) = watch::channel(false);
        let stop = CancellationToken::new();
        let renewing = tokio::spawn(self.renew(observed, lost_tx, stop.clone()));
        Some(Leadership {
            renewing,
            lost,
            stop,
        })
    }

    /// Renews the Lease every [`RETRY_PERIOD`] until it is lost, then says so on `lost`, or
    /// until `stop`, then returns the election with what it last saw (for
    /// [`Leadership::release`]). An attempt under way always completes, so that what it saw
    /// is what the API server has.
    async fn renew(
        self,
        mut observed: Observed,
        lost: watch::Sender<bool>,
        stop: CancellationToken,
    ) -> Option<(Self, Observed)> {
        let mut renewed = Instant::now();
        loop {
            tokio::select! {
                () = sleep(RETRY_PERIOD) => {}
                () = stop.cancelled() => return Some((self, observed)),
            }
            // A request that hangs must not hold up the deadline.
            let deadline = renewed + RENEW_DEADLINE;
            match timeout_at(deadline, self.try_acquire_or_renew(&mut observed)).await {
                Ok(Ok(Attempt::Held)) => renewed = Instant::now(),
                Ok(Ok(Attempt::HeldBy(holder))) => {
                    warn!(holder, "another instance holds the Lease");
                    break;
                }
                Ok(Err(error)) => warn!(error = error_chain(&error), "cannot renew the Lease"),
                Err(_) => {}
            }
            if Instant::now() >= deadline {
                warn!("the Lease was not renewed within {RENEW_DEADLINE:?}");
                break;
            }
        }
        // Ignored if nobody listens any more: then the manager is stopping anyway.
        let _ = lost.send(true);
        None
    }

    /// One attempt to take the Lease, or renew it if this instance holds it (client-go's
    /// `tryAcquireOrRenew`).
    async fn try_acquire_or_renew(&self, observed: &mut Observed) -> Result<Attempt, kube::Error> {
        let now = Timestamp::now();
        let Some(current) = bounded(self.leases.get_opt(&self.name)).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.record(None, now)),
            };
            let created = bounded(self.leases.create(&PostParams::default(), &lease)).await?;
            *observed = Observed {
                lease: Some(created),
                at: Instant::now(),
            };
            return Ok(Attempt::Held);
        };
        // The expiry counts from when this instance saw the Lease change, not from the time
        // written in it, so that clocks need not agree.
        if observed.lease.as_ref().map(|l| &l.spec) != Some(&current.spec) {
            *observed = Observed {
                lease: Some(current.clone()),
                at: Instant::now(),
            };
        }
        let spec = current.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let duration = spec.lease_duration_seconds.map_or(LEASE_DURATION, |s| {
            Duration::from_secs(s.max(0).unsigned_abs().into())
        });
        if !holder.is_empty() && holder != self.identity && observed.at.elapsed() < duration {
            return Ok(Attempt::HeldBy(holder));
        }
        // The Lease as read, its resourceVersion included: the write fails with a conflict if
        // anyone wrote it since.
        let mut lease = current;
        lease.spec = Some(self.record(Some(&spec), now));
        let params = PostParams::default();
        let replaced = bounded(self.leases.replace(&self.name, &params, &lease)).await?;
        *observed = Observed {
            lease: Some(replaced),
            at: Instant::now(),
        };
        Ok(Attempt::Held)
    }

    /// The Lease's spec naming this instance as the holder at `now`, after `previous` (`None`:
    /// a new Lease).
    fn record(&self, previous: Option<&LeaseSpec>, now: Timestamp) -> LeaseSpec {
        let held_already =
            previous.is_some_and(|p| p.holder_identity.as_deref() == Some(&self.identity));
        let transitions = previous.and_then(|p| p.lease_transitions).unwrap_or(0);
        let acquired = match previous {
            Some(p) if held_already => p.acquire_time.clone(),
            _ => Some(MicroTime(now)),
        };
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(LEASE_DURATION.as_secs() as i32),
            acquire_time: acquired,
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(match previous {
                Some(_) if !held_already => transitions + 1,
                _ => transitions,
            }),
            // The fields the election does not own (`strategy`, `preferredHolder`) are someone
            // else's: kept as they are.
            ..previous.cloned().unwrap_or_default()
        }
    }

    /// Gives the Lease up: no holder, and a 1 s duration, as client-go does.
    async fn release(&self, observed: &Observed) -> Result<(), kube::Error> {
        let Some(current) = &observed.lease else {
            return Ok(());
        };
        let now = Some(MicroTime(Timestamp::now()));
        let spec = current.spec.clone().unwrap_or_default();
        let released = Lease {
            metadata: current.metadata.clone(),
            spec: Some(LeaseSpec {
                holder_identity: None,
                lease_duration_seconds: Some(1),
                acquire_time: now.clone(),
                renew_time: now,
                ..spec
            }),
        };
        bounded(
            self.leases
                .replace(&self.name, &PostParams::default(), &released),
        )
        .await?;
        Ok(())
    }
}

/// The Lease, held by this instance.
pub(crate) struct Leadership {
    renewing: JoinHandle<Option<(LeaderElection, Observed)>>,
    lost: watch::Receiver<bool>,
    stop: CancellationToken,
}

impl Leadership {
    /// Resolves when this instance no longer holds the Lease.
    pub(crate) async fn lost(&mut self) {
        // An error means the renewing task is gone: the Lease is not renewed any more either.
        let _ = self.lost.wait_for(|&lost| lost).await;
    }

    /// Stops renewing and, unless the Lease was lost meanwhile, releases it so that another
    /// instance takes over at once.
    pub(crate) async fn release(self) {
        self.stop.cancel();
        // `None`: lost before it could stop; a task that failed is as good as lost.
        let Ok(Some((election, observed))) = self.renewing.await else {
            return;
        };
        match election.release(&observed).await {
            Ok(()) => info!(lease = election.name, "released the Lease"),
            Err(error) => warn!(error = error_chain(&error), "cannot release the Lease"),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::testing::{ApiServer, Method, mock_client, status_error};

    const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    const LEASE: &str = "/apis/coordination.k8s.io/v1/namespaces/default/leases/test-lease";

    fn election() -> (LeaderElection, ApiServer) {
        let (client, server) = mock_client();
        let election = LeaderElection::new(client, "default", "test-lease".into(), "me".into());
        (election, server)
    }

    /// The Lease as stored, held by `holder` and renewed at `renewed`.
    fn stored(holder: Option<&str>, renewed: &str) -> Value {
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": "test-lease",
                "namespace": "default",
                "resourceVersion": "7",
                // Someone else's, as are `strategy` and `preferredHolder`.
                "labels": {"example.com/team": "platform"},
                "annotations": {"example.com/owner": "someone else"},
            },
            "spec": {
                "holderIdentity": holder,
                "leaseDurationSeconds": 15,
                "acquireTime": "2026-01-01T00:00:00.000000Z",
                "renewTime": renewed,
                "leaseTransitions": 3,
                "strategy": "OldestEmulationVersion",
                "preferredHolder": "other",
            },
        })
    }

    /// Takes the absent Lease: returns the leadership and the API server.
    async fn lead() -> (Leadership, ApiServer) {
        let (election, mut server) = election();
        let script = tokio::spawn(async move {
            server
                .expect(Method::GET, LEASE, 404, status_error(404, "NotFound"))
                .await;
            let created = server.echo(Method::POST, LEASES).await;
            assert_eq!(created["spec"]["holderIdentity"], "me");
            assert_eq!(created["spec"]["leaseDurationSeconds"], 15);
            server
        });
        let leadership = election.acquire(&CancellationToken::new()).await;
        let server = script.await.expect("API server script");
        (leadership.expect("leadership"), server)
    }

    #[tokio::test(start_paused = true)]
    async fn an_absent_lease_is_taken_and_released_on_shutdown() {
        let (leadership, mut server) = lead().await;
        let release = tokio::spawn(leadership.release());
        let released = server.echo(Method::PUT, LEASE).await;
        assert_eq!(released["spec"]["holderIdentity"], Value::Null);
        assert_eq!(released["spec"]["leaseDurationSeconds"], 1);
        release.await.expect("release");
    }

    #[test]
    fn identities_are_the_hostname_and_a_random_uuid() {
        let (first, second) = (identity("pod"), identity("pod"));
        let (first, second) = (first.expect("an identity"), second.expect("an identity"));
        assert_ne!(first, second);
        let uuid = first.strip_prefix("pod_").expect("the hostname first");
        let groups: Vec<usize> = uuid.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{uuid}");
        assert_eq!(&uuid[14..15], "4", "version 4: {uuid}");
        assert!("89ab".contains(&uuid[19..20]), "RFC 4122 variant: {uuid}");
    }

    /// An attempt that the API server never answers is given up, and the next one takes the
    /// Lease.
    #[tokio::test(start_paused = true)]
    async fn an_attempt_that_is_never_answered_is_given_up() {
        let (election, mut server) = election();
        let script = tokio::spawn(async move {
            let (method, path, hung) = server.hold().await;
            assert_eq!((method, path.as_str()), (Method::GET, LEASE));
            let not_found = |_: &Method, _: &str, _: &Value| (404, status_error(404, "NotFound"));
            let next = server
                .try_answer(Duration::from_secs(3600), not_found)
                .await;
            assert_eq!(next.map(|(method, _)| method), Some(Method::GET));
            server.echo(Method::POST, LEASES).await;
            drop(hung);
        });
        let acquired = tokio::time::timeout(
            Duration::from_secs(3600),
            election.acquire(&CancellationToken::new()),
        )
        .await;
        let leadership = acquired.expect("the hung attempt to be given up");
        assert!(leadership.is_some());
        script.await.expect("API server script");
    }

    /// A release that the API server never answers is given up: the manager's shutdown must
    /// end within the Pod's grace period.
    #[tokio::test(start_paused = true)]
    async fn a_release_that_is_never_answered_is_given_up() {
        let (leadership, mut server) = lead().await;
        let release = tokio::spawn(leadership.release());
        let (method, _, _hung) = server.hold().await;
        assert_eq!(method, Method::PUT);
        let released = tokio::time::timeout(Duration::from_secs(3600), release).await;
        released.expect("the release to give up").expect("its task");
    }

    #[tokio::test(start_paused = true)]
    async fn a_lease_held_by_another_is_taken_once_it_expired() {
        let (election, mut server) = election();
        let started = Instant::now();
        let script = tokio::spawn(async move {
            // The same record each time: it stops being renewed.
            let theirs = stored(Some("other"), "2026-01-01T00:00:00.000000Z");
            loop {
                let (method, body) = server
                    .answer(|method, path, body| {
                        assert_eq!(path, LEASE);
                        match *method {
                            Method::GET => (200, theirs.clone()),
                            _ => (200, body.clone()),
                        }
                    })
                    .await;
                if method == Method::PUT {
                    return body;
                }
                assert_eq!(method, Method::GET);
            }
        });
        let leadership = election.acquire(&CancellationToken::new()).await;
        let taken = script.await.expect("API server script");
        assert!(leadership.is_some());
        assert!(
            started.elapsed() >= LEASE_DURATION,
            "{:?}",
            started.elapsed()
        );
        assert_eq!(taken["spec"]["holderIdentity"], "me");
        assert_eq!(taken["spec"]["leaseTransitions"], 4);
        // Replaced only if nobody wrote it since it was read.
        assert_eq!(taken["metadata"]["resourceVersion"], "7");
        assert_kept_what_is_not_the_elections(&taken);
    }

    /// What [`stored`] has that is not the election's, in `written`.
    fn assert_kept_what_is_not_the_elections(written: &Value) {
        let stored = stored(None, "2026-01-01T00:00:00.000000Z");
        for field in ["labels", "annotations"] {
            assert_eq!(
                written["metadata"][field], stored["metadata"][field],
                "{field}"
            );
        }
        for field in ["strategy", "preferredHolder"] {
            assert_eq!(written["spec"][field], stored["spec"][field], "{field}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_renewal_changes_only_the_elections_fields() {
        let (leadership, mut server) = lead().await;
        let ours = stored(Some("me"), "2026-01-01T00:00:00.000000Z");
        let script = tokio::spawn(async move {
            server.expect(Method::GET, LEASE, 200, ours).await;
            let renewed = server.echo(Method::PUT, LEASE).await;
            (server, renewed)
        });
        let (mut server, renewed) = script.await.expect("API server script");
        assert_eq!(renewed["metadata"]["resourceVersion"], "7");
        assert_eq!(renewed["spec"]["holderIdentity"], "me");
        assert_ne!(renewed["spec"]["renewTime"], "2026-01-01T00:00:00.000000Z");
        // Still held since it was acquired: the same acquire time and transitions.
        assert_eq!(
            renewed["spec"]["acquireTime"],
            "2026-01-01T00:00:00.000000Z"
        );
        assert_eq!(renewed["spec"]["leaseTransitions"], 3);
        assert_kept_what_is_not_the_elections(&renewed);

        let release = tokio::spawn(leadership.release());
        let released = server.echo(Method::PUT, LEASE).await;
        assert_eq!(released["spec"]["holderIdentity"], Value::Null);
        assert_kept_what_is_not_the_elections(&released);
        release.await.expect("release");
    }

    #[tokio::test(start_paused = true)]
    async fn a_released_lease_is_taken_at_once() {
        let (election, mut server) = election();
        let script = tokio::spawn(async move {
            let released = stored(None, "2026-01-01T00:00:00.000000Z");
            server.expect(Method::GET, LEASE, 200, released).await;
            server.echo(Method::PUT, LEASE).await
        });
        let started = Instant::now();
        let leadership = election.acquire(&CancellationToken::new()).await;
        let taken = script.await.expect("API server script");
        assert!(leadership.is_some());
        assert_eq!(started.elapsed(), Duration::ZERO);
        assert_eq!(taken["spec"]["holderIdentity"], "me");
    }

    #[tokio::test(start_paused = true)]
    async fn a_leader_that_cannot_renew_steps_down_and_never_writes_the_lease_again() {
        let (mut leadership, mut server) = lead().await;
        // Answers every request with an error until none comes for a while; a request other
        // than a GET fails the test.
        let script = tokio::spawn(async move {
            let mut gets = 0;
            let only_gets = |method: &Method, path: &str, _: &Value| {
                assert_eq!((method, path), (&Method::GET, LEASE));
                (500, status_error(500, "InternalError"))
            };
            while server
                .try_answer(3 * RETRY_PERIOD, only_gets)
                .await
                .is_some()
            {
                gets += 1;
            }
            gets
        });
        let started = Instant::now();
        leadership.lost().await;
        let lost_after = started.elapsed();
        assert!(lost_after >= RENEW_DEADLINE, "{lost_after:?}");
        assert!(lost_after < LEASE_DURATION, "{lost_after:?}");
        leadership.release().await;
        let gets = script.await.expect("only GETs, no release");
        assert!(gets >= 4, "{gets} renewals");
    }

    #[tokio::test(start_paused = true)]
    async fn another_holder_stops_the_leader_at_once() {
        let (mut leadership, mut server) = lead().await;
        let theirs = stored(Some("other"), "2026-01-01T00:00:10.000000Z");
        let started = Instant::now();
        let script = tokio::spawn(async move {
            server.expect(Method::GET, LEASE, 200, theirs).await;
            server
        });
        leadership.lost().await;
        assert_eq!(started.elapsed(), RETRY_PERIOD);
        let mut server = script.await.expect("API server script");
        leadership.release().await;
        let released = server
            .try_answer(LEASE_DURATION, |_, _, _| (200, Value::Null))
            .await;
        assert!(released.is_none(), "a lost Lease was written: {released:?}");
    }
}

/// Against a real kube-apiserver and etcd (envtest).
#[cfg(test)]
mod envtests {
    use kube::api::{Patch, PatchParams};
    use serde_json::json;

    use super::*;
    use crate::envtest::{ControlPlane, NAMESPACE};

    /// Two replicas of a pod template that sets `spec.hostname` have the same HOSTNAME, and
    /// in their containers the same pid (1): only one of them may lead.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn replicas_of_the_same_hostname_do_not_both_lead() {
        let plane = ControlPlane::start().await.expect("a control plane");
        let election = || async {
            let client = plane.client().await.expect("a client");
            let identity = identity("manager").expect("random bytes");
            LeaderElection::new(client, NAMESPACE, "test-lease".into(), identity)
        };
        let first = election().await.acquire(&CancellationToken::new()).await;
        let first = first.expect("the absent Lease is taken");
        let second = election().await;
        let second =
            tokio::time::timeout(3 * RETRY_PERIOD, second.acquire(&CancellationToken::new())).await;
        assert!(
            second.is_err(),
            "the second replica took the Lease its twin holds"
        );
        let leases: Api<Lease> =
            Api::namespaced(plane.client().await.expect("a client"), NAMESPACE);
        let lease = leases.get("test-lease").await.expect("the Lease");
        let holder = lease.spec.and_then(|spec| spec.holder_identity);
        let holder = holder.unwrap_or_default();
        assert!(holder.starts_with("manager"), "{holder}");
        first.release().await;
    }

    /// Others may put their own labels, annotations and fields on the Lease (kubectl, a policy
    /// engine, the coordinated leader election's controller): renewals change only the
    /// election's fields, and keep the rest.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn renewals_keep_what_others_put_on_the_lease() {
        let plane = ControlPlane::start().await.expect("a control plane");
        let client = plane.client().await.expect("a client");
        let election = LeaderElection::new(client, NAMESPACE, "test-lease".into(), "me".into());
        let leadership = election.acquire(&CancellationToken::new()).await;
        let leadership = leadership.expect("the absent Lease is taken");

        let other = plane.client().await.expect("another client");
        let leases: Api<Lease> = Api::namespaced(other, NAMESPACE);
        // (`strategy` and `preferredHolder` too, but this API server drops them: they need the
        // CoordinatedLeaderElection feature gate. The unit tests check that they are kept.)
        let theirs = json!({
            "metadata": {
                "labels": {"example.com/team": "platform"},
                "annotations": {"example.com/owner": "someone else"},
            },
        });
        let patch = Patch::Merge(&theirs);
        let patched = leases
            .patch("test-lease", &PatchParams::default(), &patch)
            .await;
        let patched = patched.expect("another client adds its label and annotation");
        let renewed_before = renew_time(&patched);

        // A few renewals' time: one may conflict with the patch above and be retried.
        let deadline = Instant::now() + 3 * RETRY_PERIOD;
        let renewed = loop {
            let lease = leases.get("test-lease").await.expect("the Lease");
            if renew_time(&lease) > renewed_before {
                break lease;
            }
            assert!(Instant::now() < deadline, "not renewed: {lease:?}");
            sleep(Duration::from_millis(100)).await;
        };
        assert!(!*leadership.lost.borrow(), "the leadership was lost");
        let spec = renewed.spec.clone().unwrap_or_default();
        assert_eq!(spec.holder_identity.as_deref(), Some("me"));
        let labels = renewed.metadata.labels.clone().unwrap_or_default();
        let annotations = renewed.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(
            labels.get("example.com/team").map(String::as_str),
            Some("platform"),
            "the label was dropped: {:?}",
            renewed.metadata
        );
        assert_eq!(
            annotations.get("example.com/owner").map(String::as_str),
            Some("someone else"),
            "the annotation was dropped: {:?}",
            renewed.metadata
        );

        leadership.release().await;
        let released = leases.get("test-lease").await.expect("the Lease");
        let spec = released.spec.clone().unwrap_or_default();
        assert_eq!(spec.holder_identity, None, "not released");
        assert_eq!(released.metadata.labels, renewed.metadata.labels);
        assert_eq!(released.metadata.annotations, renewed.metadata.annotations);
    }

    fn renew_time(lease: &Lease) -> Option<Timestamp> {
        let spec = lease.spec.as_ref()?;
        spec.renew_time.as_ref().map(|time| time.0)
    }
}
