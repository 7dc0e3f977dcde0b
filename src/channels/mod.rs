//! Surfaces: each a thin adapter over the protocol; none knows another.

pub mod discord;
pub mod headless;
pub mod telegram;
pub mod tui;
mod utf16;
pub mod webhook;
