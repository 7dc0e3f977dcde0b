//! Which addresses egirl's own web requests may reach. Checked on the
//! addresses a name resolves to, in the resolver the HTTP client connects
//! with (so the address checked is the address connected to: no DNS
//! rebinding between check and connect), and on IP literals in a URL, at
//! every redirect hop.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why an address is refused, or None for a public one.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        // 100.64/10 is carrier-grade NAT: someone's private network too.
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local")
    } else if a == 0
        || ip.is_broadcast()
        || ip.is_multicast()
        || a >= 240
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
    {
        // This network, multicast, reserved, IETF protocol and benchmark ranges.
        Some("reserved")
    } else {
        None
    }
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    // An IPv4 address inside IPv6 (mapped, compatible, NAT64) is judged as IPv4.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4);
    }
    let seg = ip.segments();
    if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2..6] == [0, 0, 0, 0] {
        let [a, b] = seg[6].to_be_bytes();
        let [c, d] = seg[7].to_be_bytes();
        return non_public_v4(Ipv4Addr::new(a, b, c, d));
    }
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some("reserved")
    } else if seg[0] & 0xfe00 == 0xfc00 || seg[0] & 0xffc0 == 0xfec0 {
        // Unique local (fc00::/7) and the old site-local (fec0::/10).
        Some("private")
    } else if seg[0] & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if seg[..6] == [0, 0, 0, 0, 0, 0] {
        // IPv4-compatible (::a.b.c.d), deprecated: judged as its IPv4.
        let [a, b] = seg[6].to_be_bytes();
        let [c, d] = seg[7].to_be_bytes();
        non_public_v4(Ipv4Addr::new(a, b, c, d))
    } else {
        None
    }
}

/// The refusal the model reads.
pub fn refusal(host: &str, ip: IpAddr, kind: &str) -> String {
    format!(
        "refused: {host} is {ip}, a {kind} address; egirl's web tools reach public addresses only ([tools.web] allow_private = false)"
    )
}

/// A refusal from the resolver, found again in reqwest's error chain.
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// The HTTP client's resolver: the system's, then every address checked.
/// A name with any non-public address is refused whole (a rebinding name
/// may hand out a public and a private one).
pub struct GuardedResolver {
    pub allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private
                && let Some((ip, kind)) = addrs
                    .iter()
                    .find_map(|a| non_public(a.ip()).map(|k| (a.ip(), k)))
            {
                let err: Box<dyn std::error::Error + Send + Sync> =
                    Box::new(Refused(refusal(&host, ip, kind)));
                return Err(err);
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The resolver's refusal somewhere in `err`'s sources, if that is why it failed.
pub fn find_refusal(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(refused) = e.downcast_ref::<Refused>() {
            return Some(refused.0.clone());
        }
        cur = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<&'static str> {
        non_public(s.parse().unwrap())
    }

    #[test]
    fn private_loopback_and_link_local_are_refused() {
        for (ip, expected) in [
            ("127.0.0.1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "private"),
            ("169.254.169.254", "link-local"),
            ("0.0.0.0", "reserved"),
            ("::1", "loopback"),
            ("fd00::1", "private"),
            ("fe80::1", "link-local"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
            ("64:ff9b::10.0.0.1", "private"),
            ("::", "reserved"),
        ] {
            assert_eq!(kind(ip), Some(expected), "{ip}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700::1111", "172.32.0.1"] {
            assert_eq!(kind(ip), None, "{ip}");
        }
    }
}
