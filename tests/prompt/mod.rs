//! The fixed prompt and the tool catalog.

mod catalog;
mod catalog_tui;
