//! Claude Code's permission requests, brought back to egirl: a minimal MCP
//! server (streamable HTTP, JSON answers) on 127.0.0.1 with one tool,
//! `approve`, named to Claude Code with `--permission-prompt-tool
//! mcp__egirl__approve` (its documented mechanism). Each call is asked in
//! egirl's approval modal (`permissions = "ask"`) or decided by the local
//! model (`"local-model"`, its reason shown under the call and logged).
//! The path carries a random token: another local process cannot pose as
//! Claude Code.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use super::stream::input_summary;
use crate::config::ClaudePermissions;
use crate::protocol::SubmissionId;
use crate::tools::ToolContext;

/// The MCP server's name and tool, as Claude Code is told them.
pub const SERVER: &str = "egirl";
pub const TOOL: &str = "approve";

struct Asker {
    ctx: ToolContext,
    token: String,
    task: String,
    dir: String,
    /// The submission whose turn delegated: the server's requests are
    /// handled on tasks of their own, which do not inherit it.
    submission: Option<SubmissionId>,
}

/// The server, stopped when dropped.
pub struct PermissionServer {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PermissionServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl PermissionServer {
    /// The `--mcp-config` JSON naming this server.
    pub fn mcp_config(&self) -> String {
        json!({"mcpServers": {SERVER: {"type": "http", "url": self.url}}}).to_string()
    }
}

pub async fn start(ctx: ToolContext, task: &str, dir: &str) -> Result<PermissionServer, String> {
    let token = uuid::Uuid::new_v4().simple().to_string();
    let asker = Arc::new(Asker {
        ctx,
        token: token.clone(),
        task: task.to_string(),
        submission: crate::bus::current_submission(),
        dir: dir.to_string(),
    });
    let app = axum::Router::new()
        .route("/mcp/{token}", post(handle))
        .with_state(asker);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot open the permission server: {e}"))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("cannot open the permission server: {e}"))?;
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(PermissionServer {
        url: format!("http://{addr}/mcp/{token}"),
        task,
    })
}

async fn handle(
    State(asker): State<Arc<Asker>>,
    Path(token): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    if token != asker.token {
        return StatusCode::NOT_FOUND.into_response();
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    // A notification (no id) gets no answer.
    let Some(id) = request.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match request["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": request["params"]["protocolVersion"].as_str().unwrap_or("2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": SERVER, "version": env!("CARGO_PKG_VERSION")}
        }),
        Some("ping") => json!({}),
        Some("tools/list") => json!({"tools": [{
            "name": TOOL,
            "description": "Asks egirl whether Claude Code may use a tool.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "tool_name": {"type": "string"},
                    "input": {"type": "object"},
                    "tool_use_id": {"type": "string"}
                },
                "required": ["tool_name", "input"]
            }
        }]}),
        Some("tools/call") => {
            let args = &request["params"]["arguments"];
            let decision =
                crate::bus::answering(asker.submission.clone(), decide(&asker, args)).await;
            json!({"content": [{"type": "text", "text": decision.to_string()}]})
        }
        _ => {
            return axum::Json(json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}
            }))
            .into_response();
        }
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// Claude Code's answer format: allow (with the input unchanged) or deny
/// with a message it shows its model.
async fn decide(asker: &Asker, args: &Value) -> Value {
    let tool = args["tool_name"].as_str().unwrap_or("?");
    let input = &args["input"];
    let ctx = &asker.ctx;
    let verdict = match ctx.config.delegate.claude_code.permissions {
        ClaudePermissions::Ask => {
            ctx.progress(format!("? {tool} {} (asking you)", input_summary(input)));
            match ctx
                .approver
                .ask_claude_permission(&format!("{tool} {input}"), ctx)
                .await
            {
                Ok(true) => Ok("approved".to_string()),
                Ok(false) => Err(crate::protocol::DENIED_BY_USER.to_string()),
                Err(why) => Err(why.to_string()),
            }
        }
        ClaudePermissions::LocalModel => {
            let verdict =
                super::local_model::decide(ctx, &asker.task, &asker.dir, tool, input).await;
            let (word, why) = match &verdict {
                Ok(why) => ("allowed", why),
                Err(why) => ("denied", why),
            };
            let line = format!("local model {word} {tool} {}: {why}", input_summary(input));
            tracing::info!(target: "egirl::delegate", "{line}");
            ctx.progress(line);
            verdict
        }
    };
    match verdict {
        Ok(_) => json!({"behavior": "allow", "updatedInput": input}),
        Err(why) => json!({"behavior": "deny", "message": format!("egirl: {why}")}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, ExecConfig};
    use crate::protocol::Origin;

    async fn rpc(url: &str, body: Value) -> (u16, Value) {
        let response = reqwest::Client::new()
            .post(url)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    #[tokio::test]
    async fn speaks_mcp_behind_its_token_and_denies_when_the_local_model_cannot_answer() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ToolContext::standalone(dir.path(), ExecConfig::default(), "t", Origin::Tui);
        let mut config = Config::default();
        config.delegate.claude_code.permissions = ClaudePermissions::LocalModel;
        // Nothing listens there: no answer is no permission.
        config.local.endpoint = "http://127.0.0.1:9".into();
        ctx.config = Arc::new(config);
        let server = start(ctx, "write a.txt", ".").await.unwrap();

        let wrong = server.url.rsplit_once('/').unwrap().0.to_string() + "/not-the-token";
        let (status, _) = rpc(
            &wrong,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
        assert_eq!(status, 404);

        let (_, init) = rpc(
            &server.url,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}),
        )
        .await;
        assert_eq!(init["result"]["serverInfo"]["name"], SERVER);
        let (_, list) = rpc(
            &server.url,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
        assert_eq!(list["result"]["tools"][0]["name"], TOOL);

        let (_, call) = rpc(
            &server.url,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": TOOL,
                "arguments": {"tool_name": "Bash", "input": {"command": "rm -rf /"}}
            }}),
        )
        .await;
        let text = call["result"]["content"][0]["text"].as_str().unwrap();
        let decision: Value = serde_json::from_str(text).unwrap();
        assert_eq!(decision["behavior"], "deny", "{decision}");
        assert!(
            decision["message"]
                .as_str()
                .unwrap()
                .contains("could not be asked")
        );
    }
}
