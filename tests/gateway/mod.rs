//! The protocol on a socket through the real binary: the daemon serves,
//! clients attach (docs/protocol.md).

mod attach;
pub(crate) mod attach_rig;
mod backpressure;
pub mod daemon;
mod headless;
mod hostile;
mod measure;
mod owner;
mod pairing;
mod race;
mod replay;
pub(crate) mod restart;
mod sandbox;
mod sandboxed;
pub(crate) mod tcp;
mod wire;
