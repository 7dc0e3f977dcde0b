//! One guarded GET: http(s) only, at most `MAX_REDIRECTS` hops, each hop's
//! address checked (IP literals here, names in the resolver the client
//! connects with) and its host approved, the body read up to
//! `[tools.web] max_bytes` and cut there, text only.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, LOCATION};

use super::guard::{GuardedResolver, check_address, find_refusal};
use super::human_bytes;
use crate::tools::ToolContext;

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// A text response, read up to the cap.
pub struct Page {
    /// Where the last hop landed.
    pub url: url::Url,
    pub status: u16,
    /// The media type, lowercase, without parameters ("" when absent).
    pub media_type: String,
    pub body: Vec<u8>,
    /// Set when the body went on past the cap: its announced length, if any.
    pub cut: Option<Option<u64>>,
}

/// Fetches `raw`; Err is one line for the model.
pub async fn get(raw: &str, ctx: &ToolContext) -> Result<Page, String> {
    let mut url = url::Url::parse(raw.trim()).map_err(|e| format!("invalid URL `{raw}`: {e}"))?;
    let timeout = ctx.config.tools.web.timeout.0;
    let client = reqwest::Client::builder()
        .dns_resolver(Arc::new(GuardedResolver {
            allow_private: ctx.config.tools.web.allow_private,
        }))
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would resolve the name itself, past the guard.
        .no_proxy()
        .timeout(timeout)
        .user_agent(super::user_agent())
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let mut approved: HashSet<String> = HashSet::new();
    for _ in 0..=MAX_REDIRECTS {
        let host = check_target(&url, ctx)?;
        if !approved.contains(&host) {
            ctx.approver.check_host(url.as_str(), &host, ctx).await?;
            approved.insert(host);
        }
        let response = tokio::select! {
            r = client.get(url.clone()).send() => r.map_err(|e| describe(&e, &url, timeout))?,
            _ = ctx.cancel.cancelled() => return Err("interrupted".into()),
        };
        if response.status().is_redirection()
            && let Some(location) = response.headers().get(LOCATION)
        {
            let location = location
                .to_str()
                .map_err(|_| format!("{url} redirected to an unreadable Location"))?;
            url = url
                .join(location)
                .map_err(|e| format!("{url} redirected to an invalid URL `{location}`: {e}"))?;
            continue;
        }
        return tokio::select! {
            page = read(response, url.clone(), ctx.config.tools.web.max_bytes, timeout) => page,
            _ = ctx.cancel.cancelled() => Err("interrupted".into()),
        };
    }
    Err(format!(
        "too many redirects (more than {MAX_REDIRECTS}); the last one pointed to {url}"
    ))
}

/// The host of `url` when it may be requested: http(s), a host, and no
/// literal non-public address unless allowed.
fn check_target(url: &url::Url, ctx: &ToolContext) -> Result<String, String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "only http and https URLs can be fetched, not `{}:`",
            url.scheme()
        ));
    }
    let host = match url.host() {
        Some(url::Host::Domain(d)) => d.to_ascii_lowercase(),
        Some(url::Host::Ipv4(ip)) => check_literal(ip.into(), ctx)?,
        Some(url::Host::Ipv6(ip)) => check_literal(ip.into(), ctx)?,
        None => return Err(format!("`{url}` has no host")),
    };
    Ok(host)
}

/// An IP literal, refused before any connection when it is not public.
fn check_literal(ip: std::net::IpAddr, ctx: &ToolContext) -> Result<String, String> {
    let host = ip.to_string();
    check_address(&host, ip, ctx.config.tools.web.allow_private)?;
    Ok(host)
}

/// Reads a text body up to `max` bytes; binary types are refused unread.
async fn read(
    response: reqwest::Response,
    url: url::Url,
    max: usize,
    timeout: Duration,
) -> Result<Page, String> {
    let status = response.status().as_u16();
    let media_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let announced = response.content_length();
    if !media_type.is_empty() && !is_text(&media_type) {
        return Err(binary_refusal(&url, &media_type, announced));
    }
    let mut body: Vec<u8> = Vec::new();
    let mut cut = None;
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| describe(&e, &url, timeout))?;
        let room = max.saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut = Some(announced);
            // Dropping the stream closes the connection: the rest is never read.
            break;
        }
        body.extend_from_slice(&chunk);
    }
    // No type given: a NUL near the start says it is not text.
    if media_type.is_empty() && body.iter().take(1024).any(|b| *b == 0) {
        return Err(binary_refusal(
            &url,
            "application/octet-stream",
            announced.or(cut.is_none().then_some(body.len() as u64)),
        ));
    }
    Ok(Page {
        url,
        status,
        media_type,
        body,
        cut,
    })
}

/// Types read as text; everything else is refused with its type and size.
fn is_text(media_type: &str) -> bool {
    media_type.starts_with("text/")
        || media_type.ends_with("+json")
        || media_type.ends_with("+xml")
        || matches!(
            media_type,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-sh"
                | "application/sql"
                | "application/graphql"
        )
}

fn binary_refusal(url: &url::Url, media_type: &str, size: Option<u64>) -> String {
    let size = size.map_or("unknown size".to_string(), human_bytes);
    format!("refused: {url} is {media_type} ({size}), not text; web_fetch reads HTML and text only")
}

/// A request error as one line: the guard's refusal, a timeout, or the cause.
fn describe(err: &reqwest::Error, url: &url::Url, timeout: Duration) -> String {
    if let Some(refused) = find_refusal(err) {
        return refused;
    }
    if err.is_timeout() {
        return format!(
            "timed out after {}s fetching {url} ([tools.web] timeout)",
            timeout.as_secs_f64()
        );
    }
    let mut why = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        why = format!("{why}: {s}");
        source = s.source();
    }
    format!("could not fetch {url}: {why}")
}
