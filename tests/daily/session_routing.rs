//! A turn stays on the role that holds the session's cache (see tests/daily/mod.rs).
