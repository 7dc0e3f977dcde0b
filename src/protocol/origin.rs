//! Where a message came from: a surface, a bot's chat, a cron job.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Where a message came from. Serialized as `tui`, `cli`, `web`, `webhook`,
/// `heartbeat`, `acp`, `discord:<channel>`, `cron:<job>` or `telegram:<chat>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    Tui,
    Cli,
    /// The web page served by the gateway (a browser or a phone).
    Web,
    Webhook,
    Heartbeat,
    Discord(String),
    Cron(String),
    /// A Telegram chat (its numeric id; negative for groups).
    Telegram(String),
    /// An editor speaking the Agent Client Protocol (`egirl acp`).
    Acp,
}

impl Origin {
    /// Origins with nobody at the keyboard: their approvals time out as denied.
    pub fn is_unattended(&self) -> bool {
        matches!(self, Origin::Webhook | Origin::Heartbeat | Origin::Cron(_))
    }

    /// Origins whose approvals count as denied after `[tools.exec]
    /// unattended_timeout`: the unattended ones, and Telegram (the owner's
    /// phone may never answer the buttons).
    pub fn approval_times_out(&self) -> bool {
        self.is_unattended() || matches!(self, Origin::Telegram(_))
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Tui => f.write_str("tui"),
            Origin::Cli => f.write_str("cli"),
            Origin::Web => f.write_str("web"),
            Origin::Webhook => f.write_str("webhook"),
            Origin::Heartbeat => f.write_str("heartbeat"),
            Origin::Discord(channel) => write!(f, "discord:{channel}"),
            Origin::Cron(job) => write!(f, "cron:{job}"),
            Origin::Telegram(chat) => write!(f, "telegram:{chat}"),
            Origin::Acp => f.write_str("acp"),
        }
    }
}

impl FromStr for Origin {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "tui" => Ok(Origin::Tui),
            "cli" => Ok(Origin::Cli),
            "web" => Ok(Origin::Web),
            "webhook" => Ok(Origin::Webhook),
            "heartbeat" => Ok(Origin::Heartbeat),
            "acp" => Ok(Origin::Acp),
            other => match other.split_once(':') {
                Some(("discord", channel)) if !channel.is_empty() => {
                    Ok(Origin::Discord(channel.to_string()))
                }
                Some(("cron", job)) if !job.is_empty() => Ok(Origin::Cron(job.to_string())),
                Some(("telegram", chat)) if !chat.is_empty() => {
                    Ok(Origin::Telegram(chat.to_string()))
                }
                _ => Err(format!("unknown origin `{other}`")),
            },
        }
    }
}

impl Serialize for Origin {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Origin {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
