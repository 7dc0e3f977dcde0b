//! The browser tool against the real Chromium and a local test site.
