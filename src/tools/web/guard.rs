//! Which addresses egirl's own web requests may reach. Checked on the
//! addresses a name resolves to, in the resolver the HTTP client connects
//! with (so the address checked is the address connected to: no DNS
//! rebinding between check and connect), and on IP literals in a URL, at
//! every redirect hop. Refused: every special-purpose range (`ranges`)
//! and every address of this machine's own interfaces (`interfaces`).
//! The browser tool reuses `check_address` and `GuardedResolver`.

use std::net::{IpAddr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::interfaces::{self, OwnAddress};
use super::ranges;

/// Why egirl's web tools may not reach `ip`, as the refusal says it ("a
/// loopback address (127.0.0.0/8)", "an address of this machine (eth0)");
/// None for a public address of another machine. The one check every web
/// tool makes on every address it would connect to.
pub fn blocked(ip: IpAddr) -> Option<String> {
    blocked_among(ip, &interfaces::own_addresses())
}

/// `blocked` against a list of this machine's addresses read once.
fn blocked_among(ip: IpAddr, own: &[OwnAddress]) -> Option<String> {
    if let Some(own) = interfaces::holder(ip, own) {
        return Some(format!("an address of this machine ({})", own.interface));
    }
    ranges::special(ip).map(|r| format!("a {} address ({})", r.kind, r.name))
}

/// Err with the refusal the model reads when `host` (resolved to `ip`)
/// may not be reached: `allow_private` (`[tools.web] allow_private`)
/// lets every address through.
pub fn check_address(host: &str, ip: IpAddr, allow_private: bool) -> Result<(), String> {
    match blocked(ip) {
        Some(why) if !allow_private => Err(refusal(host, ip, &why)),
        _ => Ok(()),
    }
}

/// The refusal the model reads: one line.
fn refusal(host: &str, ip: IpAddr, why: &str) -> String {
    let what = if host == ip.to_string() {
        format!("{host} is")
    } else {
        format!("{host} is {ip},")
    };
    format!(
        "refused: {what} {why}; egirl's web tools reach public addresses only ([tools.web] allow_private = false)"
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
            let own = if allow_private {
                Vec::new()
            } else {
                interfaces::own_addresses()
            };
            if !allow_private
                && let Some((ip, why)) = addrs
                    .iter()
                    .find_map(|a| blocked_among(a.ip(), &own).map(|w| (a.ip(), w)))
            {
                let err: Box<dyn std::error::Error + Send + Sync> =
                    Box::new(Refused(refusal(&host, ip, &why)));
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
#[path = "guard_tests.rs"]
mod tests;
