//! Tools the model may call. One tool per file under `builtin/`, listed
//! with its runner in one table ([`registry`]); this module holds what every
//! tool shares (its context, its output, argument readers).

pub mod approval;
pub mod builtin;
pub mod catalog;
pub mod checkpoints;
pub mod client_files;
pub mod diff;
pub mod hooks;
pub mod mcp;
pub mod paths;
pub mod policy;
pub mod registry;
pub mod sandbox;
pub mod web;

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::ExecConfig;
use crate::memory::Memory;
use crate::protocol::{FileDiff, Origin, SessionId};
use approval::Approver;
pub use registry::{offered, offered_where, run, specs, specs_where};

/// What a tool returns; `output` goes back to the model verbatim.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput {
    pub success: bool,
    pub output: String,
    /// The tool thinks a stronger model should take over (e.g. `edit_file`
    /// could not find the text to replace).
    pub suggest_escalation: bool,
    /// What a file tool changed: shown to the user, never sent to the model.
    pub diff: Option<FileDiff>,
    /// Not run: the user, a rule or a timeout refused it (the transcript
    /// keeps it as denied, and a rewind does not count it as run).
    pub refused: bool,
    /// Images the result carries (a picture `read_file` read, a browser
    /// screenshot): sent to a vision-capable model with `output`.
    pub images: Vec<crate::protocol::ImagePart>,
}

impl ToolOutput {
    pub fn ok(output: impl Into<String>) -> Self {
        Self {
            success: true,
            output: output.into(),
            suggest_escalation: false,
            diff: None,
            refused: false,
            images: Vec::new(),
        }
    }
    pub fn fail(output: impl Into<String>) -> Self {
        Self {
            success: false,
            output: output.into(),
            suggest_escalation: false,
            diff: None,
            refused: false,
            images: Vec::new(),
        }
    }
    /// The approval was refused (`why`: by whom or what): a failure the
    /// transcript records as denied.
    pub fn refused(why: impl Into<String>) -> Self {
        Self {
            refused: true,
            ..Self::fail(why)
        }
    }
    pub fn fail_escalate(output: impl Into<String>) -> Self {
        Self {
            success: false,
            output: output.into(),
            suggest_escalation: true,
            diff: None,
            refused: false,
            images: Vec::new(),
        }
    }

    /// This output, with images for the model to see.
    pub fn with_images(mut self, images: Vec<crate::protocol::ImagePart>) -> Self {
        self.images = images;
        self
    }

    /// This output, with the change it made for surfaces to show.
    pub fn with_diff(mut self, diff: FileDiff) -> Self {
        self.diff = Some(diff);
        self
    }
}

/// Everything a tool may touch while it runs.
#[derive(Clone)]
pub struct ToolContext {
    /// Canonical workspace root; relative paths resolve against it.
    pub workspace: PathBuf,
    /// Extra roots (canonical) the file tools may read and write.
    pub allowed_paths: Vec<PathBuf>,
    pub exec: ExecConfig,
    pub session: SessionId,
    pub origin: Origin,
    pub approver: Arc<Approver>,
    /// Cancelled on `Op::Interrupt`: tools stop promptly, exec kills its process group.
    pub cancel: CancellationToken,
    /// The memory index (none: the memory_search tool says it is unavailable).
    pub memory: Option<Arc<Memory>>,
    /// The loaded skills: `read_file` may read their directories,
    /// `create_skill` and `list_skills` work on them.
    pub skills: Arc<crate::skills::Registry>,
    /// What the model may never change or read (see `sandbox::protected`).
    pub protected: Arc<sandbox::ProtectedPaths>,
    /// The MCP servers and their tools (`tools::mcp`).
    pub mcp: Arc<crate::mcp::McpManager>,
    /// Where `write_file`/`edit_file` keep a file before changing it (for
    /// `/rewind`); `None`: not kept (checkpoints off, or outside a turn).
    pub checkpoint: Option<Arc<checkpoints::TurnCheckpoint>>,
    /// The whole config, for tools with a section of their own
    /// (`[tools.web]`, `[delegate.claude_code]`, the local model).
    pub config: Arc<crate::config::Config>,
    /// Where a tool's progress goes (`EventKind::ToolProgress`).
    pub bus: crate::bus::EventBus,
    /// The id of the call being run ("" outside a turn).
    pub call_id: String,
    /// Milliseconds this call waited for the user's approval: its
    /// duration is the run without them (one counter per call).
    pub approval_wait_ms: Arc<std::sync::atomic::AtomicU64>,
    /// The sessions whose editor reads and writes files for the file
    /// tools (`client_files`).
    pub client_files: client_files::ClientFiles,
}

impl ToolContext {
    /// Reports progress of the running call, shown under it.
    pub fn progress(&self, text: impl Into<String>) {
        self.bus.emit(
            &self.session,
            &self.origin,
            crate::protocol::EventKind::ToolProgress(crate::protocol::ToolProgress {
                id: self.call_id.clone(),
                text: text.into(),
            }),
        );
    }
}

impl ToolContext {
    /// A context outside the agent's core (tests, benches): a bus nobody
    /// reads, no allow rules beyond `exec`'s, the workspace's skills, no
    /// memory, and the protected paths of the workspace alone.
    pub fn standalone(
        workspace: &std::path::Path,
        exec: ExecConfig,
        session: &str,
        origin: Origin,
    ) -> Self {
        let workspace =
            std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let bus = crate::bus::EventBus::new();
        let approver = Approver::new(
            bus.clone(),
            approval::PendingApprovals::new(),
            exec.clone(),
            workspace.join(".egirl/approvals.toml"),
            std::time::Duration::from_secs(5),
        );
        Self {
            skills: Arc::new(crate::skills::Registry::load(
                &crate::config::SkillsConfig::default(),
                &workspace,
            )),
            protected: Arc::new(sandbox::ProtectedPaths::new(&workspace, None, &[])),
            workspace,
            allowed_paths: Vec::new(),
            exec,
            session: session.into(),
            origin,
            approver: Arc::new(approver),
            cancel: CancellationToken::new(),
            memory: None,
            config: Arc::new(crate::config::Config::default()),
            bus,
            call_id: String::new(),
            checkpoint: None,
            mcp: crate::mcp::McpManager::none(),
            approval_wait_ms: Arc::default(),
            client_files: client_files::ClientFiles::default(),
        }
    }

    /// Roots `read_file` may read: the allowed paths and the skills
    /// directories (read-only: the write tools never get these).
    pub fn readable_roots(&self) -> Vec<PathBuf> {
        let mut roots = self.allowed_paths.clone();
        roots.extend(self.skills.snapshot().roots.iter().cloned());
        roots
    }

    /// Where relative paths and commands start: the workspace, or the
    /// directory the session's client works in (an editor's project).
    pub fn work_dir(&self) -> PathBuf {
        self.client_files
            .work_dir(&self.session)
            .unwrap_or_else(|| self.workspace.clone())
    }

    /// `paths::resolve` against the roots the access allows, then the
    /// protected paths: the one check every file tool makes. A relative
    /// path starts in [`ToolContext::work_dir`].
    pub fn resolve(&self, requested: &str, access: paths::Access) -> Result<PathBuf, String> {
        let roots = match access {
            paths::Access::Read => self.readable_roots(),
            paths::Access::Write => self.allowed_paths.clone(),
        };
        let in_work_dir = self.client_files.work_dir(&self.session).filter(|_| {
            !requested.trim().is_empty() && !crate::config::expand_home(requested).is_absolute()
        });
        let joined = in_work_dir.map(|dir| dir.join(requested).display().to_string());
        let requested = joined.as_deref().unwrap_or(requested);
        let path = paths::resolve(&self.workspace, &roots, requested, access)?;
        let shown = paths::display(&self.workspace, &path);
        let refusal = match access {
            paths::Access::Read => self.protected.read_refusal(&path, &shown),
            paths::Access::Write => self.protected.write_refusal(&path, &shown),
        };
        match refusal {
            Some(why) => Err(why),
            None => Ok(path),
        }
    }
}

/// Reads a required string argument, with an error the model can act on.
pub fn arg_str<'a>(args: &'a serde_json::Value, key: &str) -> Result<&'a str, ToolOutput> {
    args.get(key)
        .and_then(|v| v.as_str())
        .ok_or_else(|| ToolOutput::fail(format!("missing required string argument `{key}`")))
}

/// Reads an optional non-negative integer argument (numbers in strings accepted:
/// small models often quote them).
pub fn arg_u64(args: &serde_json::Value, key: &str) -> Result<Option<u64>, ToolOutput> {
    match args.get(key) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => n
            .as_u64()
            .map(Some)
            .ok_or_else(|| ToolOutput::fail(format!("`{key}` must be a non-negative integer"))),
        Some(serde_json::Value::String(s)) => s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| ToolOutput::fail(format!("`{key}` must be a non-negative integer"))),
        Some(_) => Err(ToolOutput::fail(format!(
            "`{key}` must be a non-negative integer"
        ))),
    }
}

/// Reads an optional number argument (numbers in strings accepted).
pub fn arg_f64(args: &serde_json::Value, key: &str) -> Result<Option<f64>, ToolOutput> {
    let bad = || ToolOutput::fail(format!("`{key}` must be a number"));
    match args.get(key) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Number(n)) => n.as_f64().map(Some).ok_or_else(bad),
        Some(serde_json::Value::String(s)) => s.trim().parse().map(Some).map_err(|_| bad()),
        Some(_) => Err(bad()),
    }
}

/// Reads an optional boolean argument ("true"/"false" strings accepted).
pub fn arg_bool(args: &serde_json::Value, key: &str) -> Result<Option<bool>, ToolOutput> {
    match args.get(key) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Bool(b)) => Ok(Some(*b)),
        Some(serde_json::Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(serde_json::Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(_) => Err(ToolOutput::fail(format!("`{key}` must be true or false"))),
    }
}
