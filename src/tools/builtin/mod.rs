//! The built-in tools, one per file.

pub mod browser;
pub mod create_skill;
pub mod cron_add;
pub mod cron_list;
pub mod cron_remove;
pub mod delegate;
pub mod delegate_claude_code;
pub mod edit_file;
pub mod exec;
pub mod glob;
pub mod list_skills;
pub mod memory_get;
pub mod memory_save;
pub mod memory_search;
pub mod read_file;
pub mod read_image;
pub mod web_fetch;
pub mod web_search;
pub mod write_file;
