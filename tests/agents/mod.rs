//! Several agents in one process: bindings, isolation, surfaces.

mod bots;
mod isolation;
mod tui;
mod tui_stats;
