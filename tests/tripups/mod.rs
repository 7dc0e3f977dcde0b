//! Issue 33: what a daily user trips over. One test (at least) per numbered
//! defect of the issue, through the real binary (PTY, headless `-m`/`--json`)
//! or the TUI's state rendered on ratatui's `TestBackend`; each failed on
//! the main branch before its fix.

mod cli_docs;
pub(crate) mod commands;
mod context;
mod render;
