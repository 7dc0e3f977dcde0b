//! `egirl doctor`'s agents and bindings: the resolved table (which
//! binding sends what to whom, in the order they are tried) and the
//! problems `Config::binding_problems` finds: a binding to an agent no
//! table declares fails (every message it matches is refused), two that
//! match the same messages are a note (the first wins).

use super::Report;
use crate::config::{BindingProblem, Config, DEFAULT_AGENT};

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
        let fails = matches!(problem, BindingProblem::Dangling { .. });
        report.line(fails.then_some(false), "bindings", problem.to_string());
    }
}
