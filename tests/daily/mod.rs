//! Issue 31: the daily driver's controls, through the real binary (PTY,
//! headless `-m`/`--json`, `egirl approvals`, `egirl stats`) against the
//! scripted fake model and the fake remote APIs.

mod approvals;
mod budget;
mod hooks;
mod model;
mod notify;
mod session_routing;
