//! The built-in tools, one per file.

pub mod edit_file;
pub mod exec;
pub mod glob;
pub mod memory_get;
pub mod memory_save;
pub mod memory_search;
pub mod read_file;
pub mod write_file;
