//! The one integration-test binary: each module is a suite.
mod agent;
mod cli_stats_export;
mod discord;
mod hardening;
mod headless_cli;
mod memory;
mod provider_anthropic;
mod provider_llamacpp;
mod provider_openai;
mod provider_remote;
mod routing;
mod scheduler;
mod seam;
mod skills;
mod support;
mod tui;
mod webhook;
