//! Memory. The markdown files are the source of truth; this module writes
//! the daily log (`memory/YYYY-MM-DD.md`, append only).

pub mod daily;
