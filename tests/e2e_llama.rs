//! End to end against a real llama-server with a small real model
//! (SmolLM2-135M), installed by scripts/install-llama.sh. `make test` runs
//! the install first; run alone, point LLAMA_SERVER and LLAMA_MODEL at them.
//!
//! The model's words don't matter here; the plumbing does: streaming,
//! usage and the prefix cache, token counting, doctor, the managed server,
//! and recovery from a server that dies mid-stream.

mod e2e;
