//! The web UI (issue 27): its HTTP routes, auth and a real headless Chromium.
mod http;
mod queries;
mod redteam;
