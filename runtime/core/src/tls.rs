//! HTTPS for the metrics server (:8443) and the webhook server (:9443).
//!
//! - [`CertReloader`] serves the current certificate, and re-reads `tls.crt`/`tls.key` every
//!   [`RELOAD_INTERVAL`] (controller-runtime's certwatcher polls every 10 s too): cert-manager
//!   rotates the Secret mounted in the pod, and the manager picks the new pair up without a
//!   restart. A pair that does not parse, or whose key is not the certificate's, keeps the old
//!   one.
//! - [`self_signed`]: what controller-runtime serves when no certificate is given.
//! - [`TlsListener`]: an [`axum::serve::Listener`], so that `axum::serve` and its graceful
//!   shutdown work unchanged over TLS. Handshakes run in tasks of their own, with a timeout, so
//!   a client that never finishes one cannot stall the others.
//!
//! rustls with ring, as kube's client uses: no other TLS stack is built.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::sync::{CancellationToken, DropGuard};
use tracing::{debug, info, warn};

/// How often a certificate read from files is checked for a new one.
pub const RELOAD_INTERVAL: Duration = Duration::from_secs(10);
/// How long a client may take to complete the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a serving certificate cannot be used (more cases may come: match it with a `_` arm).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("{} holds no PEM {what}: {source}", path.display())]
    Pem {
        path: PathBuf,
        what: &'static str,
        source: rustls::pki_types::pem::Error,
    },
    #[error("{} holds no certificate", .0.display())]
    NoCertificate(PathBuf),
    #[error("the certificate and the key do not make a usable pair: {0}")]
    Pair(#[from] rustls::Error),
    #[error("cannot generate a self-signed certificate: {0}")]
    Generate(#[from] rcgen::Error),
}

/// The crypto provider of every TLS config the runtime builds: ring, named explicitly, so that
/// a dependency enabling rustls' aws-lc-rs too cannot make the process default ambiguous.
///
/// ring is the provider kube's client uses by default (its `ring` feature, which this runtime
/// keeps), so the binary holds one TLS stack, the smaller and quicker to build of the two.
/// rustls 0.23.48 deprecated ring's provider because it offers no post-quantum key exchange
/// (X25519MLKEM768, which only aws-lc-rs has); rustls itself still builds it, with the same
/// allowance, when ring is the crate feature chosen. To have that key exchange on the webhook
/// and metrics servers, switch kube's and this crate's rustls to aws-lc-rs and return
/// `rustls::crypto::aws_lc_rs::default_provider()` here.
#[allow(deprecated)]
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server config serving `resolver`'s certificate over HTTP/1.1 only (kubebuilder turns
/// HTTP/2 off by default since the HTTP/2 "rapid reset" vulnerabilities of 2023).
pub fn server_config(resolver: Arc<dyn ResolvesServerCert>) -> Result<ServerConfig, TlsError> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// A self-signed certificate for `localhost` and 127.0.0.1, as controller-runtime's metrics
/// server makes when it is given none: TLS still protects the tokens a scrape sends.
pub fn self_signed() -> Result<CertifiedKey, TlsError> {
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    let rcgen::CertifiedKey { cert, signing_key } = rcgen::generate_simple_self_signed(names)?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(signing_key.serialize_der()));
    Ok(CertifiedKey::from_der(
        vec![cert.der().clone()],
        key,
        &provider(),
    )?)
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_owned(),
        source,
    })
}

/// The certificate chain and key in `cert_pem` and `key_pem`, checked to belong together.
fn parse_pair(
    cert_pem: &[u8],
    cert_path: &Path,
    key_pem: &[u8],
    key_path: &Path,
) -> Result<CertifiedKey, TlsError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| TlsError::Pem {
            path: cert_path.to_owned(),
            what: "certificate",
            source,
        })?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate(cert_path.to_owned()));
    }
    // PKCS#1, PKCS#8 or SEC1: cert-manager writes PKCS#1 for RSA keys by default.
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|source| TlsError::Pem {
        path: key_path.to_owned(),
        what: "private key",
        source,
    })?;
    // `from_der` also checks that the key is the certificate's.
    Ok(CertifiedKey::from_der(chain, key, &provider())?)
}

/// Serves one certificate, swapped in place when its files change.
#[derive(Debug)]
pub struct CertReloader {
    current: RwLock<Arc<CertifiedKey>>,
    source: Option<Source>,
}

#[derive(Debug)]
struct Source {
    cert_path: PathBuf,
    key_path: PathBuf,
    /// The PEM bytes last loaded: reading the same bytes again changes nothing.
    loaded: RwLock<(Vec<u8>, Vec<u8>)>,
}

impl CertReloader {
    /// A certificate that never changes (the self-signed one).
    pub fn fixed(key: CertifiedKey) -> Arc<Self> {
        Arc::new(Self {
            current: RwLock::new(Arc::new(key)),
            source: None,
        })
    }

    /// The pair in `cert_path` and `key_path`, loaded now: an unusable pair fails the start-up,
    /// as in controller-runtime.
    pub fn from_files(cert_path: PathBuf, key_path: PathBuf) -> Result<Arc<Self>, TlsError> {
        let (cert_pem, key_pem) = (read(&cert_path)?, read(&key_path)?);
        let key = parse_pair(&cert_pem, &cert_path, &key_pem, &key_path)?;
        Ok(Arc::new(Self {
            current: RwLock::new(Arc::new(key)),
            source: Some(Source {
                cert_path,
                key_path,
                loaded: RwLock::new((cert_pem, key_pem)),
            }),
        }))
    }

    /// Re-reads the files; returns whether a new certificate is now served. An unusable pair
    /// keeps the current certificate, and is returned as the error.
    pub fn reload(&self) -> Result<bool, TlsError> {
        let Some(source) = &self.source else {
            return Ok(false);
        };
        let (cert_pem, key_pem) = (read(&source.cert_path)?, read(&source.key_path)?);
        {
            let loaded = source.loaded.read().unwrap_or_else(PoisonError::into_inner);
            if loaded.0 == cert_pem && loaded.1 == key_pem {
                return Ok(false);
            }
        }
        let key = parse_pair(&cert_pem, &source.cert_path, &key_pem, &source.key_path)?;
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(key);
        *source
            .loaded
            .write()
            .unwrap_or_else(PoisonError::into_inner) = (cert_pem, key_pem);
        Ok(true)
    }

    /// Checks the files every `interval` until `shutdown`. Polling rather than inotify: it
    /// sees the atomic `..data` symlink swap of Secret volumes, for two small reads a time.
    pub async fn watch(self: Arc<Self>, interval: Duration, shutdown: CancellationToken) {
        if self.source.is_none() {
            return;
        }
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await; // the first tick is now: the files were just loaded
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = ticks.tick() => {}
            }
            let this = Arc::clone(&self);
            match tokio::task::spawn_blocking(move || this.reload()).await {
                Ok(Ok(true)) => info!("serving a new TLS certificate"),
                Ok(Ok(false)) => {}
                Ok(Err(error)) => warn!(%error, "keeping the current TLS certificate"),
                Err(error) => warn!(%error, "the certificate reload failed"),
            }
        }
    }
}

impl ResolvesServerCert for CertReloader {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        Some(Arc::clone(&current))
    }
}

/// The certificate of a server: files in `dir` (reloaded when they change), or self-signed.
pub fn certificate(
    dir: Option<&Path>,
    cert_name: &str,
    key_name: &str,
) -> Result<Arc<CertReloader>, TlsError> {
    match dir {
        Some(dir) => CertReloader::from_files(dir.join(cert_name), dir.join(key_name)),
        None => Ok(CertReloader::fixed(self_signed()?)),
    }
}

/// A TLS listener for `axum::serve`.
pub struct TlsListener {
    local_addr: SocketAddr,
    handshaken: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    /// Stops the accepting task when the listener, so the server, is dropped.
    _stop: DropGuard,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, config: ServerConfig) -> io::Result<Self> {
        let local_addr = tcp.local_addr()?;
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let (sender, handshaken) = mpsc::channel(64);
        let stop = CancellationToken::new();
        tokio::spawn(accept(tcp, acceptor, sender, stop.clone()));
        Ok(Self {
            local_addr,
            handshaken,
            _stop: stop.drop_guard(),
        })
    }
}

/// Accepts connections and hands them over once their handshake is done.
async fn accept(
    tcp: TcpListener,
    acceptor: TlsAcceptor,
    sender: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = tcp.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors and the like: back off rather than spin, as axum's
                // own listener does.
                warn!(%error, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let (acceptor, sender) = (acceptor.clone(), sender.clone());
        tokio::spawn(async move {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                // An error means the server is gone, and the connection with it.
                Ok(Ok(tls)) => drop(sender.send((tls, peer)).await),
                Ok(Err(error)) => debug!(%error, %peer, "TLS handshake failed"),
                Err(_) => debug!(%peer, "TLS handshake timed out"),
            }
        });
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.handshaken.recv().await {
            Some(accepted) => accepted,
            // The accepting task only ends with `self`.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local_addr)
    }
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::routing::get;

    use super::*;
    use crate::testing::https_get;

    /// Serves "ok" on /healthz over TLS with `resolver`'s certificate, until `shutdown`.
    async fn serve(resolver: Arc<CertReloader>, shutdown: &CancellationToken) -> SocketAddr {
        let tcp = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let listener =
            TlsListener::new(tcp, server_config(resolver).expect("config")).expect("listener");
        let address = axum::serve::Listener::local_addr(&listener).expect("address");
        let router = Router::new().route("/healthz", get(|| async { "ok" }));
        let server = axum::serve(listener, router);
        tokio::spawn(
            server
                .with_graceful_shutdown(shutdown.clone().cancelled_owned())
                .into_future(),
        );
        address
    }

    /// A pair as a Secret volume holds it, in PEM, and the certificate's DER.
    fn pem_pair() -> (String, String, CertificateDer<'static>) {
        let names = vec!["localhost".to_owned()];
        let rcgen::CertifiedKey { cert, signing_key } =
            rcgen::generate_simple_self_signed(names).expect("rcgen");
        (cert.pem(), signing_key.serialize_pem(), cert.der().clone())
    }

    /// Writes the pair the way a Secret volume changes: new files, then renames.
    fn write_pair(dir: &Path, cert: &str, key: &str) {
        for (name, content) in [("tls.crt", cert), ("tls.key", key)] {
            let tmp = dir.join(format!(".{name}.tmp"));
            std::fs::write(&tmp, content).expect("write");
            std::fs::rename(&tmp, dir.join(name)).expect("rename");
        }
    }

    #[tokio::test]
    async fn a_self_signed_certificate_is_served() {
        let key = self_signed().expect("self-signed");
        let cert = key.cert[0].clone();
        let shutdown = CancellationToken::new();
        let address = serve(CertReloader::fixed(key), &shutdown).await;
        let answer = https_get(address, "/healthz", &cert, None)
            .await
            .expect("GET");
        assert_eq!((answer.status, answer.body.as_str()), (200, "ok"));
        shutdown.cancel();
    }

    #[tokio::test]
    async fn a_rotated_certificate_is_served_and_a_broken_pair_ignored() {
        let dir = std::env::temp_dir().join(format!("rbuilder-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let ((cert_a, key_a, der_a), (cert_b, key_b, der_b)) = (pem_pair(), pem_pair());
        write_pair(&dir, &cert_a, &key_a);
        let resolver =
            CertReloader::from_files(dir.join("tls.crt"), dir.join("tls.key")).expect("load");
        let shutdown = CancellationToken::new();
        let address = serve(Arc::clone(&resolver), &shutdown).await;
        let served = https_get(address, "/healthz", &der_a, None)
            .await
            .expect("GET");
        assert_eq!(served.server_cert, der_a);

        // Half rotated: B's certificate with A's key. A stays.
        write_pair(&dir, &cert_b, &key_a);
        assert!(matches!(resolver.reload(), Err(TlsError::Pair(_))));
        let served = https_get(address, "/healthz", &der_a, None)
            .await
            .expect("GET");
        assert_eq!(served.server_cert, der_a);

        // Rotated: new connections get B, without a restart.
        write_pair(&dir, &cert_b, &key_b);
        assert!(resolver.reload().expect("reload"));
        let served = https_get(address, "/healthz", &der_b, None)
            .await
            .expect("GET");
        assert_eq!((served.status, served.server_cert), (200, der_b));
        shutdown.cancel();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_stalled_handshake_does_not_block_other_clients() {
        let key = self_signed().expect("self-signed");
        let cert = key.cert[0].clone();
        let shutdown = CancellationToken::new();
        let address = serve(CertReloader::fixed(key), &shutdown).await;
        // Connects, and never says hello.
        let _stalled = TcpStream::connect(address).await.expect("connect");
        let answer = tokio::time::timeout(
            Duration::from_secs(5),
            https_get(address, "/healthz", &cert, None),
        )
        .await
        .expect("served despite the stalled connection")
        .expect("GET");
        assert_eq!(answer.status, 200);
        shutdown.cancel();
    }
}
