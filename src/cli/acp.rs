//! `egirl acp`: the core in this process, served to an editor over
//! stdio as an Agent Client Protocol agent (`surfaces::acp`). stdout is
//! the protocol's: start-up notices go to stderr, logs to the log file.

use super::EXIT_OK;
use super::link;
use crate::agent::AgentHandle;
use crate::cli::Environment;
use crate::print;
use crate::surfaces::acp::{self, AcpOptions};

pub async fn run(env: &Environment, agent: &AgentHandle, notices: Vec<String>) -> u8 {
    for notice in &notices {
        print::err(format_args!("egirl: {notice}"));
    }
    let canonical =
        |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let options = AcpOptions {
        workspace: canonical(&env.workspace),
        allowed_paths: env
            .config
            .tools
            .allowed_paths
            .iter()
            .map(|p| canonical(&crate::config::expand_home(p)))
            .collect(),
        skills: Some(agent.skills.clone()),
    };
    let core = link::in_process(
        agent,
        link::Bots::default(),
        env.config.local.endpoint_list(),
    );
    acp::run(core, options).await;
    EXIT_OK
}
