//! Filesystem helpers that know nothing of egirl: atomic writes, opening
//! only regular files, advisory locks. A leaf: it imports no other module
//! of the crate, so every layer may use it.

pub mod atomic;
pub mod lockfile;
pub mod regular_file;
