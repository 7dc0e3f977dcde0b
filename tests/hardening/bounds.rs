//! Hardening: bounds.
