//! The gateway: the protocol on a socket. The process that owns the core
//! serves it to other processes (an attached TUI, a script, the web page)
//! over `.egirl/egirl.sock` and, when configured, TCP + WebSocket. Every
//! connection is a client of the same core: it reads the core's events in
//! order, numbered, and sends ops as the in-process surfaces do.

pub mod admission;
pub mod auth;
