//! What bounds an approved command (docs/security.md), replayed against the
//! real binary (headless, scripted fake model) for each hole once found there.

mod attack;
mod bounds;
mod protected;
mod rules;
mod sandbox;
mod secrets;
mod trust;
