//! The web UI (issue 27): its HTTP routes, auth and a real headless Chromium.

// The browser suite: a real headless Chromium over CDP (tests/support/cdp.rs).
mod cdp_check;
