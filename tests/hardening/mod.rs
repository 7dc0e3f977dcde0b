//! What bounds an approved command (docs/security.md), replayed against the
//! real binary (headless, scripted fake model) for each hole once found there.

mod attack;
mod bounds;
mod history;
mod protected;
mod redteam_rules;
pub(crate) mod redteam_sandbox;
mod root;
mod rules;
pub(crate) mod sandbox;
mod saved_rules;
mod secrets;
mod server_env;
mod trust;
