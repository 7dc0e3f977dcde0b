//! This machine's own addresses: a service bound to 0.0.0.0 (or `::`)
//! answers on every interface's address, a public one included, so
//! reaching it by its LAN or eth0 address is reaching localhost. Read
//! afresh at every check (one `getifaddrs` call, microseconds): interfaces
//! come and go (VPNs, Wi-Fi, containers), and a stale list would let a new
//! address through.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An address of this machine and the interface that holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnAddress {
    pub ip: IpAddr,
    pub interface: String,
}

/// The addresses of this machine's interfaces other than loopback (the
/// loopback range is refused as such). Empty when they cannot be read:
/// the special-purpose table still holds then.
pub fn own_addresses() -> Vec<OwnAddress> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list it allocates, or
    // fails and leaves it untouched; it is freed below exactly once.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        tracing::warn!(
            "cannot list this machine's addresses: {}",
            std::io::Error::last_os_error()
        );
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut cur = list;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let entry = unsafe { &*cur };
        cur = entry.ifa_next;
        if entry.ifa_flags & libc::IFF_LOOPBACK as libc::c_uint != 0 {
            continue;
        }
        // SAFETY: ifa_addr is null or points to a sockaddr of the family it names.
        let Some(ip) = (unsafe { address(entry.ifa_addr) }) else {
            continue;
        };
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let interface = unsafe { std::ffi::CStr::from_ptr(entry.ifa_name) }
            .to_string_lossy()
            .into_owned();
        out.push(OwnAddress { ip, interface });
    }
    // SAFETY: `list` came from getifaddrs and nothing points into it any more.
    unsafe { libc::freeifaddrs(list) };
    out
}

/// The IP address in a socket address of family AF_INET or AF_INET6.
///
/// # Safety
/// `addr` is null or points to a valid sockaddr whose size matches its family.
unsafe fn address(addr: *const libc::sockaddr) -> Option<IpAddr> {
    if addr.is_null() {
        return None;
    }
    // SAFETY: non-null and valid per the contract above.
    match i32::from(unsafe { (*addr).sa_family }) {
        libc::AF_INET => {
            // SAFETY: the family says this is a sockaddr_in.
            let sin = unsafe { &*(addr as *const libc::sockaddr_in) };
            Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                sin.sin_addr.s_addr,
            ))))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this is a sockaddr_in6.
            let sin6 = unsafe { &*(addr as *const libc::sockaddr_in6) };
            Some(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)))
        }
        _ => None,
    }
}

/// The interface holding `ip` among `own`; an IPv4-mapped IPv6 address
/// reaches the IPv4 one.
pub fn holder(ip: IpAddr, own: &[OwnAddress]) -> Option<&OwnAddress> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    own.iter().find(|a| a.ip == ip)
}
