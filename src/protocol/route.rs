//! Which model a turn went to, said once: a [`Route`] (a local role or a
//! remote provider) plus the model's name.
//!
//! On the wire a route stays the three fields version 0 of `--json` wrote
//! (`target`, `provider`, `role`), and an escalation's ends stay
//! `provider/model` strings, so existing readers of the events keep working.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Target;

/// The provider name local routes go by in events and logs.
pub const LOCAL_PROVIDER: &str = "llamacpp";

/// Which local model a request is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LocalRole {
    /// `[local]`: the main model.
    Main,
    /// `[local.fast]`: classification, compaction summaries, heartbeat
    /// turns and (with `[routing] fast_for_quick`) quick turns.
    Fast,
}

impl LocalRole {
    /// The name the routing event and pane use.
    pub fn as_str(self) -> &'static str {
        match self {
            LocalRole::Main => "local",
            LocalRole::Fast => "local-fast",
        }
    }
}

/// Where a turn (or an escalation's end) went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "RouteFields", from = "RouteFields")]
pub enum Route {
    /// A local llama-server role.
    Local(LocalRole),
    /// A remote provider, by its name (`anthropic`, `openai`, ...).
    Remote(String),
}

impl Route {
    /// The side `/local` and `/remote` force.
    pub fn target(&self) -> Target {
        match self {
            Route::Local(_) => Target::Local,
            Route::Remote(_) => Target::Remote,
        }
    }

    /// `llamacpp` for a local route, else the remote provider's name.
    pub fn provider(&self) -> &str {
        match self {
            Route::Local(_) => LOCAL_PROVIDER,
            Route::Remote(name) => name,
        }
    }

    /// `local`, `local-fast` or `remote`: what the routing pane shows.
    pub fn name(&self) -> &'static str {
        match self {
            Route::Local(role) => role.as_str(),
            Route::Remote(_) => "remote",
        }
    }
}

/// A route's wire form (version 0 of `--json`).
#[derive(Clone, Serialize, Deserialize)]
struct RouteFields {
    target: Target,
    provider: String,
    /// Absent from the oldest events: read as the main local model.
    #[serde(default)]
    role: String,
}

impl From<Route> for RouteFields {
    fn from(route: Route) -> Self {
        RouteFields {
            target: route.target(),
            provider: route.provider().to_string(),
            role: route.name().to_string(),
        }
    }
}

impl From<RouteFields> for Route {
    fn from(fields: RouteFields) -> Self {
        Route::from_fields(fields.target, fields.provider, &fields.role)
    }
}

impl Route {
    /// The route version 0's `target`, `provider` and `role` fields name.
    pub(super) fn from_fields(target: Target, provider: String, role: &str) -> Route {
        match target {
            Target::Remote => Route::Remote(provider),
            Target::Local if role == LocalRole::Fast.as_str() => Route::Local(LocalRole::Fast),
            Target::Local => Route::Local(LocalRole::Main),
        }
    }
}

/// A route and the model it serves: an escalation's `from` and `to`,
/// written `provider/model` on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub struct RoutedModel {
    pub route: Route,
    /// `None` for a provider named alone (a line without a slash); an
    /// empty model (`[local] model = ""`) is still written `llamacpp/`.
    pub model: Option<String>,
}

impl fmt::Display for RoutedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.model {
            None => f.write_str(self.route.provider()),
            Some(model) => write!(f, "{}/{model}", self.route.provider()),
        }
    }
}

impl From<RoutedModel> for String {
    fn from(routed: RoutedModel) -> Self {
        routed.to_string()
    }
}

impl From<&str> for RoutedModel {
    fn from(text: &str) -> Self {
        RoutedModel::from(text.to_string())
    }
}

impl From<String> for RoutedModel {
    /// `llamacpp/<model>` is the main local model (escalations leave it);
    /// any other `provider/<model>` a remote one. A model name may hold
    /// slashes of its own (`openrouter/anthropic/claude`), a provider's not.
    /// A name without a slash is a provider alone (written back as it was).
    fn from(text: String) -> Self {
        let (provider, model) = match text.split_once('/') {
            Some((provider, model)) => (provider, Some(model.to_string())),
            None => (text.as_str(), None),
        };
        let route = if provider == LOCAL_PROVIDER {
            Route::Local(LocalRole::Main)
        } else {
            Route::Remote(provider.to_string())
        };
        RoutedModel { route, model }
    }
}
