//! The web page, served by the gateway's TCP listener beside `/ws`: `GET
//! /` (the app when the browser's device cookie admits it, else the
//! sign-in page), `GET /assets/<name>` (embedded files), `POST /api/pair`
//! and `POST /api/signout` (`pair`). The page is a client of the gateway
//! protocol like the attached TUI: everything it shows comes over `/ws`.
//!
//! Every request is checked by [`host::HostRules`] (its `Host` one of this
//! listener's, its `Origin` a page of it), and every response carries the
//! headers of [`secure_headers`]: a strict CSP (no inline script, nothing
//! from another origin), no framing, no sniffing, no referrer.

pub mod assets;
pub mod cookie;
pub mod host;
mod pair;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::admission::Admitted;
use super::auth::GatewayAuth;
use host::{Foreign, HostRules};

/// The page's Content-Security-Policy: its own scripts, styles and
/// socket only; no inline script or style, no frame, no remote anything.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; manifest-src 'self'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// What the page's routes share with the listener.
pub struct Web {
    pub auth: Arc<GatewayAuth>,
    pub hosts: HostRules,
}

impl Web {
    /// Whom the request's cookie admits (the first of its `egirl_device`
    /// cookies that admits: see [`cookie::tokens`]): None without one, Err
    /// when none holds a token still (or ever) admitted.
    pub fn cookie_admits(&self, headers: &HeaderMap) -> Option<Result<Admitted, String>> {
        let mut refused = None;
        for token in cookie::tokens(headers) {
            match self.auth.check(token) {
                Ok(who) => return Some(Ok(who)),
                Err(why) => refused = Some(Err(why)),
            }
        }
        refused
    }
}

/// The page's routes (the listener adds `/ws`).
pub fn router(web: Arc<Web>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/assets/{name}", get(asset))
        .merge(pair::router())
        .fallback(not_found)
        .with_state(web)
}

/// A refused request: 403 with the reason as one line.
pub fn forbidden(why: Foreign) -> Response {
    (StatusCode::FORBIDDEN, format!("{}\n", why.message())).into_response()
}

/// `GET /`: the app for an admitted browser, else the sign-in page (a
/// cookie that no longer admits, a revoked device's, is cleared).
async fn page(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(why) = web.hosts.check(&headers, false) {
        return forbidden(why);
    }
    let (asset, clear) = match web.cookie_admits(&headers) {
        Some(Ok(_)) => (assets::index(), false),
        None if !web.auth.auth_on() => (assets::index(), false),
        None => (assets::signin(), false),
        Some(Err(_)) => (assets::signin(), true),
    };
    let mut response = serve(asset);
    if clear {
        response
            .headers_mut()
            .insert(header::SET_COOKIE, cookie::clear());
    }
    response
}

/// `GET /assets/<name>`: a file of the page (the pages themselves only
/// at `/`).
async fn asset(
    State(web): State<Arc<Web>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Err(why) = web.hosts.check(&headers, false) {
        return forbidden(why);
    }
    match assets::find(&name).filter(|a| !a.name.ends_with(".html")) {
        Some(asset) => serve(asset),
        None => not_found_response(),
    }
}

async fn not_found(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(why) = web.hosts.check(&headers, false) {
        return forbidden(why);
    }
    not_found_response()
}

fn not_found_response() -> Response {
    (StatusCode::NOT_FOUND, "not found\n").into_response()
}

fn serve(asset: &assets::Asset) -> Response {
    ([(header::CONTENT_TYPE, asset.content_type)], asset.bytes).into_response()
}

/// Adds the security headers to every response of the listener; pages
/// and `/api` are never stored (a signed-in page must not outlive its
/// sign-out in a cache), assets are revalidated.
pub async fn secure_headers(request: Request, next: Next) -> Response {
    let is_asset = request.uri().path().starts_with("/assets/");
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let set = |headers: &mut HeaderMap, name: HeaderName, value: &'static str| {
        headers.insert(name, HeaderValue::from_static(value));
    };
    set(headers, header::CONTENT_SECURITY_POLICY, CSP);
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    let cache = if is_asset { "no-cache" } else { "no-store" };
    set(headers, header::CACHE_CONTROL, cache);
    response
}
