//! `[[hooks]]`: the user's scripts before and after tools (see tests/daily/mod.rs).
