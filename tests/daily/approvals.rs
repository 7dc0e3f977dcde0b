//! `/approvals`, `egirl approvals list|revoke` (see tests/daily/mod.rs).
