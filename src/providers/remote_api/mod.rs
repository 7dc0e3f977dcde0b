//! What the remote APIs (Anthropic, OpenAI, Azure) share: the HTTP
//! transport with its retries, and history made acceptable to them. Kept
//! apart from `remote`, which builds the providers, so each provider file
//! imports this and `remote` imports the providers, never the reverse.

pub(crate) mod history;
mod retry;
pub(crate) mod transport;

pub use retry::RetryPolicy;
