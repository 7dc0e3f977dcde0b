//! Every request the browser makes, judged before it leaves: http(s)
//! only; the host's addresses (an IP literal, or every address the name
//! resolves to) checked by `web_fetch`'s guard (`tools::web::guard`,
//! `[tools.web] allow_private`); the host approved as `web_fetch`'s are
//! (`Approver::check_host`: `fetch`, `allow_domains`, grants, else ask).
//! A request made between tool calls (a page's timer) cannot ask anyone:
//! it gets hosts already approved only.
//!
//! The connection itself goes through `proxy`, which resolves and checks
//! the name again and connects to the address it checked: a name that
//! changes its answer between the two lookups (DNS rebinding) gains nothing.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Mutex;

use crate::config::WebFetchPolicy;
use crate::tools::ToolContext;
use crate::tools::web::guard::check_address;

/// Refusals kept for the next tool output, at most.
const MAX_REFUSALS: usize = 8;

/// The judge of one browser's requests.
#[derive(Default)]
pub struct RequestGuard {
    /// The context of the call running now, if any.
    call: Mutex<Option<ToolContext>>,
    /// The config of the last call (between calls: what still applies).
    last: Mutex<Option<ToolContext>>,
    /// Hosts approved in this browser's life.
    approved: Mutex<HashSet<String>>,
    /// Hosts refused during the call running now (asked once per call).
    denied: Mutex<HashSet<String>>,
    /// One question at a time: a page's twenty requests to a new host ask once.
    asking: tokio::sync::Mutex<()>,
    /// What was refused since the last tool output.
    refusals: Mutex<Vec<String>>,
    /// The password of this browser's proxy (`proxy`): drawn once from
    /// the OS's random source, known only to egirl and, through
    /// DevTools, to this browser.
    proxy_secret: std::sync::OnceLock<String>,
}

impl RequestGuard {
    /// A tool call begins (`Some`) or ends (`None`).
    pub fn set_call(&self, ctx: Option<&ToolContext>) {
        if let Some(ctx) = ctx {
            if let Ok(mut last) = self.last.lock() {
                *last = Some(ctx.clone());
            }
            if let Ok(mut denied) = self.denied.lock() {
                denied.clear();
            }
        }
        if let Ok(mut call) = self.call.lock() {
            *call = ctx.cloned();
        }
    }

    /// The password this browser gives its proxy.
    pub fn proxy_secret(&self) -> &str {
        self.proxy_secret
            .get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
    }

    /// `[tools.web] allow_private` as the last call's config says it.
    pub fn allow_private(&self) -> bool {
        self.last
            .lock()
            .ok()
            .and_then(|c| c.as_ref().map(|c| c.config.tools.web.allow_private))
            .unwrap_or(false)
    }

    /// The refusals since the last call of this, oldest first.
    pub fn take_refusals(&self) -> Vec<String> {
        self.refusals
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default()
    }

    /// Ok when `url` may be requested; Err is the refusal (also kept for
    /// the next tool output).
    pub async fn judge(&self, url: &str) -> Result<(), String> {
        let verdict = self.verdict(url).await;
        if let Err(why) = &verdict
            && let Ok(mut refusals) = self.refusals.lock()
            && refusals.len() < MAX_REFUSALS
            && !refusals.contains(why)
        {
            refusals.push(why.clone());
        }
        verdict
    }

    async fn verdict(&self, raw: &str) -> Result<(), String> {
        let call = self.call.lock().ok().and_then(|c| c.clone());
        let ctx = match call.clone() {
            Some(ctx) => ctx,
            None => match self.last.lock().ok().and_then(|c| c.clone()) {
                Some(ctx) => ctx,
                None => return Err(format!("refused: {raw} (no call running)")),
            },
        };
        let url = url::Url::parse(raw).map_err(|e| format!("refused: invalid URL {raw}: {e}"))?;
        let host = checked_host(&url, ctx.config.tools.web.allow_private).await?;
        if self.approved.lock().is_ok_and(|a| a.contains(&host)) {
            return Ok(());
        }
        if self.denied.lock().is_ok_and(|d| d.contains(&host)) {
            return Err(format!("refused: {host} was not approved ({url})"));
        }
        let web = &ctx.config.tools.web;
        let without_asking = web.fetch == WebFetchPolicy::Allow || web.domain_allowed(&host);
        if call.is_none() && !without_asking {
            return Err(format!(
                "refused: {url}: {host} is not approved, and nobody can be asked between browser calls"
            ));
        }
        let _one_at_a_time = self.asking.lock().await;
        if self.approved.lock().is_ok_and(|a| a.contains(&host)) {
            return Ok(());
        }
        match ctx.approver.check_host(url.as_str(), &host, &ctx).await {
            Ok(_) => {
                if let Ok(mut approved) = self.approved.lock() {
                    approved.insert(host);
                }
                Ok(())
            }
            Err(refusal) => {
                if let Ok(mut denied) = self.denied.lock() {
                    denied.insert(host.clone());
                }
                Err(format!("refused: {url}: {}", refusal_text(refusal)))
            }
        }
    }
}

fn refusal_text(refusal: crate::tools::approval::Refusal) -> String {
    String::from(refusal)
}

/// The host of `url` when its scheme and addresses may be reached.
pub async fn checked_host(url: &url::Url, allow_private: bool) -> Result<String, String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "refused: {url}: the browser opens http and https URLs only"
        ));
    }
    let (host, literal): (String, Option<IpAddr>) = match url.host() {
        Some(url::Host::Domain(d)) => (d.trim_end_matches('.').to_ascii_lowercase(), None),
        Some(url::Host::Ipv4(ip)) => (ip.to_string(), Some(ip.into())),
        Some(url::Host::Ipv6(ip)) => (ip.to_string(), Some(ip.into())),
        None => return Err(format!("refused: {url} has no host")),
    };
    if allow_private {
        return Ok(host);
    }
    let addresses: Vec<IpAddr> = match literal {
        Some(ip) => vec![ip],
        None => tokio::net::lookup_host((host.as_str(), 0))
            .await
            .map_err(|e| format!("refused: {url}: cannot resolve {host}: {e}"))?
            .map(|a| a.ip())
            .collect(),
    };
    // A name with any non-public address is refused whole, as web_fetch's
    // resolver does (a rebinding name may hand out both).
    for ip in addresses {
        check_address(&host, ip, false).map_err(|why| format!("{why} ({url})"))?;
    }
    Ok(host)
}

#[cfg(test)]
mod tests {
    use super::checked_host;

    async fn check(url: &str, allow_private: bool) -> Result<String, String> {
        let url = url::Url::parse(url).unwrap();
        checked_host(&url, allow_private).await
    }

    #[tokio::test]
    async fn private_addresses_and_other_schemes_are_refused() {
        for private in [
            "http://127.0.0.1:8080/",
            "http://10.1.2.3/",
            "http://[::1]/",
            "http://169.254.169.254/latest",
            "http://localhost/",
        ] {
            let why = check(private, false).await.unwrap_err();
            assert!(why.starts_with("refused:"), "{private}: {why}");
            assert!(why.contains("allow_private"), "{private}: {why}");
            assert!(check(private, true).await.is_ok(), "{private}");
        }
        assert_eq!(
            check("https://93.184.215.14/x", false).await.as_deref(),
            Ok("93.184.215.14")
        );
        let why = check("ftp://example.com/", true).await.unwrap_err();
        assert!(why.contains("http and https URLs only"), "{why}");
    }
}
