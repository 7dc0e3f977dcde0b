//! What the core does differently for turns nobody typed: a heartbeat
//! reply that only says "all is well" goes nowhere, and a webhook turn
//! (its text came from the network) gets the read-only tools only.

use crate::chat::ToolSpec;
use crate::config::Config;
use crate::protocol::Origin;

/// The token a heartbeat reply carries when there is nothing to report.
pub const HEARTBEAT_OK: &str = "HEARTBEAT_OK";

/// A remainder this short next to the token is an acknowledgement ("all
/// quiet."), not news; anything longer is delivered.
const ACK_MAX_CHARS: usize = 30;

/// Tools that neither run commands nor change files: always offered.
const READ_ONLY_TOOLS: &[&str] = &[
    "read_file",
    "glob",
    "cron_list",
    "list_skills",
    "memory_search",
    "memory_get",
];

/// A heartbeat reply as it should be delivered: `None` when it is only
/// `HEARTBEAT_OK` (at its start or end, markdown emphasis allowed) with
/// nothing substantial left. A token in the middle of the text is part of
/// the message and left alone.
pub fn heartbeat_reply(reply: &str) -> Option<String> {
    let is_decoration = |c: char| c.is_whitespace() || matches!(c, '*' | '_' | '`');
    let is_trailer = |c: char| is_decoration(c) || matches!(c, '.' | '!' | ':' | '-');
    let text = reply.trim();
    let rest = if let Some(rest) = text
        .trim_start_matches(is_decoration)
        .strip_prefix(HEARTBEAT_OK)
    {
        rest.trim_start_matches(is_trailer)
    } else if let Some(rest) = text.trim_end_matches(is_trailer).strip_suffix(HEARTBEAT_OK) {
        rest.trim_end_matches(is_decoration)
    } else {
        return Some(text.to_string()).filter(|t| !t.is_empty());
    };
    let rest = rest.trim();
    (rest.chars().count() > ACK_MAX_CHARS).then(|| rest.to_string())
}

/// Whether a turn from `origin` may call `tool`. Webhook bodies are
/// untrusted text: no commands and no file writes unless `[webhook] tools`
/// lists them.
pub fn tool_allowed(origin: &Origin, tool: &str, webhook_tools: &[String]) -> bool {
    match origin {
        // MCP tools: `tools::mcp` lets a webhook turn run read-only ones only.
        // The catalog only shows schemas: its calls are checked as the
        // tool they run (`ToolCall::resolved`).
        Origin::Webhook => {
            READ_ONLY_TOOLS.contains(&tool)
                || tool == crate::tools::catalog::NAME
                || crate::tools::mcp::is_mcp_tool(tool)
                || webhook_tools.iter().any(|t| t == tool)
        }
        _ => true,
    }
}

/// What the model is told when it calls a tool its origin may not use.
pub fn tool_refusal(tool: &str) -> String {
    format!(
        "`{tool}` is not available in a webhook-started turn: the webhook body is untrusted text. \
         Answer with what the read-only tools can find (the owner can allow it in [webhook] tools)"
    )
}

/// The fixed set of built-ins (`tools::specs`) a turn from `origin` may
/// call, less what the agent's `[tools] allow/deny` leaves out.
pub fn fixed_tools(origin: &Origin, config: &Config) -> Vec<ToolSpec> {
    crate::tools::specs_where(&|tool| {
        tool_allowed(origin, tool, &config.webhook.tools)
            && crate::tools::policy::permitted(config, tool)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_alone_at_either_end_drops_the_reply() {
        assert_eq!(heartbeat_reply("HEARTBEAT_OK"), None);
        assert_eq!(heartbeat_reply("  **HEARTBEAT_OK**\n"), None);
        assert_eq!(heartbeat_reply("HEARTBEAT_OK. All quiet."), None);
        assert_eq!(heartbeat_reply("Nothing to report. HEARTBEAT_OK"), None);
    }

    #[test]
    fn news_beside_the_token_is_delivered_without_it() {
        let news = "Your 15:00 meeting moved to 16:00; the invite is in your inbox.";
        assert_eq!(
            heartbeat_reply(&format!("HEARTBEAT_OK\n\n{news}")).as_deref(),
            Some(news)
        );
        assert_eq!(
            heartbeat_reply(&format!("{news}\n**HEARTBEAT_OK**")).as_deref(),
            Some(news)
        );
    }

    #[test]
    fn a_token_in_the_middle_is_part_of_the_message() {
        let text = "I would normally say HEARTBEAT_OK, but the backup failed at 03:00.";
        assert_eq!(heartbeat_reply(text).as_deref(), Some(text));
    }

    #[test]
    fn webhook_turns_get_read_only_tools_unless_allowed() {
        let none: Vec<String> = Vec::new();
        assert!(tool_allowed(&Origin::Webhook, "read_file", &none));
        assert!(!tool_allowed(&Origin::Webhook, "exec", &none));
        assert!(!tool_allowed(&Origin::Webhook, "write_file", &none));
        assert!(!tool_allowed(&Origin::Webhook, "cron_add", &none));
        assert!(tool_allowed(
            &Origin::Webhook,
            "exec",
            &["exec".to_string()]
        ));
        assert!(tool_allowed(&Origin::Tui, "exec", &none));
        assert!(tool_allowed(&Origin::Cron("j".into()), "write_file", &none));
    }
}
