//! The one table of built-in tools: each entry pairs the spec the model is
//! offered with the function that runs it, so a tool cannot be offered
//! without being implemented, nor implemented and forgotten in the list.
//!
//! The table's order is the order of the tool list in the prompt, which
//! stays byte-identical from request to request (prefix cache).

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::{ToolContext, ToolOutput, builtin, mcp};
use crate::chat::ToolSpec;
use crate::config::{Config, WebFetchPolicy};

/// What running a tool returns: its output, once the call is done.
pub type RunFuture<'a> = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>>;

/// A built-in tool: its name, its spec, when it is offered, and its runner.
pub struct ToolEntry {
    /// The name the model calls it by (the spec's name).
    pub name: &'static str,
    pub spec: fn() -> ToolSpec,
    /// In the fixed set [`specs`] lists (the prompt measured by the
    /// benches, exports, unattended turns); false: only [`offered`] adds
    /// it, once configured.
    pub fixed: bool,
    /// Whether the tool is offered under a config.
    pub offered_when: fn(&Config) -> bool,
    pub run: for<'a> fn(&'a Value, &'a ToolContext) -> RunFuture<'a>,
}

/// An entry for `builtin::$tool`, whose `spec` and `run` it names.
macro_rules! tool {
    ($tool:ident, fixed: $fixed:expr, offered_when: $when:expr) => {
        ToolEntry {
            name: stringify!($tool),
            spec: builtin::$tool::spec,
            fixed: $fixed,
            offered_when: $when,
            run: |args, ctx| Box::pin(builtin::$tool::run(args, ctx)),
        }
    };
    ($tool:ident) => {
        tool!($tool, fixed: true, offered_when: |_| true)
    };
}

/// Every built-in tool, in prompt order.
pub static BUILTIN_TOOLS: &[ToolEntry] = &[
    tool!(read_file),
    tool!(write_file),
    tool!(edit_file),
    tool!(glob),
    tool!(exec),
    tool!(memory_search),
    tool!(memory_get),
    tool!(memory_save),
    tool!(create_skill),
    tool!(list_skills),
    tool!(cron_add),
    tool!(cron_list),
    tool!(cron_remove),
    tool!(web_fetch, fixed: true, offered_when: |config| {
        config.tools.web.fetch != WebFetchPolicy::Off
    }),
    // Offered with `[tools.browser] enabled` when a Chromium is found
    // (and web requests are not off: every one would be refused).
    tool!(browser, fixed: true, offered_when: |config| {
        let browser = &config.tools.browser;
        config.tools.web.fetch != WebFetchPolicy::Off
            && browser.enabled
            && browser.chromium().is_ok()
    }),
    // Offered with `[tools.web.search]`.
    tool!(web_search, fixed: false, offered_when: |config| {
        let search = config.tools.web.search.as_ref();
        search.is_some_and(|s| s.endpoint().is_ok())
    }),
    // Offered when its `claude` exists.
    tool!(delegate_claude_code, fixed: false, offered_when: |config| {
        config.delegate.claude_code.executable().is_ok()
    }),
];

/// The fixed set of tools, in prompt order (see [`ToolEntry::fixed`]).
pub fn specs() -> Vec<ToolSpec> {
    BUILTIN_TOOLS
        .iter()
        .filter(|tool| tool.fixed)
        .map(|tool| (tool.spec)())
        .collect()
}

/// The tools offered under `config`: the fixed set less what is switched
/// off (`[tools.web] fetch = "off"`), plus what is configured and usable
/// (`web_search` with `[tools.web.search]`, `delegate_claude_code` when its
/// `claude` exists), in prompt order.
pub fn offered(config: &Config) -> Vec<ToolSpec> {
    BUILTIN_TOOLS
        .iter()
        .filter(|tool| (tool.offered_when)(config))
        .map(|tool| (tool.spec)())
        .collect()
}

/// Runs the named tool. Unknown names are a tool error for the model, not a crash.
pub async fn run(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    if let Some(tool) = BUILTIN_TOOLS.iter().find(|tool| tool.name == name) {
        return (tool.run)(args, ctx).await;
    }
    if mcp::is_mcp_tool(name) {
        return mcp::run(name, args, ctx).await;
    }
    let known: Vec<&str> = BUILTIN_TOOLS
        .iter()
        .filter(|tool| tool.fixed)
        .map(|tool| tool.name)
        .collect();
    ToolOutput::fail(format!(
        "unknown tool `{name}`; available tools: {}",
        known.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_tool_is_named_by_its_spec_once() {
        let mut seen = HashSet::new();
        for tool in BUILTIN_TOOLS {
            assert_eq!((tool.spec)().name, tool.name);
            assert!(seen.insert(tool.name), "{} twice", tool.name);
        }
    }

    #[test]
    fn every_offered_spec_has_a_runner() {
        let runners: HashSet<&str> = BUILTIN_TOOLS.iter().map(|tool| tool.name).collect();
        let mut config = Config::default();
        config.tools.web.fetch = WebFetchPolicy::Allow;
        for spec in specs().iter().chain(&offered(&config)) {
            assert!(runners.contains(spec.name), "{} has no runner", spec.name);
        }
    }

    #[tokio::test]
    async fn an_unknown_tool_lists_the_fixed_set() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::tools::approval::test_context(dir.path(), Default::default());
        let out = run("nope", &serde_json::json!({}), &ctx).await;
        assert!(!out.success);
        assert!(
            out.output
                .starts_with("unknown tool `nope`; available tools: read_file, write_file")
        );
        assert!(
            out.output.ends_with("cron_remove, web_fetch, browser"),
            "{}",
            out.output
        );
    }
}
