//! The Agent Client Protocol, both ways.

mod agent;
mod agent_files;
mod delegate;
mod delegate_fs;
mod delegate_modal;
mod session_mcp;
