//! The tool list a turn offers, built once per set of tools and shared
//! after: every turn of every session offers the same list until the
//! tools found on PATH, the MCP servers' tools or the turn's origin
//! change it, and building one (its schemas as JSON) and copying it into
//! each request cost more than checking what it is made of.

use std::sync::{Arc, Mutex};

use super::unattended::tool_allowed;
use crate::chat::ToolSpec;
use crate::config::Config;
use crate::protocol::Origin;
use crate::tools::registry::{listed_named, offered_names};

/// The lists built lately; a list no longer offered drops out after this many others.
const KEPT: usize = 4;

/// One agent's tool lists (its config's: one `ToolLists` per config).
#[derive(Default)]
pub(crate) struct ToolLists {
    kept: Mutex<Vec<Kept>>,
}

/// A list and what it was built from.
struct Kept {
    builtins: Vec<&'static str>,
    mcp: Vec<ToolSpec>,
    list: Arc<[ToolSpec]>,
}

impl ToolLists {
    /// The tools a turn from `origin` is offered under `config`: the
    /// built-ins `tools::offered_where` picks, then `mcp` (what its
    /// session's MCP servers offer), less what `origin` may not call (a
    /// webhook turn's: the catalog then names only what it may call).
    /// Other origins get the full list, byte for byte (the prefix cache of
    /// their sessions). The same parts give the same list, not a copy.
    pub fn offered(&self, origin: &Origin, config: &Config, mcp: Vec<ToolSpec>) -> Arc<[ToolSpec]> {
        let keep = |tool: &str| tool_allowed(origin, tool, &config.webhook.tools);
        let builtins = offered_names(config, &keep);
        let mcp: Vec<ToolSpec> = mcp.into_iter().filter(|spec| keep(spec.name)).collect();
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kept.iter().find(|k| k.builtins == builtins && k.mcp == mcp) {
            return k.list.clone();
        }
        let mut specs = listed_named(config, &builtins);
        specs.extend(mcp.iter().cloned());
        let list: Arc<[ToolSpec]> = specs.into();
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push(Kept {
            builtins,
            mcp,
            list: list.clone(),
        });
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mcp_tool(description: &'static str) -> ToolSpec {
        ToolSpec {
            name: "mcp",
            description,
            parameters: serde_json::json!({"type": "object"}),
        }
    }

    #[test]
    fn the_same_parts_give_the_same_list_other_parts_another() {
        let (lists, config) = (ToolLists::default(), Config::default());
        let tui = lists.offered(&Origin::Tui, &config, Vec::new());
        assert_eq!(&tui[..], crate::tools::offered(&config).as_slice());
        let again = lists.offered(&Origin::Tui, &config, Vec::new());
        assert!(Arc::ptr_eq(&tui, &again), "built again");

        // A webhook turn: the read-only built-ins only.
        let webhook = lists.offered(&Origin::Webhook, &config, Vec::new());
        assert!(webhook.iter().all(|t| t.name != "exec"), "{webhook:?}");
        assert!(tui.iter().any(|t| t.name == "exec"));

        // The MCP servers' tools follow the built-ins; when they change,
        // so does the list.
        let with_mcp = lists.offered(&Origin::Tui, &config, vec![mcp_tool("one")]);
        assert_eq!(with_mcp.len(), tui.len() + 1);
        assert_eq!(with_mcp.last(), Some(&mcp_tool("one")));
        let changed = lists.offered(&Origin::Tui, &config, vec![mcp_tool("two")]);
        assert_eq!(changed.last(), Some(&mcp_tool("two")));
        // Lists seen lately are still kept.
        let back = lists.offered(&Origin::Tui, &config, Vec::new());
        assert!(Arc::ptr_eq(&tui, &back));
    }

    #[test]
    fn a_tool_switched_off_in_the_config_leaves_the_list() {
        let mut config = Config::default();
        config.tools.deny = vec!["exec".into()];
        let list = ToolLists::default().offered(&Origin::Tui, &config, Vec::new());
        assert!(list.iter().all(|t| t.name != "exec"), "{list:?}");
        assert_eq!(&list[..], crate::tools::offered(&config).as_slice());
    }
}
