//! The fixed prompt and the tool catalog.

mod catalog;
