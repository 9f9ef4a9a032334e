//! The manager's HTTP endpoints: where they listen, and serving them until shutdown.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use axum::Router;
use socket2::{Domain, Socket, Type};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing::info;

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

/// Serves `router` on `listener` (plain TCP or TLS) until `shutdown`, letting requests under
/// way finish.
pub(crate) async fn serve<L>(
    what: &'static str,
    listener: L,
    router: Router,
    shutdown: CancellationToken,
) -> io::Result<()>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    // Log the bound address, not the requested one: port 0 means any free port.
    if let Ok(address) = listener.local_addr() {
        info!(?address, "serving {what}");
    }
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
}

#[cfg(test)]
mod tests {
    use std::net::TcpStream;

    use super::*;

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
