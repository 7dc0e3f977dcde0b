use std::net::IpAddr;

use super::*;
use crate::tools::web::interfaces::own_addresses;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The refusal's reason with no interface of this machine in the way.
fn why(s: &str) -> Option<String> {
    blocked_among(ip(s), &[])
}

#[test]
fn every_special_purpose_range_is_refused_with_its_kind() {
    for (addr, kind) in [
        ("0.0.0.0", "reserved"),
        ("0.1.2.3", "reserved"),
        ("10.1.2.3", "private"),
        ("100.64.0.1", "private"),
        ("100.127.255.254", "private"),
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("169.254.169.254", "link-local"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.0.0.8", "reserved"),
        ("192.0.2.1", "documentation"),
        ("192.88.99.1", "reserved"),
        ("192.168.1.1", "private"),
        ("198.18.0.1", "reserved"),
        ("198.19.255.255", "reserved"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.9", "documentation"),
        ("224.0.0.251", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.255", "broadcast"),
        ("::", "reserved"),
        ("::1", "loopback"),
        ("64:ff9b:1::a00:1", "private"),
        ("100::1", "reserved"),
        ("2001::1", "reserved"),
        ("2001:2::1", "reserved"),
        ("2001:10::1", "reserved"),
        ("2001:db8::1", "documentation"),
        ("2001:db8:ffff::1", "documentation"),
        ("3fff::1", "documentation"),
        ("5f00::1", "reserved"),
        ("fc00::1", "private"),
        ("fd00::2", "private"),
        ("fe80::1", "link-local"),
        ("fec0::1", "private"),
        ("ff02::1", "multicast"),
        // Outside 2000::/3 is not global unicast.
        ("4000::1", "reserved"),
        ("::2:0:0:1", "reserved"),
    ] {
        let why = why(addr).unwrap_or_else(|| panic!("{addr} passed"));
        assert!(
            why.starts_with(&format!("a {kind} address (")),
            "{addr}: {why}"
        );
    }
}

#[test]
fn an_ipv4_address_inside_ipv6_is_judged_as_ipv4() {
    for (addr, kind) in [
        // IPv4-mapped.
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:192.0.2.1", "documentation"),
        // NAT64 well-known prefix.
        ("64:ff9b::10.0.0.1", "private"),
        ("64:ff9b::203.0.113.5", "documentation"),
        // 6to4: 2002:AABB:CCDD:: carries AA.BB.CC.DD.
        ("2002:7f00:1::", "loopback"),
        ("2002:c0a8:101::1", "private"),
        // IPv4-compatible (deprecated).
        ("::10.0.0.1", "private"),
        ("::127.0.0.1", "loopback"),
    ] {
        let why = why(addr).unwrap_or_else(|| panic!("{addr} passed"));
        assert!(
            why.starts_with(&format!("a {kind} address (")),
            "{addr}: {why}"
        );
    }
    // A public IPv4 address inside them is public.
    for addr in ["::ffff:1.1.1.1", "64:ff9b::1.1.1.1", "2002:101:101::1"] {
        assert_eq!(why(addr), None, "{addr}");
    }
}

#[test]
fn range_edges_are_exact() {
    for addr in [
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "172.15.255.255",
        "172.32.0.1",
        "192.0.1.255",
        "192.0.3.0",
        "198.17.255.255",
        "198.20.0.0",
        "198.51.99.255",
        "198.51.101.0",
        "203.0.112.255",
        "203.0.114.0",
        "223.255.255.255",
        "2001:200::1",
        "2001:db9::1",
        "2003::1",
        "3fff:1000::1",
    ] {
        assert_eq!(why(addr), None, "{addr}");
    }
}

#[test]
fn public_addresses_pass() {
    for addr in [
        "93.184.216.34",
        "1.1.1.1",
        "8.8.8.8",
        "2606:4700::1111",
        "2a00:1450:4001::1",
    ] {
        assert_eq!(why(addr), None, "{addr}");
    }
}

#[test]
fn this_machines_own_addresses_are_refused_even_when_public() {
    let own = vec![
        OwnAddress {
            ip: ip("93.184.216.34"),
            interface: "eth0".into(),
        },
        OwnAddress {
            ip: ip("2606:4700::1111"),
            interface: "wlan0".into(),
        },
    ];
    for addr in ["93.184.216.34", "::ffff:93.184.216.34", "2606:4700::1111"] {
        let why = blocked_among(ip(addr), &own).unwrap_or_else(|| panic!("{addr} passed"));
        assert!(
            why.starts_with("an address of this machine ("),
            "{addr}: {why}"
        );
    }
    assert_eq!(blocked_among(ip("1.1.1.1"), &own), None);
}

#[test]
fn every_address_of_this_machines_interfaces_is_refused() {
    // Read from the kernel, as the check reads them.
    for own in own_addresses() {
        let refused = check_address("h", own.ip, false).unwrap_err();
        assert!(refused.contains(&own.ip.to_string()), "{refused}");
        assert!(check_address("h", own.ip, true).is_ok());
    }
}

#[test]
fn the_refusal_is_one_line_naming_the_host_address_and_setting() {
    let refused = check_address("docs.example", ip("192.0.2.1"), false).unwrap_err();
    assert_eq!(
        refused,
        "refused: docs.example is 192.0.2.1, a documentation address (192.0.2.0/24, RFC 5737); \
         egirl's web tools reach public addresses only ([tools.web] allow_private = false)"
    );
    let literal = check_address("192.0.2.1", ip("192.0.2.1"), false).unwrap_err();
    assert!(
        literal.starts_with("refused: 192.0.2.1 is a documentation"),
        "{literal}"
    );
    assert!(check_address("docs.example", ip("192.0.2.1"), true).is_ok());
}
