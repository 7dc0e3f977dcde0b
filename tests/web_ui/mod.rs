//! The web UI (issue 27): its HTTP routes, auth and a real headless Chromium.
mod http;
mod queries;
mod redteam;

// The browser suite: a real headless Chromium over CDP (tests/support/cdp.rs)
// against `egirl serve` (rig.rs).
mod approvals;
mod browser;
mod cdp_check;
mod chat;
mod layout;
mod measure;
mod review;
mod rig;
mod screenshots;
