//! What egirl answers the agent's requests with: `session/request_permission`
//! through egirl's approval flow (`ask`: the modal, Telegram buttons, the
//! web UI; `local-model`: the local model; an unattended turn: denied),
//! and `fs/read_text_file` / `fs/write_text_file` inside the workspace with
//! the protected paths enforced, as `read_file` / `write_file` would.
//! `terminal/*` is not offered (the capabilities say so) and is refused.
//! Requests and answers are the `agent-client-protocol` crate's schema
//! types (fields newer than it are ignored).

use std::path::Path;

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    WriteTextFileRequest, WriteTextFileResponse,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::config::ClaudePermissions;
use crate::jsonrpc::{Connection, RpcError};
use crate::protocol::FileDiff;
use crate::tools::paths::Access;
use crate::tools::{ToolContext, builtin};

/// What a request needs to be answered: the call's context, the agent,
/// its task, and where diffs of its writes go.
#[derive(Clone)]
pub struct Server {
    pub ctx: ToolContext,
    pub agent: String,
    pub permissions: ClaudePermissions,
    pub task: String,
    pub dir: String,
    pub diffs: std::sync::Arc<std::sync::Mutex<Vec<FileDiff>>>,
    pub conn: Connection,
    /// The submission whose turn delegated: requests are answered on
    /// tasks of their own, which do not inherit it.
    pub submission: Option<crate::protocol::SubmissionId>,
    /// Requests still being answered: aborted when the delegation ends,
    /// so no approval stays asked for an agent that is gone.
    pub answering: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Server {
    /// Answers one request on a task of its own (a permission may wait
    /// long for the user; updates keep flowing meanwhile).
    pub fn spawn(&self, id: Value, method: String, params: Value) {
        let server = self.clone();
        let task = tokio::spawn(async move {
            let submission = server.submission.clone();
            let answer = crate::bus::answering(submission, server.answer(&method, &params)).await;
            server.conn.respond(id, answer);
        });
        if let Ok(mut answering) = self.answering.lock() {
            answering.retain(|t| !t.is_finished());
            answering.push(task);
        }
    }

    /// Stops answering: the agent is gone.
    pub fn abort(&self) {
        if let Ok(mut answering) = self.answering.lock() {
            for task in answering.drain(..) {
                task.abort();
            }
        }
    }

    async fn answer(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        match method {
            "session/request_permission" => to_value(self.permission(parse(params)?).await),
            "fs/read_text_file" => to_value(self.read(parse(params)?).await?),
            "fs/write_text_file" => to_value(self.write(parse(params)?).await?),
            other => Err(RpcError::no_method(format!(
                "egirl does not offer `{other}`"
            ))),
        }
    }

    /// Picks an `allow_once` option when egirl's approval says yes, a
    /// `reject_once` one when it says no.
    async fn permission(&self, request: RequestPermissionRequest) -> RequestPermissionResponse {
        let call = &request.tool_call.fields;
        let title = call.title.as_deref().unwrap_or("a tool call");
        let input = call.raw_input.as_ref().map(|i| bounded(&i.to_string()));
        let what = format!(
            "{}: {title}{}",
            self.agent,
            input.map(|i| format!(" {i}")).unwrap_or_default()
        );
        let ctx = &self.ctx;
        let verdict = if ctx.origin.is_unattended() {
            Err("nobody is there to approve it (unattended turn)".to_string())
        } else {
            match self.permissions {
                ClaudePermissions::Ask => {
                    ctx.progress(format!("? {title} (asking you)"));
                    match ctx.approver.ask_delegate_permission(&what, ctx).await {
                        Ok(true) => Ok("approved".to_string()),
                        Ok(false) => Err(crate::protocol::DENIED_BY_USER.to_string()),
                        Err(why) => Err(why.to_string()),
                    }
                }
                ClaudePermissions::LocalModel => {
                    let raw = call.raw_input.clone().unwrap_or(Value::Null);
                    builtin::delegate_claude_code::local_model::decide(
                        ctx, &self.task, &self.dir, title, &raw,
                    )
                    .await
                }
            }
        };
        let (word, why) = match &verdict {
            Ok(why) => ("allowed", why),
            Err(why) => ("denied", why),
        };
        let line = format!("{word} {title}: {why}");
        tracing::info!(target: "egirl::delegate", agent = %self.agent, "{line}");
        ctx.progress(line);
        let wanted = if verdict.is_ok() {
            [
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
            ]
        } else {
            [
                PermissionOptionKind::RejectOnce,
                PermissionOptionKind::RejectAlways,
            ]
        };
        let chosen = wanted
            .iter()
            .find_map(|kind| request.options.iter().find(|o| o.kind == *kind));
        RequestPermissionResponse::new(match chosen {
            Some(option) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                option.option_id.clone(),
            )),
            // No option says no: the request is withdrawn, which denies it.
            None => RequestPermissionOutcome::Cancelled,
        })
    }

    async fn read(&self, request: ReadTextFileRequest) -> Result<ReadTextFileResponse, RpcError> {
        let path = path_param(&request.path)?;
        let resolved = self
            .ctx
            .resolve(path, Access::Read)
            .map_err(RpcError::invalid)?;
        let text = tokio::task::spawn_blocking(move || read_bounded(&resolved))
            .await
            .map_err(|e| RpcError::invalid(e.to_string()))?
            .map_err(RpcError::invalid)?;
        let text = lines_of(&text, request.line, request.limit);
        self.ctx
            .progress(format!("  read {}", self.shown(Path::new(path))));
        Ok(ReadTextFileResponse::new(text))
    }

    /// Through `write_file` itself: the same path rules, checkpoint and diff.
    async fn write(
        &self,
        request: WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, RpcError> {
        let path = path_param(&request.path)?;
        let args = json!({"path": path, "content": request.content});
        let out = builtin::write_file::run(&args, &self.ctx).await;
        if !out.success {
            self.ctx
                .progress(format!("  ✗ write refused: {}", out.output));
            return Err(RpcError::invalid(out.output));
        }
        self.ctx.progress(format!("  {}", out.output));
        if let (Some(diff), Ok(mut diffs)) = (out.diff, self.diffs.lock()) {
            diffs.push(diff);
        }
        Ok(WriteTextFileResponse::new())
    }

    fn shown(&self, path: &Path) -> String {
        crate::tools::paths::display(&self.ctx.workspace, path)
    }
}

/// Characters of a tool call's input shown in the approval request.
const INPUT_SHOWN: usize = 2000;

fn bounded(text: &str) -> String {
    match text.char_indices().nth(INPUT_SHOWN) {
        Some((end, _)) => format!("{}… ({} bytes)", &text[..end], text.len()),
        None => text.to_string(),
    }
}

/// A request's params as their schema type (a field missing or of the
/// wrong type is the agent's error).
fn parse<T: DeserializeOwned>(params: &Value) -> Result<T, RpcError> {
    T::deserialize(params).map_err(|e| RpcError::invalid(format!("bad params: {e}")))
}

fn to_value(answer: impl Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(answer).map_err(|e| RpcError::internal(e.to_string()))
}

/// The most a delegate may read of one file: it asks by path, and a
/// multi-gigabyte file in the workspace must not be loaded whole.
const READ_LIMIT: u64 = 16 * 1024 * 1024;

/// `path`'s text, refused above [`READ_LIMIT`].
fn read_bounded(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let failed = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let file = crate::fsutil::regular_file::open(path).map_err(failed)?;
    let size = file.metadata().map_err(failed)?.len();
    if size > READ_LIMIT {
        return Err(format!(
            "{} is {size} bytes; a delegated agent reads at most {READ_LIMIT}",
            path.display()
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    file.take(READ_LIMIT)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The path of a file request (JSON text, so always UTF-8).
fn path_param(path: &Path) -> Result<&str, RpcError> {
    path.to_str()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| RpcError::invalid("`path` is missing"))
}

/// `limit` lines from 1-based line `line` (ACP's `fs/read_text_file`).
fn lines_of(text: &str, line: Option<u32>, limit: Option<u32>) -> String {
    if line.is_none() && limit.is_none() {
        return text.to_string();
    }
    let skip = line.unwrap_or(1).saturating_sub(1) as usize;
    let take = limit.map_or(usize::MAX, |l| l as usize);
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_read_limit_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.bin");
        // Sparse: the size is what is checked, nothing is written.
        std::fs::File::create(&big)
            .unwrap()
            .set_len(READ_LIMIT + 1)
            .unwrap();
        let why = read_bounded(&big).unwrap_err();
        assert!(why.contains("reads at most"), "{why}");
        let small = dir.path().join("small.txt");
        std::fs::write(&small, "hi\n").unwrap();
        assert_eq!(read_bounded(&small).unwrap(), "hi\n");
    }

    #[test]
    fn reads_a_window_of_lines() {
        assert_eq!(lines_of("a\nb\nc\n", Some(2), Some(1)), "b\n");
        assert_eq!(lines_of("a\nb\nc", Some(2), None), "b\nc");
        assert_eq!(lines_of("a\nb", None, None), "a\nb");
    }

    #[test]
    fn a_long_input_is_cut_for_the_approval_request() {
        assert_eq!(bounded("{}"), "{}");
        let long = "é".repeat(INPUT_SHOWN + 5);
        let shown = bounded(&long);
        assert!(shown.starts_with(&"é".repeat(INPUT_SHOWN)));
        assert!(shown.ends_with(&format!("… ({} bytes)", long.len())));
    }
}
