//! Hardening: rules.
