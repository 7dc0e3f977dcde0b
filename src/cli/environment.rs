//! What start-up resolves before anything runs: the config, the `.env`
//! files and secrets, the workspace and the paths the model may not touch.

use std::path::PathBuf;
use std::sync::Arc;

use super::startup::{self, StartUpPlan};
use super::{Cli, Exit};
use crate::agent::{self, AgentHandle};
use crate::config::{self, Config, Secrets};
use crate::print;
use crate::providers::remote::RemoteProviders;
use crate::redact::Redactor;

/// Everything start-up resolved: config, secrets, the workspace.
pub struct Environment {
    pub config: Config,
    pub config_path: Option<PathBuf>,
    pub secrets: Secrets,
    pub workspace: PathBuf,
    pub allowed_paths: Vec<PathBuf>,
    /// The `.env` files read at start-up (protected from the model).
    pub env_files: Vec<PathBuf>,
    /// The secret values found at start-up, redacted wherever they show.
    pub redactor: Arc<Redactor>,
}

impl Environment {
    pub fn load(cli: &Cli) -> Result<Self, Exit> {
        let plan = StartUpPlan::read(cli)?;
        let ask = cli.starts_tui() && super::trust::on_a_terminal();
        plan.enforce(ask.then_some(&super::trust::ask_and_record as &startup::Ask))?;
        let env_files = plan.load_env_files();
        check_beyond_types(&plan)?;
        let mut config = plan.loaded.config.clone();
        config.workspace.path = plan.workspace.display().to_string();
        let (workspace, created) = crate::workspace::ensure(&plan.workspace)
            .map_err(|e| Exit::failure(format!("{e:#}")))?;
        if !created.is_empty() {
            print::err(format_args!(
                "egirl: created workspace {} ({})",
                workspace.display(),
                created.join(", ")
            ));
        }
        let mut allowed_paths = Vec::new();
        for p in &config.tools.allowed_paths {
            let path = config::expand_home(p);
            match path.canonicalize() {
                Ok(c) => allowed_paths.push(c),
                Err(e) => print::err(format_args!(
                    "egirl: ignoring [tools] allowed_paths entry {}: {e}",
                    path.display()
                )),
            }
        }
        let mut reachable = allowed_paths.clone();
        reachable.extend(startup::other_agent_workspaces(&config, &workspace));
        startup::record_writable_roots(&workspace, &reachable);
        // The socket asks for it too: made before the redactor, which
        // hides it from the first start on; a failure is reported when the
        // listener starts.
        let _ =
            crate::surfaces::gateway::auth::secret::ensure_token(&config::gateway::token_path());
        let redactor = Arc::new(Redactor::from_environment(&env_files, &config.mcp));
        // Transcripts written before a secret was known are redacted as read.
        crate::sessions::redact_on_read(redactor.clone());
        Ok(Self {
            redactor,
            config,
            config_path: plan.loaded.path.clone(),
            secrets: Secrets::from_env(),
            workspace,
            allowed_paths,
            env_files,
        })
    }

    /// Starts the core with the remote providers whose keys are set; the
    /// notices say which configured ones were left out and why.
    pub fn start_agent(&self) -> (AgentHandle, tokio::task::JoinHandle<()>, Vec<String>) {
        let remote = RemoteProviders::from_config(&self.config.remote, &self.secrets);
        let notices = remote.notices.clone();
        for notice in &notices {
            tracing::warn!("{notice}");
        }
        let protected = self.protected_paths();
        let (agent, core) = agent::spawn_guarded(
            self.config.clone(),
            self.workspace.clone(),
            self.allowed_paths.clone(),
            remote,
            protected,
            self.redactor.clone(),
        );
        let mut notices = notices;
        // What the kernel lacks for the exec sandbox, said once at start.
        if let Some(notice) = crate::tools::sandbox::notice(&self.config.tools.exec) {
            tracing::warn!("{notice}");
            notices.push(notice);
        }
        let broken = agent.skills.snapshot().broken.len();
        if broken > 0 {
            notices.push(format!(
                "{broken} skill file(s) could not be loaded; /skills or `egirl skills list` says why"
            ));
        }
        (agent, core, notices)
    }
}

/// The checks on the config that need modules above `config` (routing's
/// rules, the heartbeat's hours) or the environment (the gateway's plan):
/// config errors like the others, naming file:line:col and key (exit 2).
fn check_beyond_types(plan: &StartUpPlan) -> Result<(), Exit> {
    use crate::routing::RuleError;
    let config = &plan.loaded.config;
    let text = plan
        .config_file
        .as_ref()
        .map(|f| String::from_utf8_lossy(&f.content).into_owned())
        .unwrap_or_default();
    let file = plan
        .loaded
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from("built-in defaults"));
    let error = |key: &str, value: Option<&str>, message: &str, prefix: &str| {
        let message = message.strip_prefix(prefix).unwrap_or(message);
        Exit::usage(config::ConfigError::at(&text, &file, key, value, message))
    };
    if let Err(e) = crate::routing::Router::new(&config.routing) {
        let message = e.to_string();
        return Err(match &e {
            RuleError::UnknownKind { list, rule, .. } | RuleError::EmptyPhrase { list, rule } => {
                let prefix = format!("[routing] {list}: ");
                error(&format!("routing.{list}"), Some(rule), &message, &prefix)
            }
            RuleError::Conflict { kind } => {
                error("routing.always_remote", Some(kind), &message, "[routing] ")
            }
        });
    }
    let hours = &config.heartbeat.active_hours;
    if let Err(e) = crate::surfaces::heartbeat::ActiveHours::parse(hours) {
        let message = e.to_string();
        return Err(error("heartbeat.active_hours", Some(hours), &message, ""));
    }
    if let Err(message) = config
        .gateway
        .plan(config::gateway::auth_off_by_environment())
    {
        let key = match message.starts_with("[gateway] hosts") {
            true => "gateway.hosts",
            false => "gateway.listen",
        };
        return Err(error(key, None, &message, "[gateway] "));
    }
    Ok(())
}

impl Environment {
    /// What the model may never change or read: what start-up read and
    /// would read (see `tools::sandbox::protected`).
    pub fn protected_paths(&self) -> crate::tools::sandbox::ProtectedPaths {
        crate::tools::sandbox::ProtectedPaths::new(
            &self.workspace,
            self.config_path.as_deref(),
            &self.env_files,
        )
        .with_start_up_files(
            config::config_candidates()
                .into_iter()
                .chain(startup::dotenv_candidates(self.config_path.as_deref()))
                // The trust store and the recorded writable roots decide
                // what the next start loads.
                .chain(std::iter::once(config::trust::state_dir())),
        )
        .with_secret_dir(config::gateway::secrets_dir())
    }
}
