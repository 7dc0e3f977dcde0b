mod compaction;
pub mod day;
mod memory;
mod serve;
mod server;
mod suite;
