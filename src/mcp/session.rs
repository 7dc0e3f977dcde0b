//! The MCP servers a session's client brings (`egirl acp`: the editor's
//! `mcpServers` in `session/new` and `session/load`). The editor is the
//! user here, so they run as configured servers do (the same spawner,
//! egirl's environment without its secrets plus the variables the editor
//! gives, read-only tools unasked and the others asked), but only that
//! session's turns are offered them, and they stop when the session's
//! client goes (an empty list), when the session gets another list, or
//! when egirl exits. What arrives is bounded: how many servers, how long
//! a name, how many arguments and variables; a command must be given.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::McpManager;
use super::State;
use super::server::{Reporter, Server, lock};
use crate::bus::EventBus;
use crate::config::{McpApproval, McpServerConfig};
use crate::protocol::{EventKind, Notice, Origin, SessionMcpServer};

/// At most this many servers per session.
pub const MAX_SERVERS: usize = 16;
/// A server's name is cut to this many characters.
pub const MAX_NAME: usize = 32;
/// At most this many arguments, and this many variables or headers, per server.
const MAX_ARGS: usize = 256;
const MAX_VARS: usize = 256;

/// The servers one session's client brought.
pub(super) struct SessionServers {
    pub servers: Vec<Arc<Server>>,
    stop: CancellationToken,
}

/// A session server's failures go to its session, as notices.
struct SessionReporter {
    bus: Option<EventBus>,
    session: String,
}

impl Reporter for SessionReporter {
    fn changed(&self) {}
    fn notice(&self, message: String) {
        if let Some(bus) = &self.bus {
            bus.emit(
                &self.session,
                &Origin::Acp,
                EventKind::Notice(Notice { message }),
            );
        }
    }
}

impl McpManager {
    /// Connects `servers` for `session`, in place of the ones it had
    /// (stopped); none stops them. Ok: what to tell the user (the names
    /// its turns call them by); Err: why none was started (over a bound).
    pub fn set_session_servers(
        &self,
        session: &str,
        servers: Vec<SessionMcpServer>,
    ) -> Result<String, String> {
        let taken: Vec<&str> = self.servers.iter().map(|s| s.name.as_str()).collect();
        let (checked, renamed) = checked(&taken, servers)?;
        self.stop_session(session);
        if checked.is_empty() {
            return Ok("no MCP servers from the editor for this session".into());
        }
        let stop = self.stop.child_token();
        let report: Arc<dyn Reporter> = Arc::new(SessionReporter {
            bus: self.bus.clone(),
            session: session.to_string(),
        });
        let servers: Vec<Arc<Server>> = checked
            .into_iter()
            .map(|(name, config)| Arc::new(Server::from_client(&name, config)))
            .collect();
        for server in &servers {
            let supervise =
                server
                    .clone()
                    .supervise(self.launch.clone(), report.clone(), stop.clone());
            let server = server.clone();
            tokio::spawn(async move {
                supervise.await;
                server.kill_group();
            });
        }
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        let mut message = format!("MCP servers from the editor: {}", names.join(", "));
        for note in renamed {
            message.push_str("; ");
            message.push_str(&note);
        }
        lock(&self.sessions).insert(session.to_string(), SessionServers { servers, stop });
        Ok(message)
    }

    /// The configured servers, then those `session`'s client brought.
    pub(super) fn servers_for(&self, session: &str) -> Vec<Arc<Server>> {
        let mut servers = self.servers.clone();
        if let Some(brought) = lock(&self.sessions).get(session) {
            servers.extend(brought.servers.iter().cloned());
        }
        servers
    }

    /// Stops the servers `session`'s client brought: supervisors
    /// cancelled, process groups killed.
    fn stop_session(&self, session: &str) {
        let stopped = lock(&self.sessions).remove(session);
        if let Some(stopped) = stopped {
            stopped.stop.cancel();
            for server in &stopped.servers {
                server.kill_group();
            }
        }
    }

    /// Every session's servers stopped (egirl exits).
    pub(super) fn stop_sessions(&self) {
        let sessions: Vec<String> = lock(&self.sessions).keys().cloned().collect();
        for session in sessions {
            self.stop_session(&session);
        }
    }

    /// Waits until none of `session`'s own servers is still on its first
    /// start (each gets at most its `startup_timeout`): its first turn is
    /// offered their tools. One that failed is not waited for again while
    /// it retries, nor are the configured servers (see `settled`).
    pub async fn session_settled(&self, session: &str) {
        let Some(servers) = lock(&self.sessions).get(session).map(|s| s.servers.clone()) else {
            return;
        };
        let longest = servers
            .iter()
            .map(|s| s.config.startup_timeout.0)
            .max()
            .unwrap_or_default();
        let starting = || {
            servers.iter().any(|s| {
                let inner = lock(&s.inner);
                inner.state == State::Starting && inner.last_error.is_none()
            })
        };
        let deadline = tokio::time::Instant::now() + longest + Duration::from_millis(500);
        while starting() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// [`McpManager::settled`], then `session`'s own servers.
    pub async fn settled_for(&self, session: &str) {
        self.settled().await;
        self.session_settled(session).await;
    }
}

/// The servers as configs under names of their own (`renamed` says which
/// were renamed), or why the list is refused.
type Checked = (Vec<(String, McpServerConfig)>, Vec<String>);

fn checked(taken: &[&str], servers: Vec<SessionMcpServer>) -> Result<Checked, String> {
    if servers.len() > MAX_SERVERS {
        return Err(format!(
            "the editor passed {} MCP servers; egirl connects at most {MAX_SERVERS} per session",
            servers.len()
        ));
    }
    let mut names: Vec<String> = taken.iter().map(|n| n.to_string()).collect();
    let mut renamed = Vec::new();
    let mut out = Vec::new();
    for (index, server) in servers.into_iter().enumerate() {
        let config = config_of(&server)?;
        let wanted = clean_name(&server.name, index);
        let name = unique(&wanted, &names);
        if name != server.name {
            let why = if names.contains(&wanted) {
                "taken"
            } else {
                "cleaned"
            };
            renamed.push(format!("`{}` is `{name}` ({why})", server.name));
        }
        names.push(name.clone());
        out.push((name, config));
    }
    Ok((out, renamed))
}

/// The config a server runs under: its transport as given, `approval =
/// "ask"`, the default timeouts.
fn config_of(server: &SessionMcpServer) -> Result<McpServerConfig, String> {
    let shown = server.name.chars().take(MAX_NAME).collect::<String>();
    let bad = |why: &str| Err(format!("MCP server `{shown}` from the editor: {why}"));
    let command = server.command.as_deref().map(str::trim);
    let url = server.url.as_deref().map(str::trim);
    match (command, url) {
        (Some(""), _) => return bad("its command is empty"),
        (Some(_), Some(_)) => return bad("give a command or a url, not both"),
        (None, None | Some("")) => return bad("it has neither a command nor a url"),
        _ => {}
    }
    if server.args.len() > MAX_ARGS {
        return bad(&format!("more than {MAX_ARGS} arguments"));
    }
    if server.env.len() > MAX_VARS || server.headers.len() > MAX_VARS {
        return bad(&format!("more than {MAX_VARS} variables or headers"));
    }
    Ok(McpServerConfig {
        command: command.map(str::to_string),
        args: server.args.clone(),
        env: server.env.clone(),
        cwd: server.cwd.clone(),
        url: url.map(str::to_string),
        headers: server.headers.clone(),
        approval: McpApproval::Ask,
        ..McpServerConfig::default()
    })
}

/// A name the tool names can carry (`mcp__<server>__<tool>` splits at the
/// first `__`): letters, digits, `-` and `_`, no `__`, not ending in `_`,
/// at most [`MAX_NAME`] characters; `editor-N` when nothing is left.
fn clean_name(name: &str, index: usize) -> String {
    let mut clean = String::new();
    for c in name.chars().take(MAX_NAME) {
        let c = match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
            _ => '-',
        };
        if !(c == '_' && clean.ends_with('_')) {
            clean.push(c);
        }
    }
    let clean = clean.trim_end_matches('_');
    match clean.is_empty() {
        true => format!("editor-{}", index + 1),
        false => clean.to_string(),
    }
}

/// `wanted`, or `wanted-2`, `-3`... when another server has it.
fn unique(wanted: &str, names: &[String]) -> String {
    let free = |name: &str| !names.iter().any(|n| n == name);
    if free(wanted) {
        return wanted.to_string();
    }
    (2..)
        .map(|n| format!("{wanted}-{n}"))
        .find(|name| free(name))
        .unwrap_or_else(|| wanted.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(name: &str, command: &str) -> SessionMcpServer {
        SessionMcpServer {
            name: name.into(),
            command: Some(command.into()),
            ..SessionMcpServer::default()
        }
    }

    #[test]
    fn names_are_cleaned_bounded_and_never_a_configured_servers() {
        let servers = vec![
            stdio("everything", "node"),
            stdio("my server/v2", "node"),
            stdio("a__b_", "node"),
            stdio(&"x".repeat(100), "node"),
            stdio("!!!", "node"),
            stdio("everything", "node"),
        ];
        let (checked, renamed) = checked(&["everything"], servers).unwrap();
        let names: Vec<&str> = checked.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "everything-2",
                "my-server-v2",
                "a_b",
                "x".repeat(MAX_NAME).as_str(),
                "---",
                "everything-3"
            ]
        );
        assert!(
            renamed[0] == "`everything` is `everything-2` (taken)",
            "{renamed:?}"
        );
        assert_eq!(clean_name("___", 4), "editor-5");
        for (_, config) in &checked {
            assert_eq!(config.approval, McpApproval::Ask);
        }
    }

    #[test]
    fn a_list_over_the_bounds_is_refused_in_one_line() {
        let many = vec![stdio("s", "node"); MAX_SERVERS + 1];
        let why = checked(&[], many).unwrap_err();
        assert!(why.contains("at most 16 per session"), "{why}");
        let why = checked(&[], vec![stdio("blank", "  ")]).unwrap_err();
        assert_eq!(
            why,
            "MCP server `blank` from the editor: its command is empty"
        );
        let neither = SessionMcpServer {
            name: "n".into(),
            ..SessionMcpServer::default()
        };
        assert!(checked(&[], vec![neither]).unwrap_err().contains("neither"));
        let mut args = stdio("a", "node");
        args.args = vec![String::new(); MAX_ARGS + 1];
        assert!(checked(&[], vec![args]).unwrap_err().contains("arguments"));
    }

    #[tokio::test]
    async fn a_sessions_servers_are_its_own_and_an_empty_list_stops_them() {
        let manager = McpManager::none();
        let answer = manager
            .set_session_servers("a", vec![stdio("gone", "/nonexistent/egirl-test-server")])
            .unwrap();
        assert_eq!(answer, "MCP servers from the editor: gone");
        let names = |session: &str| -> Vec<String> {
            manager
                .servers_for(session)
                .iter()
                .map(|s| s.name.clone())
                .collect()
        };
        assert_eq!(names("a"), ["gone"]);
        assert!(names("b").is_empty());
        assert_eq!(manager.approval("a", "gone"), McpApproval::Ask);
        manager.set_session_servers("a", Vec::new()).unwrap();
        assert!(names("a").is_empty());
    }
}
