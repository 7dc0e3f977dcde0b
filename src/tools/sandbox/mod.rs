//! What bounds an approved command and the file tools: the protected paths
//! they share (here), and the OS sandbox every `exec` runs in.

pub mod env;
pub mod protected;

pub use protected::ProtectedPaths;
