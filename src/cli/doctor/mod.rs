//! `egirl doctor`: one line per check, exit 0 when egirl can work.

mod bindings;
mod local;
mod security;

use super::Environment;
use crate::print;
use security::{
    CommandLimits, exposed_in_workspace, mcp_literal_secrets, secrets_and_redaction, trust_summary,
};

pub async fn run(env: &Environment) -> u8 {
    let mut report = Report::default();
    config_and_workspace(env, &mut report);
    bindings::bindings(&env.config, &mut report);
    sandbox_and_tools(env, &mut report);
    local::local_servers(&env.config.local, &mut report).await;
    skills(env, &mut report);
    memory_index(env, &mut report).await;
    report.line(None, "services", services_owner(&env.workspace));
    telegram(env, &mut report).await;
    secrets_and_redaction(env, &mut report);
    mcp_literal_secrets(&env.config.mcp, &mut report);
    mcp_servers(env, &mut report).await;
    if report.failed {
        super::EXIT_FAILURE
    } else {
        super::EXIT_OK
    }
}

/// The report as it is printed: one line per check, remembering whether
/// any check failed (that decides the exit code).
#[derive(Default)]
struct Report {
    failed: bool,
}

impl Report {
    /// `ok` is `Some(true)` for a pass, `Some(false)` for a failure and
    /// `None` for a note that fails nothing.
    fn line(&mut self, ok: Option<bool>, what: &str, detail: String) {
        let mark = match ok {
            Some(true) => "ok  ",
            Some(false) => "FAIL",
            None => "note",
        };
        if ok == Some(false) {
            self.failed = true;
        }
        // A closed stdout only ends the report; the exit code still says.
        let _ = print::out(&format!("{mark} {what}: {detail}\n"));
    }
}

/// Which config was read, whether the workspace has its templates, and
/// the start-up files that lie inside the workspace.
fn config_and_workspace(env: &Environment, report: &mut Report) {
    report.line(
        Some(true),
        "config",
        env.config_path
            .as_ref()
            .map_or("built-in defaults (no egirl.toml found)".into(), |p| {
                p.display().to_string()
            }),
    );
    let missing: Vec<&str> = crate::workspace::TEMPLATES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !env.workspace.join(name).exists())
        .collect();
    report.line(
        Some(true),
        "workspace",
        if missing.is_empty() {
            env.workspace.display().to_string()
        } else {
            format!(
                "{} (missing {})",
                env.workspace.display(),
                missing.join(", ")
            )
        },
    );
    let exec = &env.config.tools.exec;
    // Under "required" a kernel that lacks a piece refuses every command,
    // so the protected paths hold either way.
    let sandboxed = exec.sandbox != crate::config::ExecSandbox::Off;
    let commands = CommandLimits {
        config_read_only: exec.sandbox == crate::config::ExecSandbox::Required
            || (sandboxed && crate::tools::sandbox::gaps(exec).is_empty()),
        env_hidden: sandboxed && crate::tools::sandbox::probe::support().namespace.is_ok(),
    };
    for exposure in exposed_in_workspace(
        &env.workspace,
        env.config_path.as_deref(),
        &env.env_files,
        commands,
    ) {
        report.line(None, "workspace", exposure);
    }
    report.line(None, "trust", trust_summary());
}

/// The exec sandbox, the web tools, `browser`, `delegate_claude_code` and
/// `delegate`'s agents.
fn sandbox_and_tools(env: &Environment, report: &mut Report) {
    let exec = &env.config.tools.exec;
    let sandbox = crate::tools::sandbox::describe(exec);
    match crate::tools::sandbox::notice(exec) {
        None => report.line(Some(true), "exec sandbox", sandbox),
        Some(why) => report.line(
            (exec.sandbox == crate::config::ExecSandbox::Required).then_some(false),
            "exec sandbox",
            why,
        ),
    }

    approvals_file(env, report);
    for (ok, what, detail) in crate::tools::web::doctor_lines(&env.config.tools.web) {
        report.line(ok, what, detail);
    }
    let (ok, detail) = crate::tools::builtin::delegate_claude_code::doctor_line(&env.config);
    report.line(ok, "delegate_claude_code", detail);
    for (ok, detail) in crate::tools::builtin::delegate::doctor_lines(&env.config) {
        report.line(ok, "delegate", detail);
    }
    let (ok, detail) = crate::tools::builtin::browser::doctor_line(&env.config);
    report.line(ok, "browser", detail);
}

/// The permanent approvals: an invalid file is ignored whole (egirl then
/// asks about what it allowed), and only the log said so.
fn approvals_file(env: &Environment, report: &mut Report) {
    let path = env.workspace.join(".egirl").join("approvals.toml");
    if !path.exists() {
        return;
    }
    match crate::tools::approval::read_rules_file(&path) {
        Ok(rules) => report.line(
            Some(true),
            "approvals",
            format!("{}: {} exec rule(s)", path.display(), rules.len()),
        ),
        Err(e) => report.line(
            None,
            "approvals",
            format!(
                "{}; egirl ignores the whole file (it asks instead) until it is fixed",
                one_line(&e)
            ),
        ),
    }
}

/// A TOML error on one line: its position and its reason, without the
/// quoted source lines between them.
fn one_line(error: &str) -> String {
    let mut lines = error.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    match lines.next_back() {
        Some(reason) if !reason.starts_with('|') => format!("{first}: {reason}"),
        _ => first.to_string(),
    }
}

/// How many skills load, and how many are unavailable or broken.
fn skills(env: &Environment, report: &mut Report) {
    let skills = crate::skills::Registry::load(&env.config.skills, &env.workspace).snapshot();
    let usable = skills.skills.iter().filter(|s| s.available()).count();
    report.line(
        if skills.broken.is_empty() {
            Some(true)
        } else {
            None
        },
        "skills",
        format!(
            "{usable} available, {} unavailable, {} broken (details: egirl skills list)",
            skills.skills.len() - usable,
            skills.broken.len()
        ),
    );
}

/// What the memory index holds and whether it searches by vectors.
async fn memory_index(env: &Environment, report: &mut Report) {
    let remote =
        crate::providers::remote::RemoteProviders::from_config(&env.config.remote, &env.secrets);
    let memory = crate::memory::Memory::new(&env.workspace, &env.config, &remote);
    match memory.counts().await {
        Ok((files, chunks, vectors)) => {
            let search = if memory.has_embedder() {
                ""
            } else {
                " (no embeddings configured: full-text search)"
            };
            let state = if files == 0 {
                "not built yet (egirl builds it at start; or egirl memory reindex)".to_string()
            } else {
                format!("{files} files, {chunks} chunks, {vectors} vectors")
            };
            report.line(Some(true), "memory index", format!("{state}{search}"));
        }
        Err(e) => report.line(
            None,
            "memory index",
            format!("{e:#} (rebuilt from the files on next use)"),
        ),
    }
}

/// When Telegram is enabled: whether its token is set and answers.
async fn telegram(env: &Environment, report: &mut Report) {
    let telegram = &env.config.channels.telegram;
    if !telegram.enabled {
        return;
    }
    let (ok, detail) = match &env.secrets.telegram_bot_token {
        None => (
            false,
            "enabled but TELEGRAM_BOT_TOKEN is not set".to_string(),
        ),
        Some(token) => match crate::surfaces::telegram::check_token(telegram, token).await {
            Ok(name) => (true, format!("getMe answered: @{name}")),
            Err(why) => (false, why),
        },
    };
    report.line(
        Some(ok),
        "telegram",
        env.redactor.redact(&detail).into_owned(),
    );
}

/// Each MCP server connected as egirl would, then stopped.
async fn mcp_servers(env: &Environment, report: &mut Report) {
    if env.config.mcp.servers.is_empty() {
        return;
    }
    let manager = super::mcp::connect(env).await;
    for info in manager.infos() {
        let detail = match (&info.last_error, info.state.as_str()) {
            (_, "ready") => format!("{}, {} tool(s)", info.transport, info.tools.len()),
            (Some(error), state) => format!("{}, {state}: {error}", info.transport),
            (None, state) => format!("{}, {state}", info.transport),
        };
        report.line(
            Some(info.state == "ready"),
            &format!("mcp {}", info.name),
            detail,
        );
    }
    manager.shutdown().await;
}

/// Who runs Discord, heartbeat, cron and the webhook for this workspace.
fn services_owner(workspace: &std::path::Path) -> String {
    let path = super::services::lock_path(workspace);
    match crate::fsutil::lockfile::FileLock::try_acquire(&path) {
        Ok(Some(_free)) => "not running (the next egirl or egirl serve runs them)".into(),
        Ok(None) => {
            let holder = crate::fsutil::lockfile::read_note(&path);
            if holder.is_empty() {
                "run by another egirl process".into()
            } else {
                format!("run by {holder}")
            }
        }
        Err(e) => format!("{e:#}"),
    }
}
