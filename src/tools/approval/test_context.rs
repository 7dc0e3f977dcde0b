//! The ToolContext unit tests across the tools build on.

use std::path::Path;

use crate::config::{ExecApproval, ExecConfig};
use crate::protocol::Origin;
use crate::tools::ToolContext;

/// A ToolContext for unit tests: a fresh bus, no allow rules beyond `exec`'s.
pub(crate) fn test_context(workspace: &Path, approval: ExecApproval) -> ToolContext {
    let exec = ExecConfig {
        approval,
        ..ExecConfig::default()
    };
    ToolContext::standalone(workspace, exec, "test", Origin::Tui)
}
