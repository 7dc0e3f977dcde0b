//! Hardening: protected.
