//! The protocol on a socket through the real binary: the daemon serves,
//! clients attach (docs/protocol.md).

mod backpressure;
mod daemon;
mod replay;
mod wire;
