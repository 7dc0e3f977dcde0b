mod compaction;
pub mod day;
mod fleet;
mod fleet_run;
mod memory;
mod serve;
mod server;
mod suite;
