//! Agents in the TUI (agents-tui).
