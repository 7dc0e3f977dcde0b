//! `/api`: the browser signs in with a pairing code (`egirl pair` prints
//! it) and out again. Both change state: the request must come from a
//! page of this listener (`Origin`), and carry JSON (`Content-Type:
//! application/json`, which no plain HTML form can send). The device's
//! token goes only into the HttpOnly cookie, never into the body.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;

use super::super::auth::PairRefused;
use super::super::tcp_accept::Peer;
use super::{Web, cookie};
use crate::protocol::wire::PairRequest;

/// The most a pairing request's body holds (a code and a device name).
const MAX_BODY: usize = 4096;
/// How long its body may take to arrive: one that trickles in a byte at
/// a time must not hold a place of the listener (its head is bounded by
/// `tcp_accept::HEAD_WITHIN`).
const BODY_WITHIN: Duration = Duration::from_secs(10);

pub(super) fn router() -> Router<Arc<Web>> {
    Router::new()
        .route("/api/pair", post(pair))
        .route("/api/signout", post(signout))
}

/// `{"error": "one line"}` with `status`.
fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

/// `POST /api/pair` `{"code", "device"}`: 200 `{"device": id}` and the
/// cookie; 401 a wrong or expired code, 429 over the pairing limit.
async fn pair(
    State(web): State<Arc<Web>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let origin = match web.hosts.check(&headers, true) {
        Ok(origin) => origin.unwrap_or_default(),
        Err(why) => return error(StatusCode::FORBIDDEN, why.message()),
    };
    if !is_json(&headers) {
        let why = "send the request as JSON (Content-Type: application/json)";
        return error(StatusCode::UNSUPPORTED_MEDIA_TYPE, why);
    }
    // Read only now, once the request may pair, and bounded in size and time.
    let body = match tokio::time::timeout(BODY_WITHIN, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(body)) => body,
        Ok(Err(_)) => return error(StatusCode::PAYLOAD_TOO_LARGE, "the body is too large"),
        Err(_) => return error(StatusCode::REQUEST_TIMEOUT, "the body came too slowly"),
    };
    let request: PairRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(_) => {
            let why = r#"the body is {"code": "1234-5678", "device": "a name"}"#;
            return error(StatusCode::BAD_REQUEST, why);
        }
    };
    let paired = match web.auth.pair_device(Some(peer.ip()), &request) {
        Ok(paired) => paired,
        Err(PairRefused::Limited(why)) => return error(StatusCode::TOO_MANY_REQUESTS, &why),
        Err(PairRefused::Code(why)) => return error(StatusCode::UNAUTHORIZED, &why),
        Err(PairRefused::Failed(why)) => {
            tracing::error!("gateway: pairing a browser failed: {why}");
            let why = "the device could not be saved (see the daemon's log)";
            return error(StatusCode::INTERNAL_SERVER_ERROR, why);
        }
    };
    let Some(set) = cookie::set(&paired.token, origin.starts_with("https://")) else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the token is not a cookie",
        );
    };
    let mut response = axum::Json(json!({ "device": paired.device })).into_response();
    response.headers_mut().insert(header::SET_COOKIE, set);
    response
}

/// `POST /api/signout`: revokes this browser's device and clears its
/// cookie (204); 401 when the cookie admits no device.
async fn signout(State(web): State<Arc<Web>>, headers: HeaderMap) -> Response {
    if let Err(why) = web.hosts.check(&headers, true) {
        return error(StatusCode::FORBIDDEN, why.message());
    }
    let mut response = match web.cookie_admits(&headers) {
        Some(Ok(who)) => match web.auth.revoke(&who) {
            Ok(_) => {
                tracing::info!(?who, "gateway: a browser signed out");
                StatusCode::NO_CONTENT.into_response()
            }
            Err(why) => {
                tracing::error!("gateway: signing out failed: {why}");
                let why = "the device could not be revoked (see the daemon's log)";
                error(StatusCode::INTERNAL_SERVER_ERROR, why)
            }
        },
        _ => error(StatusCode::UNAUTHORIZED, "this browser is not signed in"),
    };
    response
        .headers_mut()
        .insert(header::SET_COOKIE, cookie::clear());
    response
}
