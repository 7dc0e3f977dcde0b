//! Fakes and helpers shared by the integration suites.

pub mod fake_llama;
