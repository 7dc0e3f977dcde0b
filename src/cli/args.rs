//! The command line's flags and subcommands, as clap reads them; the
//! doc comments are the `--help` text (docs/cli.md documents them).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use super::{
    agents, approvals, attach, devices, export, init, mcp, memory, pair, skills, stats, trust,
};

/// `egirl --version`: the build, and the `--json` wire version.
const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (--json events: protocol 2)");
// `concat!` takes only literals: the number above is kept equal to the
// protocol's here, at compile time.
const _: () = assert!(crate::protocol::PROTOCOL_VERSION == 2);

#[derive(Debug, Parser)]
#[command(
    name = "egirl",
    version,
    long_version = LONG_VERSION,
    about = "A local-first personal AI agent"
)]
pub struct Cli {
    /// Config file (else $EGIRL_CONFIG, ./egirl.toml, ~/.egirl/egirl.toml).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Workspace directory (overrides [workspace] path).
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Run one turn headless and print the answer.
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Option<String>,
    /// With -m: print every event as one JSON object per line (the wire
    /// version is in `egirl --version`).
    #[arg(long, requires = "message")]
    pub json: bool,
    /// With -m: the agent the turn is for (an `[agents.NAME]` table, or
    /// `default`); else the session's, else the `tui` binding's.
    #[arg(long, value_name = "NAME", requires = "message")]
    pub agent: Option<String>,
    /// Session to use or resume (default: a new one).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Run the session on one model rather than the router's pick: auto,
    /// local, local.fast or PROVIDER:MODEL (the -m turn's session, or the
    /// TUI's first one; kept in its transcript, as `/model` does).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// With -m: approve, once each, what would ask: commands (inside the
    /// sandbox), web_fetch's new hosts and delegations to Claude Code;
    /// never MCP tools, Claude Code's own permission requests, nor a
    /// command asking to run outside the sandbox.
    #[arg(long, requires = "message")]
    pub approve_exec: bool,
    /// With --session: copy the session into a new one and print its id.
    #[arg(long, requires = "session", conflicts_with_all = ["message", "rewind"])]
    pub fork: bool,
    /// With --session: go back to before the session's user message N
    /// (1-based), restoring the files write_file/edit_file changed since.
    #[arg(
        long,
        value_name = "N",
        requires = "session",
        conflicts_with = "message"
    )]
    pub rewind: Option<usize>,
    /// With --session: replace the session's older turns with a summary
    /// now and print the summary.
    #[arg(long, requires = "session", conflicts_with_all = ["message", "fork", "rewind"])]
    pub compact: bool,
    #[command(subcommand)]
    pub command: Option<CliCommand>,
}

#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Write egirl.toml, .env (mode 600, a placeholder per secret) and the
    /// workspace templates (never overwriting).
    Init(init::InitArgs),
    /// Check config, workspace, endpoints and keys.
    Doctor,
    /// Usage and cost totals from `.egirl/usage.jsonl`.
    Stats(stats::StatsArgs),
    /// Sessions as fine-tuning JSONL (the Qwen3 format of docs/design.md §6).
    Export(export::ExportArgs),
    /// Open the TUI on the core of a running egirl (`egirl serve`):
    /// TARGET is its socket (default: this workspace's) or ws://host:port.
    Attach(attach::AttachArgs),
    /// Run without a TUI: serve the core on the workspace's socket, and run
    /// Discord, Telegram, heartbeat, cron and the webhook, until SIGTERM,
    /// SIGHUP or Ctrl+C.
    Serve,
    /// Skills: `egirl skills list [--json]`.
    Skills(skills::SkillsArgs),
    /// Search or re-index memory (MEMORY.md and the daily logs).
    Memory(memory::MemoryArgs),
    /// MCP servers: `egirl mcp list [--json]`.
    Mcp(mcp::McpArgs),
    /// Review and trust start-up files the model could have written (a
    /// config or `.env` in the workspace or found in the working directory).
    Trust(trust::TrustArgs),
    /// Show a one-time code that pairs a new device with the gateway's TCP
    /// listener (valid 5 minutes).
    Pair(pair::PairArgs),
    /// Devices paired with the gateway: `egirl devices list|revoke ID`.
    Devices(devices::DevicesArgs),
    /// Approval rules: `egirl approvals list [--json]|revoke ID`.
    Approvals(approvals::ApprovalsArgs),
    /// Agents and their bindings: `egirl agents list [--json]`.
    Agents(agents::AgentsArgs),
    /// Serve an editor (Zed, JetBrains, Neovim...) as an Agent Client
    /// Protocol agent on stdin/stdout (docs/acp.md).
    Acp,
}

impl Cli {
    /// The agent `-m` is for: `--agent`, else the `tui` binding's agent
    /// when one is bound (`None`: the session's, else `default`).
    pub fn agent_for(&self, config: &crate::config::Config) -> Option<String> {
        if self.agent.is_some() {
            return self.agent.clone();
        }
        let channel = crate::config::BindingChannel::Tui;
        let bound = config.bound_agent(channel, &Default::default());
        (bound != crate::config::DEFAULT_AGENT).then(|| bound.to_string())
    }

    /// Whether this command line starts the full-screen TUI.
    pub fn starts_tui(&self) -> bool {
        self.command.is_none()
            && self.message.is_none()
            && !self.compact
            && !self.fork
            && self.rewind.is_none()
    }
}
