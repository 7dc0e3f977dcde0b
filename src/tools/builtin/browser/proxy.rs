//! The browser's one way out: an HTTP proxy on 127.0.0.1 that Chromium
//! sends every http and https connection through (`--proxy-server`). It
//! resolves the host itself, checks every address as `web_fetch`'s
//! resolver does (`[tools.web] allow_private`), and connects to an
//! address it checked: so a name that answers a public address to the
//! guard's lookup and a private one later (DNS rebinding) still cannot
//! reach a private one. Host approval happened before (`requests`).

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::requests::RequestGuard;
use crate::tools::web::guard::check_address;

/// A request head longer than this is refused.
const MAX_HEAD: usize = 64 * 1024;

/// Starts the proxy: its port, and the handle that stops it.
pub async fn start(guard: &Arc<RequestGuard>) -> Result<(u16, tokio::task::AbortHandle), String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot start the browser's proxy: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("the browser's proxy: {e}"))?
        .port();
    let expected: Arc<str> = proxy_authorization(guard.proxy_secret()).into();
    let guard = Arc::downgrade(guard);
    let task = tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Some(guard) = guard.upgrade() else {
                return;
            };
            let expected = expected.clone();
            tokio::spawn(async move {
                let allow_private = guard.allow_private();
                drop(guard);
                let _ = serve(client, allow_private, &expected).await;
            });
        }
    });
    Ok((port, task.abort_handle()))
}

/// The `Proxy-Authorization` value that opens the proxy: Basic, user
/// `egirl`, the browser's secret as the password (given to Chromium
/// through DevTools' `Fetch.authRequired`, `session`).
pub fn proxy_authorization(secret: &str) -> String {
    format!(
        "Basic {}",
        crate::images::base64(format!("egirl:{secret}").as_bytes())
    )
}

/// Whether `head` carries `expected` as its `Proxy-Authorization`
/// (compared in time that does not depend on where they differ).
fn authorized(head: &str, expected: &str) -> bool {
    head.split("\r\n").skip(1).any(|line| {
        let Some((name, value)) = line.split_once(':') else {
            return false;
        };
        let value = value.trim().as_bytes();
        name.trim().eq_ignore_ascii_case("proxy-authorization")
            && value.len() == expected.len()
            && value
                .iter()
                .zip(expected.as_bytes())
                .fold(0u8, |diff, (a, b)| diff | (a ^ b))
                == 0
    })
}

/// One connection: a CONNECT tunnel (https) or one plain-http request,
/// forwarded with `Connection: close`. Only a client that knows the
/// browser's secret is served: any process of the machine can connect to
/// 127.0.0.1, and an open proxy would be theirs too.
async fn serve(mut client: TcpStream, allow_private: bool, expected: &str) -> std::io::Result<()> {
    let (head, rest) = read_head(&mut client).await?;
    if !authorized(&head, expected) {
        return client
            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"egirl\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await;
    }
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (method, target, version) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or("HTTP/1.1"),
    );
    if method == "CONNECT" {
        let Some((host, port)) = split_host_port(target, 443) else {
            return refuse(&mut client).await;
        };
        let Ok(mut upstream) = connect_checked(&host, port, allow_private).await else {
            return refuse(&mut client).await;
        };
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
        upstream.write_all(&rest).await?;
        tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
        return Ok(());
    }
    let Ok(url) = url::Url::parse(target) else {
        return refuse(&mut client).await;
    };
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return refuse(&mut client).await;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let Ok(mut upstream) = connect_checked(&host, port, allow_private).await else {
        return refuse(&mut client).await;
    };
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut forwarded = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !matches!(
            name.as_str(),
            "connection" | "proxy-connection" | "keep-alive" | "proxy-authorization"
        ) {
            forwarded.push_str(line);
            forwarded.push_str("\r\n");
        }
    }
    // One request per connection: the next may be for another host.
    forwarded.push_str("Connection: close\r\n\r\n");
    upstream.write_all(forwarded.as_bytes()).await?;
    upstream.write_all(&rest).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

async fn refuse(client: &mut TcpStream) -> std::io::Result<()> {
    client
        .write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        .await
}

/// The request head (up to the blank line) and what came after it.
async fn read_head(client: &mut TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            return Ok((head, buf[end + 4..].to_vec()));
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::Error::other("request head too long"));
        }
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::Error::other("closed before its head ended"));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// `host:port` (IPv6 in brackets) of a CONNECT line.
fn split_host_port(target: &str, default: u16) -> Option<(String, u16)> {
    let (host, port) = match target.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') => (h, p.parse().ok()?),
        _ => (target, default),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then(|| (host.to_string(), port))
}

/// Resolves `host`, refuses it whole when any address is not allowed, and
/// connects to one of the addresses checked.
async fn connect_checked(host: &str, port: u16, allow_private: bool) -> Result<TcpStream, String> {
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| e.to_string())?
        .collect();
    for address in &addresses {
        check_address(host, address.ip(), allow_private)?;
    }
    for address in &addresses {
        if let Ok(stream) = TcpStream::connect(address).await {
            return Ok(stream);
        }
    }
    Err(format!("cannot connect to {host}:{port}"))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::split_host_port;
    use crate::tools::builtin::browser::requests::RequestGuard;

    /// What the proxy on `port` answers to `request`.
    async fn ask(port: u16, request: String) -> String {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[tokio::test]
    async fn private_addresses_are_refused_unless_allowed_and_requests_go_through() {
        let site = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let site_port = site.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = site.accept().await {
                let mut buf = [0u8; 2048];
                let n = conn.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                let line = head.lines().next().unwrap_or("").to_string();
                let body = format!(
                    "saw {line}; close={}; key={}",
                    head.contains("Connection: close"),
                    head.contains("Proxy-Authorization")
                );
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(reply.as_bytes()).await;
            }
        });
        let get = |key: &str| {
            format!(
                "GET http://127.0.0.1:{site_port}/x?q=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nProxy-Connection: keep-alive\r\n{key}\r\n"
            )
        };
        let connect = |key: &str| format!("CONNECT 127.0.0.1:{site_port} HTTP/1.1\r\n{key}\r\n");
        let header = |secret: &str| {
            format!(
                "Proxy-Authorization: {}\r\n",
                super::proxy_authorization(secret)
            )
        };

        // No call yet: private addresses are not allowed.
        let guard: Arc<RequestGuard> = Arc::default();
        let (port, proxy) = super::start(&guard).await.unwrap();
        let key = header(guard.proxy_secret());
        assert!(ask(port, get(&key)).await.starts_with("HTTP/1.1 403"));
        assert!(ask(port, connect(&key)).await.starts_with("HTTP/1.1 403"));
        proxy.abort();

        let dir = tempfile::tempdir().unwrap();
        let mut ctx = crate::tools::approval::test_context(dir.path(), Default::default());
        let mut config = crate::config::Config::default();
        config.tools.web.allow_private = true;
        ctx.config = Arc::new(config);
        let guard: Arc<RequestGuard> = Arc::default();
        guard.set_call(Some(&ctx));
        let (port, _proxy) = super::start(&guard).await.unwrap();
        let key = header(guard.proxy_secret());
        let answer = ask(port, get(&key)).await;
        assert!(
            answer.ends_with("saw GET /x?q=1 HTTP/1.1; close=true; key=false"),
            "{answer}"
        );
        // Any other process of the machine: without the browser's secret,
        // no request and no tunnel.
        for stranger in ["", &header("guess")] {
            assert!(ask(port, get(stranger)).await.starts_with("HTTP/1.1 407"));
            assert!(
                ask(port, connect(stranger))
                    .await
                    .starts_with("HTTP/1.1 407")
            );
        }
    }

    #[test]
    fn connect_targets_split_with_ipv6_in_brackets() {
        assert_eq!(
            split_host_port("example.com:443", 443),
            Some(("example.com".into(), 443))
        );
        assert_eq!(
            split_host_port("[::1]:8443", 443),
            Some(("::1".into(), 8443))
        );
        assert_eq!(
            split_host_port("example.com", 443),
            Some(("example.com".into(), 443))
        );
    }
}
