//! Hardening: secrets.
