//! The special-purpose address ranges egirl's web tools never reach: the
//! IANA IPv4 and IPv6 special-purpose registries (RFC 6890 and the RFCs
//! that added to them), each range once, with why. An IPv6 address that
//! carries an IPv4 one (mapped, NAT64, 6to4, the old compatible form) is
//! judged by the IPv4 address it reaches. Ranges the registries mark as
//! globally reachable anycast services (AS112, AMT) are left out: they
//! are public servers like any other.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One special-purpose range: its network, prefix length, and what it is
/// (the word the refusal uses: "a loopback address").
pub struct Range {
    pub net: IpAddr,
    pub len: u8,
    pub kind: &'static str,
    /// The range as written in the registry, for the refusal.
    pub name: &'static str,
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8, kind: &'static str, name: &'static str) -> Range {
    Range {
        net: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        len,
        kind,
        name,
    }
}

/// IPv4, most specific first (the first match names the refusal).
pub const SPECIAL_V4: &[Range] = &[
    // Limited broadcast (RFC 919): every host on the local link.
    v4(255, 255, 255, 255, 32, "broadcast", "255.255.255.255/32"),
    // "This network" (RFC 791): 0.0.0.0 connects to the machine itself.
    v4(0, 0, 0, 0, 8, "reserved", "0.0.0.0/8, this network"),
    // Private networks (RFC 1918).
    v4(10, 0, 0, 0, 8, "private", "10.0.0.0/8"),
    // Shared address space (RFC 6598): carrier-grade NAT, someone's private network.
    v4(
        100,
        64,
        0,
        0,
        10,
        "private",
        "100.64.0.0/10, shared address space",
    ),
    // Loopback (RFC 1122): this machine.
    v4(127, 0, 0, 0, 8, "loopback", "127.0.0.0/8"),
    // Link-local (RFC 3927): the cloud metadata service (169.254.169.254) lives here.
    v4(169, 254, 0, 0, 16, "link-local", "169.254.0.0/16"),
    // Private networks (RFC 1918).
    v4(172, 16, 0, 0, 12, "private", "172.16.0.0/12"),
    // IETF protocol assignments (RFC 6890): not hosts on the internet.
    v4(
        192,
        0,
        0,
        0,
        24,
        "reserved",
        "192.0.0.0/24, IETF protocol assignments",
    ),
    // Documentation, TEST-NET-1 (RFC 5737): never routed; a lab may use it as a LAN.
    v4(192, 0, 2, 0, 24, "documentation", "192.0.2.0/24, RFC 5737"),
    // 6to4 relay anycast (RFC 7526, deprecated): a tunnel, not a site.
    v4(192, 88, 99, 0, 24, "reserved", "192.88.99.0/24, 6to4 relay"),
    // Private networks (RFC 1918).
    v4(192, 168, 0, 0, 16, "private", "192.168.0.0/16"),
    // Benchmarking (RFC 2544): test networks, often a lab's LAN.
    v4(198, 18, 0, 0, 15, "reserved", "198.18.0.0/15, benchmarking"),
    // Documentation, TEST-NET-2 (RFC 5737).
    v4(
        198,
        51,
        100,
        0,
        24,
        "documentation",
        "198.51.100.0/24, RFC 5737",
    ),
    // Documentation, TEST-NET-3 (RFC 5737).
    v4(
        203,
        0,
        113,
        0,
        24,
        "documentation",
        "203.0.113.0/24, RFC 5737",
    ),
    // Multicast (RFC 5771): groups, not a host.
    v4(224, 0, 0, 0, 4, "multicast", "224.0.0.0/4"),
    // Reserved for future use (RFC 1112).
    v4(240, 0, 0, 0, 4, "reserved", "240.0.0.0/4"),
];

const fn v6(segments: [u16; 8], len: u8, kind: &'static str, name: &'static str) -> Range {
    let [a, b, c, d, e, f, g, h] = segments;
    Range {
        net: IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)),
        len,
        kind,
        name,
    }
}

/// IPv6, most specific first. The ranges that embed an IPv4 address
/// (`::ffff:0:0/96`, `64:ff9b::/96`, `2002::/16`, `::/96`) are not here:
/// `embedded_v4` hands their IPv4 address to the IPv4 table.
pub const SPECIAL_V6: &[Range] = &[
    // Unspecified (RFC 4291): connects to the machine itself.
    v6(
        [0, 0, 0, 0, 0, 0, 0, 0],
        128,
        "reserved",
        "::/128, unspecified",
    ),
    // Loopback (RFC 4291).
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback", "::1/128"),
    // Local-use NAT64 (RFC 8215): a private network's translator.
    v6(
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        "private",
        "64:ff9b:1::/48, local-use NAT64",
    ),
    // Discard-only (RFC 6666): a black hole.
    v6(
        [0x100, 0, 0, 0, 0, 0, 0, 0],
        64,
        "reserved",
        "100::/64, discard-only",
    ),
    // Documentation (RFC 3849).
    v6(
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        "documentation",
        "2001:db8::/32, RFC 3849",
    ),
    // IETF protocol assignments (RFC 2928): Teredo (2001::/32), benchmarking
    // (2001:2::/48), ORCHID (2001:10::/28, 2001:20::/28): not plain hosts.
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        23,
        "reserved",
        "2001::/23, IETF protocol assignments",
    ),
    // Documentation (RFC 9637).
    v6(
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        "documentation",
        "3fff::/20, RFC 9637",
    ),
    // Segment routing SIDs (RFC 9602): inside an operator's network.
    v6(
        [0x5f00, 0, 0, 0, 0, 0, 0, 0],
        16,
        "reserved",
        "5f00::/16, segment routing",
    ),
    // Unique local (RFC 4193): IPv6's private networks.
    v6(
        [0xfc00, 0, 0, 0, 0, 0, 0, 0],
        7,
        "private",
        "fc00::/7, unique local",
    ),
    // Link-local (RFC 4291).
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "link-local", "fe80::/10"),
    // Site-local (RFC 3879, deprecated): private like unique local.
    v6(
        [0xfec0, 0, 0, 0, 0, 0, 0, 0],
        10,
        "private",
        "fec0::/10, site-local",
    ),
    // Multicast (RFC 4291).
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "multicast", "ff00::/8"),
];

/// Global unicast (RFC 4291, 2000::/3): everything outside it is
/// reserved by IANA, so it is refused whole rather than range by range.
const GLOBAL_UNICAST_V6: Range = v6(
    [0x2000, 0, 0, 0, 0, 0, 0, 0],
    3,
    "reserved",
    "outside 2000::/3, global unicast",
);

/// The special-purpose range `ip` falls in, if any (an embedded IPv4
/// address judged as IPv4).
pub fn special(ip: IpAddr) -> Option<&'static Range> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => special_v4(v4),
            None => special_v6(v6),
        },
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static Range> {
    SPECIAL_V4.iter().find(|r| r.contains(IpAddr::V4(ip)))
}

fn special_v6(ip: Ipv6Addr) -> Option<&'static Range> {
    let ip = IpAddr::V6(ip);
    SPECIAL_V6
        .iter()
        .find(|r| r.contains(ip))
        .or_else(|| (!GLOBAL_UNICAST_V6.contains(ip)).then_some(&GLOBAL_UNICAST_V6))
}

impl Range {
    /// Whether `ip` (of the same family) is inside this range.
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.len)).unwrap_or(0);
                u32::from(ip) & mask == u32::from(net) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.len))
                    .unwrap_or(0);
                u128::from(ip) & mask == u128::from(net) & mask
            }
            _ => false,
        }
    }
}

/// The IPv4 address an IPv6 one reaches: IPv4-mapped (`::ffff:a.b.c.d`,
/// RFC 4291), NAT64 (`64:ff9b::a.b.c.d`, RFC 6052), 6to4
/// (`2002:AABB:CCDD::`, RFC 3056) and IPv4-compatible (`::a.b.c.d`,
/// deprecated; not `::` or `::1`).
pub fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let seg = ip.segments();
    let from = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(from(seg[6], seg[7]));
    }
    if seg[0] == 0x2002 {
        return Some(from(seg[1], seg[2]));
    }
    if seg[..6] == [0; 6] && u32::from(from(seg[6], seg[7])) > 1 {
        return Some(from(seg[6], seg[7]));
    }
    None
}
