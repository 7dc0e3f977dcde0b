//! egirl: a local-first personal AI agent.
//!
//! Surfaces (`channels/`) talk to the agent core (`agent/`) only through
//! `protocol`; dependencies flow one way: channels → agent → (tools,
//! providers, memory, sessions) → config.

pub mod agent;
pub mod bus;
pub mod channels;
pub mod cli;
pub mod config;
pub mod lockfile;
pub mod logging;
pub mod mcp;
pub mod memory;
pub mod print;
pub mod protocol;
pub mod providers;
pub mod regular_file;
pub mod routing;
pub mod scheduler;
pub mod sessions;
pub mod skills;
pub mod stop_signals;
pub mod tools;
pub mod tracking;
pub mod workspace;
