//! The ToolContext unit tests across the tools build on.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::{Approver, PendingApprovals};
use crate::config::{ExecApproval, ExecConfig};
use crate::protocol::{EventBus, Origin};
use crate::tools::ToolContext;

/// A ToolContext for unit tests: a fresh bus, no allow rules beyond `exec`'s.
pub(crate) fn test_context(workspace: &Path, approval: ExecApproval) -> ToolContext {
    let exec = ExecConfig {
        approval,
        ..ExecConfig::default()
    };
    let approver = Approver::new(
        EventBus::new(),
        PendingApprovals::new(),
        exec.clone(),
        workspace.join(".egirl/approvals.toml"),
        Duration::from_secs(5),
    );
    ToolContext {
        workspace: std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf()),
        allowed_paths: Vec::new(),
        exec,
        session: "test".into(),
        origin: Origin::Tui,
        approver: Arc::new(approver),
        cancel: tokio_util::sync::CancellationToken::new(),
        skills: Arc::new(crate::skills::Registry::load(
            &crate::config::SkillsConfig::default(),
            workspace,
        )),
        memory: None,
        protected: Arc::new(crate::tools::sandbox::ProtectedPaths::new(
            &std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf()),
            None,
            &[],
        )),
    }
}
