//! The Agent Client Protocol, both ways.

mod agent;
mod delegate;
mod delegate_fs;
mod delegate_modal;
