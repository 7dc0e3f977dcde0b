//! Fakes and helpers shared by the integration suites.

pub mod cdp;
pub mod cli;
pub mod fake_anthropic;
pub mod fake_discord;
pub mod fake_llama;
pub mod fake_openai;
pub mod fake_remote;
pub mod fake_telegram;
// The long conversation of the TUI benchmarks; the start-up measurement
// uses its session records, the benches the rest.
#[allow(dead_code)]
pub mod tui_corpus;
