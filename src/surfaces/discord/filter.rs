//! Which Discord messages reach the agent. A personal agent answers its
//! owner, not whoever can see the bot: an empty `allowed_users` answers
//! nobody.

use crate::config::DiscordConfig;

/// The facts about a message that decide whether it is for us.
#[derive(Clone, Debug)]
pub struct Incoming<'a> {
    pub author_id: u64,
    pub author_is_bot: bool,
    pub channel_id: u64,
    /// No guild: a direct message.
    pub is_dm: bool,
    /// The bot is among the message's user mentions.
    pub mentions_bot: bool,
    pub content: &'a str,
}

/// Why a message was ignored (logged at debug).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignored {
    OwnMessage,
    Bot,
    UserNotAllowed,
    ChannelNotAllowed,
    NoMention,
    Empty,
}

/// Ok(the text for the agent, mentions of the bot removed) or why not.
pub fn accept(msg: &Incoming<'_>, config: &DiscordConfig, bot_id: u64) -> Result<String, Ignored> {
    if msg.author_id == bot_id {
        return Err(Ignored::OwnMessage);
    }
    if msg.author_is_bot {
        return Err(Ignored::Bot);
    }
    let author = msg.author_id.to_string();
    if !config.allowed_users.iter().any(|u| u.trim() == author) {
        return Err(Ignored::UserNotAllowed);
    }
    let channel = msg.channel_id.to_string();
    let channel_ok = config.allowed_channels.iter().any(|c| {
        let c = c.trim();
        (msg.is_dm && c.eq_ignore_ascii_case("dm")) || c == channel
    });
    if !channel_ok {
        return Err(Ignored::ChannelNotAllowed);
    }
    if !msg.is_dm && config.require_mention && !msg.mentions_bot {
        return Err(Ignored::NoMention);
    }
    let text = strip_mentions(msg.content, bot_id);
    if text.is_empty() {
        return Err(Ignored::Empty);
    }
    Ok(text)
}

/// Removes `<@id>` and `<@!id>` mentions of the bot (the model need not
/// see how it was addressed).
pub fn strip_mentions(content: &str, bot_id: u64) -> String {
    content
        .replace(&format!("<@{bot_id}>"), "")
        .replace(&format!("<@!{bot_id}>"), "")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOT: u64 = 900;
    const OWNER: u64 = 42;

    fn config() -> DiscordConfig {
        DiscordConfig {
            enabled: true,
            allowed_users: vec![OWNER.to_string()],
            allowed_channels: vec!["dm".into(), "777".into()],
            ..DiscordConfig::default()
        }
    }

    fn dm(author: u64, content: &str) -> Incoming<'_> {
        Incoming {
            author_id: author,
            author_is_bot: false,
            channel_id: 5,
            is_dm: true,
            mentions_bot: false,
            content,
        }
    }

    fn guild(channel: u64, mentions_bot: bool, content: &str) -> Incoming<'_> {
        Incoming {
            author_id: OWNER,
            author_is_bot: false,
            channel_id: channel,
            is_dm: false,
            mentions_bot,
            content,
        }
    }

    #[test]
    fn owner_dm_is_accepted() {
        assert_eq!(accept(&dm(OWNER, " hi "), &config(), BOT), Ok("hi".into()));
    }

    #[test]
    fn strangers_bots_and_itself_are_ignored() {
        assert_eq!(
            accept(&dm(7, "hi"), &config(), BOT),
            Err(Ignored::UserNotAllowed)
        );
        assert_eq!(
            accept(&dm(BOT, "hi"), &config(), BOT),
            Err(Ignored::OwnMessage)
        );
        let mut bot = dm(OWNER, "hi");
        bot.author_is_bot = true;
        assert_eq!(accept(&bot, &config(), BOT), Err(Ignored::Bot));
    }

    #[test]
    fn empty_allow_list_answers_nobody() {
        let mut c = config();
        c.allowed_users.clear();
        assert_eq!(
            accept(&dm(OWNER, "hi"), &c, BOT),
            Err(Ignored::UserNotAllowed)
        );
    }

    #[test]
    fn guild_channels_need_listing_and_a_mention() {
        let c = config();
        assert_eq!(
            accept(&guild(778, true, "<@900> hi"), &c, BOT),
            Err(Ignored::ChannelNotAllowed)
        );
        assert_eq!(
            accept(&guild(777, false, "hi"), &c, BOT),
            Err(Ignored::NoMention)
        );
        assert_eq!(
            accept(&guild(777, true, "<@900> what's up <@!900>"), &c, BOT),
            Ok("what's up".into())
        );
        let mut relaxed = c.clone();
        relaxed.require_mention = false;
        assert_eq!(
            accept(&guild(777, false, "hi"), &relaxed, BOT),
            Ok("hi".into())
        );
    }

    #[test]
    fn dms_need_dm_in_the_channel_list() {
        let mut c = config();
        c.allowed_channels = vec!["777".into()];
        assert_eq!(
            accept(&dm(OWNER, "hi"), &c, BOT),
            Err(Ignored::ChannelNotAllowed)
        );
    }

    #[test]
    fn a_bare_mention_is_empty() {
        assert_eq!(
            accept(&guild(777, true, "<@900>"), &config(), BOT),
            Err(Ignored::Empty)
        );
    }
}
