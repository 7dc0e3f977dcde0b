//! The proactive side: `[heartbeat]`, `[cron]` and `[webhook]`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::ConfigDuration;

/// Where the answer of an unattended turn goes: `none`, `tui`,
/// `discord:<channel id>` (a DM channel id reaches the owner) or
/// `telegram:<chat id>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Delivery {
    /// Kept in the session's transcript; no channel is sent anything.
    None,
    /// Its own session, which the TUI mirrors with the origin badge.
    #[default]
    Tui,
    /// The Discord channel's session: the bridge sends the answer there.
    Discord(String),
    /// The Telegram chat's session: the bridge sends the answer there.
    Telegram(String),
}

impl fmt::Display for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Delivery::None => f.write_str("none"),
            Delivery::Tui => f.write_str("tui"),
            Delivery::Discord(channel) => write!(f, "discord:{channel}"),
            Delivery::Telegram(chat) => write!(f, "telegram:{chat}"),
        }
    }
}

impl FromStr for Delivery {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "none" => Ok(Delivery::None),
            "tui" => Ok(Delivery::Tui),
            other => match other.split_once(':') {
                Some(("discord", channel))
                    if !channel.is_empty() && channel.chars().all(|c| c.is_ascii_digit()) =>
                {
                    Ok(Delivery::Discord(channel.to_string()))
                }
                Some(("telegram", chat)) if chat.parse::<i64>().is_ok_and(|id| id != 0) => {
                    Ok(Delivery::Telegram(chat.to_string()))
                }
                _ => Err(format!(
                    "unknown delivery `{other}` (use \"none\", \"tui\", \"discord:<channel id>\" or \"telegram:<chat id>\")"
                )),
            },
        }
    }
}

impl Serialize for Delivery {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Delivery {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

impl Delivery {
    /// The session an unattended turn runs in: a Discord channel's own
    /// session (so the bridge delivers its answer), else `fallback`.
    pub fn session(&self, fallback: &str) -> String {
        match self {
            Delivery::Discord(channel) => format!("discord-{channel}"),
            Delivery::Telegram(chat) => format!("telegram-{chat}"),
            Delivery::None | Delivery::Tui => fallback.to_string(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HeartbeatConfig {
    /// "0" disables the heartbeat.
    pub every: ConfigDuration,
    /// e.g. "08:00-23:00" in local time; empty means always.
    pub active_hours: String,
    /// Where a reply worth reading goes (`HEARTBEAT_OK` replies go nowhere).
    pub deliver: Delivery,
}

impl Default for HeartbeatConfig {
    fn default() -> Self {
        Self {
            every: ConfigDuration::from_secs(30 * 60),
            active_hours: String::new(),
            deliver: Delivery::Tui,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CronConfig {
    pub enabled: bool,
    /// Jobs that came due while egirl was not running run once at start
    /// (false: they are skipped to their next time).
    pub catch_up: bool,
    /// Failed runs retried (with backoff) before waiting for the next time;
    /// a one-shot job is disabled after this many failures in a row.
    pub max_retries: u32,
}

impl Default for CronConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            catch_up: true,
            max_retries: 3,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhookConfig {
    /// Runs only when EGIRL_WEBHOOK_SECRET is set.
    pub listen: String,
    /// Tools a webhook-started turn may use beyond the read-only ones
    /// (a webhook body is untrusted text), e.g. ["exec", "write_file"].
    pub tools: Vec<String>,
    /// How long a connection may take to send a request's head (from
    /// connecting, or from the previous response); then it is closed.
    pub header_timeout: ConfigDuration,
    /// How long a request's body may take after its head.
    pub body_timeout: ConfigDuration,
    /// Connections served at once; more are answered 503 and closed.
    pub max_connections: usize,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8787".into(),
            tools: Vec::new(),
            header_timeout: ConfigDuration::from_secs(10),
            body_timeout: ConfigDuration::from_secs(30),
            max_connections: 64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deliveries_parse_and_print() {
        for text in ["none", "tui", "discord:123456"] {
            assert_eq!(text.parse::<Delivery>().unwrap().to_string(), text);
        }
        for bad in ["", "discord:", "discord:general", "slack:1"] {
            assert!(bad.parse::<Delivery>().is_err(), "{bad}");
        }
        assert_eq!(Delivery::Discord("9".into()).session("x"), "discord-9");
        assert_eq!(
            "telegram:-100123".parse::<Delivery>(),
            Ok(Delivery::Telegram("-100123".into()))
        );
        assert_eq!(Delivery::Telegram("-5".into()).session("x"), "telegram--5");
        assert!("telegram:me".parse::<Delivery>().is_err());
        assert_eq!(Delivery::Tui.session("heartbeat"), "heartbeat");
    }
}

#[cfg(test)]
mod repo_config {
    use super::*;

    /// The repo's egirl.toml documents these sections with the built-in defaults.
    #[test]
    fn the_repo_config_sets_the_defaults() {
        let repo = include_str!("../../egirl.toml");
        let config = crate::config::parse(repo, std::path::Path::new("egirl.toml")).unwrap();
        let (heartbeat, cron, webhook) = (
            HeartbeatConfig::default(),
            CronConfig::default(),
            WebhookConfig::default(),
        );
        assert_eq!(config.heartbeat.every, heartbeat.every);
        assert_eq!(config.heartbeat.deliver, heartbeat.deliver);
        assert_eq!(
            (
                config.cron.enabled,
                config.cron.catch_up,
                config.cron.max_retries
            ),
            (cron.enabled, cron.catch_up, cron.max_retries)
        );
        assert_eq!(config.webhook.listen, webhook.listen);
        assert_eq!(config.webhook.tools, webhook.tools);
        assert_eq!(
            config.tools.exec.unattended_timeout,
            crate::config::ExecConfig::default().unattended_timeout
        );
    }
}
