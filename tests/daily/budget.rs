//! Spend caps on remote calls (see tests/daily/mod.rs).
