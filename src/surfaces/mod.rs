//! Surfaces: each a thin adapter over the protocol; none knows another.

pub mod acp;
pub mod attachments;
pub mod clock;
pub mod cron;
pub mod discord;
pub mod gateway;
pub mod headless;
pub mod heartbeat;
pub mod notify_command;
pub mod routing;
pub mod telegram;
pub mod tui;
mod utf16;
pub mod webhook;
