//! The full-screen TUI (docs/design.md §2): five panes and an input box.
//!
//! It talks to the core only through the protocol, over a
//! [`CoreLink`](crate::link::CoreLink): `Op`s out via `submit_with`,
//! `Event`s in from `subscribe()`, the same whether the core runs in this
//! process or in a daemon the TUI attached to (`link` shows which). The state
//! (`App`) is built from events and keys with no terminal, `layout` maps
//! an area to named rectangles, and `draw` renders the state read-only;
//! `runtime` owns the terminal and the frame scheduler.

pub mod agents;
pub mod app;
pub mod approval;
pub mod approval_rules;
#[cfg(test)]
mod approval_tests;
pub mod commands;
pub mod conversation;
pub mod draw;
pub mod driver;
pub mod feeds;
pub mod highlight;
pub mod input;
mod keys;
pub mod layout;
pub mod link;
pub mod markdown;
pub mod mcp;
pub mod meter;
pub mod models;
mod mouse;
pub mod notify;
pub mod panes;
mod pictures;
mod replay;
pub mod rewind;
pub mod runtime;
pub mod scheduler;
pub mod scroll;
pub mod search;
mod select;
pub mod sessions;
pub mod skills;
pub mod theme;
mod usage;
pub mod wrap;

pub use app::{App, AppOptions, Effect, Focus, Overlay};
pub use draw::{draw, render};
pub use layout::{LayoutParams, Pane, Rects, Side, layout};
pub use runtime::{TuiOptions, TuiOutcome, run};
pub use theme::Theme;
