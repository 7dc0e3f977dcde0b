//! Resuming after a cut connection, against the real daemon.
