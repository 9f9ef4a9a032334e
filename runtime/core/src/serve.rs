//! The manager's HTTP endpoints: where they listen, and serving them until shutdown.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::pin::pin;
use std::time::Duration;

use axum::Router;
use axum::serve::Listener;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use socket2::{Domain, Socket, Type};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

/// How long a client has to send a request's headers, from the moment its connection is ready
/// for one (accepted, or idle after a response): controller-runtime's servers'
/// `ReadHeaderTimeout` (32 s). A connection that sends nothing, or half a request, is closed
/// then, and so is one left idle between requests (controller-runtime closes those after 90 s):
/// without it, a few thousand such connections hold the manager's memory and file descriptors,
/// and with them its webhooks and its Lease.
pub(crate) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);

/// Where an endpoint listens, as the `--*-bind-address` flags of kubebuilder projects say it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindAddress {
    /// `"0"`: not served.
    Disabled,
    /// `":8080"`: every interface, IPv6 and IPv4, as Go's `net.Listen` reads it.
    AnyHost(u16),
    /// `"127.0.0.1:8080"`, `"[::1]:8080"`, `"localhost:8080"`.
    Host(SocketAddr),
}

impl std::str::FromStr for BindAddress {
    type Err = String;

    fn from_str(address: &str) -> Result<Self, String> {
        if address == "0" {
            return Ok(Self::Disabled);
        }
        if let Some(port) = address.strip_prefix(':') {
            let port = port
                .parse()
                .map_err(|_| format!("'{port}' is not a port number"))?;
            return Ok(Self::AnyHost(port));
        }
        let resolved = address
            .to_socket_addrs()
            .map_err(|error| format!("{error} (expected [host]:port, or 0 to disable)"))?;
        resolved
            .into_iter()
            .next()
            .map(Self::Host)
            .ok_or_else(|| format!("{address} resolves to no address"))
    }
}

/// Binds `address`, so that a port in use fails the start-up; `None` when disabled.
pub(crate) async fn bind(address: &BindAddress) -> io::Result<Option<TcpListener>> {
    let listener = match address {
        BindAddress::Disabled => return Ok(None),
        BindAddress::AnyHost(port) => any_host(*port, &[dual_stack, ipv4_only])?,
        BindAddress::Host(address) => std::net::TcpListener::bind(address)?,
    };
    listener.set_nonblocking(true)?;
    TcpListener::from_std(listener).map(Some)
}

/// A listener on every interface from the first of `binders` that works: IPv6-only and
/// IPv6-first clusters probe the pod's IPv6 address, IPv4 ones its IPv4 address, and a node
/// with IPv6 disabled has no `::`.
fn any_host(
    port: u16,
    binders: &[fn(u16) -> io::Result<std::net::TcpListener>],
) -> io::Result<std::net::TcpListener> {
    let mut error = io::Error::other("no way to bind");
    for bind in binders {
        match bind(port) {
            Ok(listener) => return Ok(listener),
            // Another family will not free a port that is taken.
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => return Err(e),
            Err(e) => error = e,
        }
    }
    Err(error)
}

/// `[::]:port` taking IPv4 connections too (as IPv4-mapped addresses), whatever the system's
/// default (`net.ipv6.bindv6only`).
fn dual_stack(port: u16) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::IPV6, Type::STREAM, None)?;
    socket.set_only_v6(false)?;
    socket.set_reuse_address(true)?;
    socket.bind(&SocketAddr::from((Ipv6Addr::UNSPECIFIED, port)).into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

/// `0.0.0.0:port`, where IPv6 is not available.
fn ipv4_only(port: u16) -> io::Result<std::net::TcpListener> {
    std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::UNSPECIFIED, port)))
}

/// Serves `router` on `listener` (plain TCP or TLS) over HTTP/1.1 until `shutdown`, letting
/// requests under way finish; each connection must send its request headers within 32 seconds,
/// as controller-runtime's servers ask (`ReadHeaderTimeout`).
pub async fn serve<L>(
    what: &'static str,
    listener: L,
    router: Router,
    shutdown: CancellationToken,
) -> io::Result<()>
where
    L: Listener,
    L::Addr: std::fmt::Debug,
{
    serve_with(what, listener, router, shutdown, HEADER_READ_TIMEOUT).await
}

/// [`serve`] with another header timeout (the tests' shorter one). hyper, not `axum::serve`:
/// axum runs hyper without a timer, and hyper applies no timeout without one.
async fn serve_with<L>(
    what: &'static str,
    mut listener: L,
    router: Router,
    shutdown: CancellationToken,
    header_timeout: Duration,
) -> io::Result<()>
where
    L: Listener,
    L::Addr: std::fmt::Debug,
{
    // Log the bound address, not the requested one: port 0 means any free port.
    if let Ok(address) = listener.local_addr() {
        info!(?address, "serving {what}");
    }
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let mut connections = JoinSet::new();
    loop {
        let (io, peer) = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        // Finished connections' tasks, so that the set does not grow with every one served.
        while connections.try_join_next().is_some() {}
        let connection =
            http.serve_connection(TokioIo::new(io), TowerToHyperService::new(router.clone()));
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            let mut connection = pin!(connection);
            let served = tokio::select! {
                served = connection.as_mut() => served,
                () = shutdown.cancelled() => {
                    // The request under way, if any, is answered; then the connection closes.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            // A client that went away or timed out: nothing the server can do about it.
            if let Err(error) = served {
                debug!(%error, ?peer, "connection closed");
            }
        });
    }
    while connections.join_next().await.is_some() {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::net::TcpStream;

    use axum::routing::get;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// Serves "ok" on / with `header_timeout`, until the returned token is cancelled.
    async fn server(header_timeout: Duration) -> (SocketAddr, CancellationToken) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let shutdown = CancellationToken::new();
        let router = Router::new().route("/", get(|| async { "ok" }));
        tokio::spawn(serve_with(
            "test",
            listener,
            router,
            shutdown.clone(),
            header_timeout,
        ));
        (address, shutdown)
    }

    /// Whether the server closed `stream` within `within`: a read that ends (or fails) instead
    /// of waiting.
    async fn closed(stream: &mut tokio::net::TcpStream, within: Duration) -> bool {
        let mut buffer = [0u8; 256];
        loop {
            match tokio::time::timeout(within, stream.read(&mut buffer)).await {
                Err(_) => return false,
                Ok(Ok(0) | Err(_)) => return true,
                // A response (e.g. 408) before the close.
                Ok(Ok(_)) => continue,
            }
        }
    }

    /// Hundreds of connections that send half a request and wait are all closed once the
    /// header timeout has passed, and the server still answers a whole request meanwhile and
    /// after. (`axum::serve` kept every one of them open for good.)
    #[tokio::test]
    async fn connections_that_send_half_a_request_are_closed() {
        let timeout = Duration::from_secs(1);
        let (address, shutdown) = server(timeout).await;
        let mut stalled = Vec::new();
        for _ in 0..300 {
            let mut stream = tokio::net::TcpStream::connect(address)
                .await
                .expect("connect");
            stream
                .write_all(b"GET / HTTP/1.1\r\nHost: manager\r\nX-Half: ")
                .await
                .expect("write half a request");
            stalled.push(stream);
        }
        assert!(get_ok(address).await, "a whole request is answered");
        tokio::time::sleep(timeout).await;
        for (i, stream) in stalled.iter_mut().enumerate() {
            assert!(
                closed(stream, Duration::from_secs(5)).await,
                "connection {i} is still open past the header timeout"
            );
        }
        assert!(get_ok(address).await, "the server still answers");
        shutdown.cancel();
    }

    /// A connection that sends nothing at all, and one left idle after a response, are closed
    /// too.
    #[tokio::test]
    async fn silent_and_idle_connections_are_closed() {
        let timeout = Duration::from_secs(1);
        let (address, shutdown) = server(timeout).await;
        let mut silent = tokio::net::TcpStream::connect(address)
            .await
            .expect("connect");
        let mut idle = tokio::net::TcpStream::connect(address)
            .await
            .expect("connect");
        idle.write_all(b"GET / HTTP/1.1\r\nHost: manager\r\n\r\n")
            .await
            .expect("a request");
        let mut response = [0u8; 512];
        let read = idle.read(&mut response).await.expect("the response");
        assert!(response[..read].starts_with(b"HTTP/1.1 200"));
        for stream in [&mut silent, &mut idle] {
            assert!(closed(stream, timeout * 5).await, "still open");
        }
        shutdown.cancel();
    }

    /// GET / on a new connection answers 200.
    async fn get_ok(address: SocketAddr) -> bool {
        let mut stream = tokio::net::TcpStream::connect(address)
            .await
            .expect("connect");
        stream
            .write_all(b"GET / HTTP/1.1\r\nHost: manager\r\nConnection: close\r\n\r\n")
            .await
            .expect("a request");
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response).await;
        response.starts_with(b"HTTP/1.1 200")
    }

    #[test]
    fn bind_addresses_are_read_as_in_go() {
        let parse = |address: &str| address.parse::<BindAddress>();
        assert_eq!(parse(":8080"), Ok(BindAddress::AnyHost(8080)));
        assert_eq!(
            parse("127.0.0.1:9"),
            Ok(BindAddress::Host(SocketAddr::from(([127, 0, 0, 1], 9))))
        );
        assert_eq!(parse("0"), Ok(BindAddress::Disabled));
        assert!(parse("8080").is_err());
        assert!(parse(":http").is_err());
    }

    /// Whether this machine can listen on IPv6 at all (containers often cannot).
    fn has_ipv6() -> bool {
        std::net::TcpListener::bind("[::1]:0").is_ok()
    }

    #[test]
    fn any_host_takes_ipv4_and_ipv6_connections() {
        let listener = any_host(0, &[dual_stack, ipv4_only]).expect("bind");
        let port = listener.local_addr().expect("address").port();
        TcpStream::connect(("127.0.0.1", port)).expect("IPv4 connection");
        if has_ipv6() {
            assert!(listener.local_addr().expect("address").is_ipv6());
            TcpStream::connect(("::1", port)).expect("IPv6 connection");
        }
    }

    #[test]
    fn any_host_falls_back_to_ipv4_without_ipv6() {
        fn no_ipv6(_: u16) -> io::Result<std::net::TcpListener> {
            Err(io::Error::from(io::ErrorKind::AddrNotAvailable))
        }
        let listener = any_host(0, &[no_ipv6, ipv4_only]).expect("bind");
        let address = listener.local_addr().expect("address");
        assert!(address.is_ipv4());
        TcpStream::connect(("127.0.0.1", address.port())).expect("IPv4 connection");
    }

    #[test]
    fn a_port_in_use_is_an_error_whatever_the_family() {
        let taken = std::net::TcpListener::bind("0.0.0.0:0").expect("bind");
        let port = taken.local_addr().expect("address").port();
        let error = any_host(port, &[dual_stack, ipv4_only]).expect_err("port in use");
        assert_eq!(error.kind(), io::ErrorKind::AddrInUse);
    }
}
