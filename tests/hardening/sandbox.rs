//! Hardening: sandbox.
