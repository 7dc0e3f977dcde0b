//! The one integration-test binary: each module is a suite.
mod agent;
mod headless_cli;
mod provider_llamacpp;
mod support;
mod tui;
