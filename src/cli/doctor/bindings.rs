//! `egirl doctor`'s agents and bindings: the resolved table (which
//! binding sends what to whom, in the order they are tried) and the
//! problems `Config::binding_problems` finds, as notes.

use super::Report;
use crate::config::{Config, DEFAULT_AGENT};

pub fn bindings(config: &Config, report: &mut Report) {
    if !config.has_agents() && config.bindings.is_empty() {
        return;
    }
    report.line(Some(true), "agents", config.agent_names().join(", "));
    for (index, binding) in config.bindings.iter().enumerate() {
        report.line(
            None,
            "binding",
            format!(
                "bindings[{index}] {} → {}",
                binding.describe(),
                binding.agent
            ),
        );
    }
    report.line(None, "binding", format!("anything else → {DEFAULT_AGENT}"));
    for problem in config.binding_problems() {
        report.line(None, "bindings", problem.to_string());
    }
}
