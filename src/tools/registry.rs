//! The one table of built-in tools: each entry pairs the spec the model is
//! offered with the function that runs it, so a tool cannot be offered
//! without being implemented, nor implemented and forgotten in the list.
//!
//! The table's order is the order of the tool list in the prompt, which
//! stays byte-identical from request to request (prefix cache).

use std::collections::HashMap;
use std::ffi::OsString;
use std::future::Future;
use std::pin::Pin;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{ToolContext, ToolOutput, builtin, catalog, mcp};
use crate::chat::ToolSpec;
use crate::config::{Config, WebFetchPolicy};

/// What running a tool returns: its output, once the call is done.
pub type RunFuture<'a> = Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>>;

/// How a built-in is put before the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    /// Its whole spec in the tool list: the tools most turns use.
    Whole,
    /// Its name and this one-line purpose in the catalog tool's description
    /// ([`catalog`]); the schema comes on demand. The model may still call
    /// it by its own name.
    Catalog(&'static str),
}

/// A built-in tool: its name, its spec, how and when it is offered, and
/// its runner.
pub struct ToolEntry {
    /// The name the model calls it by (the spec's name).
    pub name: &'static str,
    /// Its spec under a config (most ignore it; `delegate` names the
    /// configured agents).
    pub spec: fn(&Config) -> ToolSpec,
    /// In the fixed set [`specs`] lists (the prompt measured by the
    /// benches, exports, unattended turns); false: only [`offered`] adds
    /// it, once configured.
    pub fixed: bool,
    /// Whether the tool is offered under a config.
    pub offered_when: fn(&Config) -> bool,
    /// Whole in the tool list, or named in the catalog.
    pub listing: Listing,
    pub run: for<'a> fn(&'a Value, &'a ToolContext) -> RunFuture<'a>,
}

/// An entry for `builtin::$tool`, whose `spec` and `run` it names.
/// `catalog: "purpose"` lists it in the catalog instead of whole.
macro_rules! tool {
    ($tool:ident, fixed: $fixed:expr, offered_when: $when:expr, spec: $spec:expr, listing: $listing:expr) => {
        ToolEntry {
            name: stringify!($tool),
            spec: $spec,
            fixed: $fixed,
            offered_when: $when,
            listing: $listing,
            run: |args, ctx| Box::pin(builtin::$tool::run(args, ctx)),
        }
    };
    ($tool:ident, fixed: $fixed:expr, offered_when: $when:expr, listing: $listing:expr) => {
        tool!($tool, fixed: $fixed, offered_when: $when,
            spec: |_config| builtin::$tool::spec(), listing: $listing)
    };
    ($tool:ident, fixed: $fixed:expr, offered_when: $when:expr) => {
        tool!($tool, fixed: $fixed, offered_when: $when, listing: Listing::Whole)
    };
    ($tool:ident, fixed: $fixed:expr, offered_when: $when:expr, catalog: $purpose:expr) => {
        tool!($tool, fixed: $fixed, offered_when: $when, listing: Listing::Catalog($purpose))
    };
    ($tool:ident, catalog: $purpose:expr) => {
        tool!($tool, fixed: true, offered_when: |_| true, catalog: $purpose)
    };
    ($tool:ident) => {
        tool!($tool, fixed: true, offered_when: |_| true)
    };
}

/// Every built-in tool, in prompt order (whole ones first in the list,
/// then the catalog naming the others in this order).
pub static BUILTIN_TOOLS: &[ToolEntry] = &[
    tool!(read_file),
    tool!(write_file),
    tool!(edit_file),
    tool!(glob),
    tool!(exec),
    tool!(memory_search),
    tool!(memory_get, catalog: "read lines of a memory file (after memory_search)"),
    tool!(memory_save),
    tool!(create_skill, catalog: "save a reusable skill (instructions for a task)"),
    tool!(list_skills, catalog: "list installed skills"),
    tool!(cron_add, catalog: "schedule a message to yourself (at, every, cron)"),
    tool!(cron_list, catalog: "list scheduled jobs"),
    tool!(cron_remove, catalog: "delete a scheduled job"),
    tool!(web_fetch, fixed: true, offered_when: |config| {
        config.tools.web.fetch != WebFetchPolicy::Off
    }),
    // Offered with `[tools.browser] enabled` when a Chromium is found
    // (and web requests are not off: every one would be refused).
    tool!(browser, fixed: true, offered_when: |config| {
        let browser = &config.tools.browser;
        config.tools.web.fetch != WebFetchPolicy::Off
            && browser.enabled
            && installed("chromium", &browser.executable, || browser.chromium().is_ok())
    }),
    // Offered with `[tools.web.search]`.
    tool!(web_search, fixed: false, offered_when: |config| {
        let search = config.tools.web.search.as_ref();
        search.is_some_and(|s| s.endpoint().is_ok())
    }, catalog: "search the web"),
    // Offered when its `claude` exists.
    tool!(delegate_claude_code, fixed: false, offered_when: |config| {
        let claude = &config.delegate.claude_code;
        installed("claude", &claude.binary, || claude.executable().is_ok())
    }, catalog: "hand a coding task to Claude Code"),
    // Offered with at least one `[delegate.agents.NAME]`, whole: its spec
    // names the agents the user configured, which the model should see
    // without asking.
    tool!(delegate, fixed: false, offered_when: builtin::delegate::offered,
        spec: builtin::delegate::spec_for, listing: Listing::Whole),
];

/// How long a program found (or not) on PATH is taken as found (or not)
/// for the tool list: installing one while egirl runs offers its tool
/// within this long.
const INSTALLED_FOR: Duration = Duration::from_secs(60);

/// Whether `program` (configured as `configured`) is installed, as `look`
/// says; the answer for a name looked up on PATH is kept `INSTALLED_FOR`
/// per PATH. The tool list is built every turn, and a PATH scan is a stat
/// per directory and candidate name (the browser's four names: dozens).
/// A path (with a `/`) is one stat and asked each time; a call of the tool
/// always looks the program up afresh.
fn installed(program: &str, configured: &str, look: impl FnOnce() -> bool) -> bool {
    type Seen = HashMap<(String, String, OsString), (bool, Instant)>;
    static SEEN: LazyLock<Mutex<Seen>> = LazyLock::new(Mutex::default);
    if configured.contains('/') {
        return look();
    }
    let key = (
        program.to_string(),
        configured.to_string(),
        std::env::var_os("PATH").unwrap_or_default(),
    );
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((found, at)) = seen.get(&key)
        && at.elapsed() < INSTALLED_FOR
    {
        return *found;
    }
    let found = look();
    seen.insert(key, (found, Instant::now()));
    found
}

/// The fixed set of tools, in prompt order (see [`ToolEntry::fixed`]):
/// the whole ones, then the catalog.
pub fn specs() -> Vec<ToolSpec> {
    specs_where(&|_| true)
}

/// The fixed set, less the tools `keep` refuses (a webhook turn's).
pub fn specs_where(keep: &dyn Fn(&str) -> bool) -> Vec<ToolSpec> {
    // The fixed tools' specs do not depend on the config.
    static DEFAULTS: std::sync::LazyLock<Config> = std::sync::LazyLock::new(Config::default);
    listed(
        BUILTIN_TOOLS
            .iter()
            .filter(|tool| tool.fixed && keep(tool.name)),
        &DEFAULTS,
    )
}

/// The tools offered under `config`: the fixed set less what is switched
/// off (`[tools.web] fetch = "off"`), plus what is configured and usable
/// (`web_search` with `[tools.web.search]`, `delegate_claude_code` when its
/// `claude` exists), in prompt order.
pub fn offered(config: &Config) -> Vec<ToolSpec> {
    offered_where(config, &|_| true)
}

/// [`offered`], less the tools `keep` refuses (a webhook turn's): the
/// catalog then names only what the turn may run.
pub fn offered_where(config: &Config, keep: &dyn Fn(&str) -> bool) -> Vec<ToolSpec> {
    listed_named(config, &offered_names(config, keep))
}

/// The built-ins [`offered_where`] lists, by name in table order: all its
/// list depends on besides the config (the core builds a list once per set
/// of names and keeps it).
pub fn offered_names(config: &Config, keep: &dyn Fn(&str) -> bool) -> Vec<&'static str> {
    BUILTIN_TOOLS
        .iter()
        .filter(|tool| {
            (tool.offered_when)(config)
                && keep(tool.name)
                && super::policy::permitted(config, tool.name)
        })
        .map(|tool| tool.name)
        .collect()
}

/// The tool list of the built-ins `names` ([`offered_names`]) under `config`.
pub fn listed_named(config: &Config, names: &[&str]) -> Vec<ToolSpec> {
    listed(
        BUILTIN_TOOLS
            .iter()
            .filter(|tool| names.contains(&tool.name)),
        config,
    )
}

/// The whole specs in table order, then the catalog tool naming the rest
/// (none to name: no catalog tool).
fn listed<'a>(entries: impl Iterator<Item = &'a ToolEntry>, config: &Config) -> Vec<ToolSpec> {
    let mut specs = Vec::new();
    let mut listed = Vec::new();
    for tool in entries {
        match tool.listing {
            Listing::Whole => specs.push((tool.spec)(config)),
            Listing::Catalog(purpose) => listed.push((tool.name, purpose)),
        }
    }
    specs.extend(catalog::spec(&listed));
    specs
}

/// Runs the named tool. Unknown names are a tool error for the model, not a crash.
pub async fn run(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    if let Some(tool) = BUILTIN_TOOLS.iter().find(|tool| tool.name == name) {
        return (tool.run)(args, ctx).await;
    }
    if name == catalog::NAME {
        return run_catalog(args, ctx).await;
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

/// The catalog tool: `{name}` gives the schema, `{name, arguments}` runs
/// the tool (in a turn the agent has already made that the tool's own call).
async fn run_catalog(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let name = match super::arg_str(args, "name") {
        Ok(name) => name.trim(),
        Err(e) => return e,
    };
    let call = crate::chat::ToolCall {
        id: ctx.call_id.clone(),
        name: catalog::NAME.to_string(),
        arguments: args.clone(),
        arguments_error: None,
    };
    let resolved = call.resolved();
    let target = BUILTIN_TOOLS
        .iter()
        .find(|tool| tool.name == resolved.name.as_str() || tool.name == name);
    match (target, resolved.name != catalog::NAME) {
        (_, true) if resolved.arguments_error.is_some() => ToolOutput::fail(format!(
            "{}; send `arguments` as a JSON object",
            resolved.arguments_error.as_deref().unwrap_or_default()
        )),
        (Some(tool), true) => (tool.run)(&resolved.arguments, ctx).await,
        (Some(tool), false) => catalog::schema(&(tool.spec)(&ctx.config)),
        (None, _) => {
            let named = |whole: bool| -> Vec<&str> {
                BUILTIN_TOOLS
                    .iter()
                    .filter(|tool| (tool.listing == Listing::Whole) == whole)
                    .map(|tool| tool.name)
                    .collect()
            };
            catalog::unknown(name, &named(false), &named(true))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn a_program_on_path_is_looked_up_once_a_path_each_time() {
        let looked = std::cell::Cell::new(0);
        let look = |found| {
            looked.set(looked.get() + 1);
            found
        };
        // A name no other test uses: the answer is kept per process.
        assert!(installed("test-program", "only-here", || look(true)));
        assert!(installed("test-program", "only-here", || look(false)));
        assert_eq!(looked.get(), 1);
        assert!(!installed("test-program", "/bin/only-here", || look(false)));
        assert!(installed("test-program", "/bin/only-here", || look(true)));
        assert_eq!(looked.get(), 3);
    }

    #[test]
    fn every_tool_is_named_by_its_spec_once() {
        let mut seen = HashSet::new();
        for tool in BUILTIN_TOOLS {
            assert_eq!((tool.spec)(&Config::default()).name, tool.name);
            assert!(seen.insert(tool.name), "{} twice", tool.name);
        }
    }

    #[test]
    fn every_offered_spec_has_a_runner() {
        let mut runners: HashSet<&str> = BUILTIN_TOOLS.iter().map(|tool| tool.name).collect();
        // The catalog is run by `run` itself.
        runners.insert(catalog::NAME);
        let mut config = Config::default();
        config.tools.web.fetch = WebFetchPolicy::Allow;
        for spec in specs().iter().chain(&offered(&config)) {
            assert!(runners.contains(spec.name), "{} has no runner", spec.name);
        }
    }

    #[test]
    fn core_tools_are_whole_and_the_catalog_names_the_rest_last() {
        let names = |specs: &[ToolSpec]| specs.iter().map(|s| s.name).collect::<Vec<_>>();
        let fixed = specs();
        assert_eq!(
            names(&fixed),
            [
                "read_file",
                "write_file",
                "edit_file",
                "glob",
                "exec",
                "memory_search",
                "memory_save",
                "web_fetch",
                "browser",
                "more_tools"
            ]
        );
        let catalog = fixed.last().unwrap().description;
        assert!(
            catalog.contains("\nmemory_get: ")
                && catalog.ends_with("\ncron_remove: delete a scheduled job"),
            "{catalog}"
        );
        // Byte-identical from request to request (prefix cache).
        assert_eq!(fixed, specs());

        let mut config = Config::default();
        config.tools.web.search = Some(crate::config::WebSearchConfig {
            provider: crate::config::SearchProvider::Searxng,
            endpoint: Some("http://127.0.0.1:9".into()),
        });
        let everything = offered(&config);
        assert!(
            everything
                .last()
                .unwrap()
                .description
                .contains("\nweb_search: search the web")
        );
        // A narrower turn (a webhook's) gets a catalog of what it may run.
        let read_only = offered_where(&config, &|name| name == "read_file" || name == "cron_list");
        assert_eq!(names(&read_only), ["read_file", "more_tools"]);
        assert!(
            read_only[1]
                .description
                .ends_with("it.\ncron_list: list scheduled jobs")
        );
        let none = offered_where(&config, &|name| name == "read_file");
        assert_eq!(names(&none), ["read_file"]);
    }

    #[tokio::test]
    async fn the_catalog_gives_a_schema_runs_a_tool_and_lists_what_exists() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::tools::approval::test_context(dir.path(), Default::default());
        let catalog = async |args: Value| run(catalog::NAME, &args, &ctx).await;
        let out = catalog(serde_json::json!({"name": "cron_remove"})).await;
        assert!(out.success, "{}", out.output);
        assert!(
            out.output
                .starts_with("cron_remove: Delete a scheduled job"),
            "{}",
            out.output
        );
        assert!(
            out.output.contains(r#""required":["name"]"#),
            "{}",
            out.output
        );

        let via = catalog(serde_json::json!({"name": "cron_list", "arguments": "{}"})).await;
        let direct = run("cron_list", &serde_json::json!({}), &ctx).await;
        assert!(via.success, "{}", via.output);
        assert_eq!(via, direct);

        let out = catalog(serde_json::json!({"name": "crontab"})).await;
        assert!(!out.success);
        assert!(
            out.output
                .starts_with("unknown tool `crontab`; more_tools has: memory_get, "),
            "{}",
            out.output
        );
        assert!(
            out.output.contains("listed whole: read_file, "),
            "{}",
            out.output
        );
        let bad = catalog(serde_json::json!({"name": "cron_list", "arguments": "{nope"})).await;
        assert!(
            !bad.success && bad.output.contains("not JSON"),
            "{}",
            bad.output
        );
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
