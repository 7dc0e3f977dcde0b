//! Cron jobs as data: the store in `.egirl/cron.json`, a job and its
//! schedule. The cron tools edit it and the cron driver
//! (`surfaces::cron`) runs it; neither imports the other.

pub mod schedule;
pub mod store;

pub use schedule::Schedule;
pub use store::{CronStore, Job};
