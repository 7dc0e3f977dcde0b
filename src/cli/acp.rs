//! `egirl acp`: a core served to an editor over stdio as an Agent Client
//! Protocol agent (`surfaces::acp`): this process's own, or the core of
//! the daemon that owns the workspace (`egirl serve`, or the TUI that
//! started first), as for `egirl -m`. stdout is the protocol's: start-up
//! notices go to stderr, logs to the log file.

use std::sync::Arc;

use super::EXIT_OK;
use super::link;
use crate::agent::AgentHandle;
use crate::cli::Environment;
use crate::link::CoreLink;
use crate::print;
use crate::surfaces::acp::{self, AcpOptions};

/// With this process's own core.
pub async fn run(env: &Environment, agent: &AgentHandle, notices: Vec<String>) -> u8 {
    for notice in &notices {
        print::err(format_args!("egirl: {notice}"));
    }
    let core = link::in_process(
        agent,
        link::Bots::default(),
        env.config.local.endpoint_list(),
    );
    acp::run(core, options(env, agent.skills.clone())).await;
    EXIT_OK
}

/// Through the daemon's core: this process starts no core, no model
/// server and no MCP server; the skills are read here for the commands.
pub async fn attached(env: &Environment, link: CoreLink) -> u8 {
    tracing::info!("acp: through the daemon that owns the workspace");
    let skills = crate::skills::Registry::load(&env.config.skills, &env.workspace);
    acp::run(link, options(env, Arc::new(skills))).await;
    EXIT_OK
}

fn options(env: &Environment, skills: Arc<crate::skills::Registry>) -> AcpOptions {
    let canonical =
        |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    AcpOptions {
        workspace: canonical(&env.workspace),
        allowed_paths: env
            .config
            .tools
            .allowed_paths
            .iter()
            .map(|p| canonical(&crate::config::expand_home(p)))
            .collect(),
        skills: Some(skills),
    }
}
