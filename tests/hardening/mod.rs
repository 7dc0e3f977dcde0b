//! Issue 14: what bounds an approved command, replayed against the real
//! binary (headless, scripted fake model) where a finding was found there.

mod attack;
mod bounds;
mod protected;
mod rules;
mod sandbox;
mod secrets;
