//! The Agent Client Protocol, both ways.

mod agent;
mod delegate;
