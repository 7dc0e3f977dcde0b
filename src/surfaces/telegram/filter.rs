//! Which Telegram messages reach the agent. A personal agent answers its
//! owner, not whoever finds the bot: an empty `allowed_users` answers
//! nobody, and a chat must be listed (`"dm"` for private chats).

use crate::config::TelegramConfig;

/// The facts about a message that decide whether it is for us.
#[derive(Clone, Debug)]
pub struct Incoming<'a> {
    pub from_id: u64,
    pub from_is_bot: bool,
    pub chat_id: i64,
    /// A private chat with the bot.
    pub is_private: bool,
    /// The message replies to one of the bot's.
    pub replies_to_bot: bool,
    pub text: &'a str,
}

/// Why a message was ignored (logged at debug).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignored {
    Bot,
    UserNotAllowed,
    ChatNotAllowed,
    NoMention,
    Empty,
}

pub fn is_allowed_user(config: &TelegramConfig, id: u64) -> bool {
    let id = id.to_string();
    config.allowed_users.iter().any(|u| u.trim() == id)
}

/// Whether the bridge may send to `chat`: a listed chat, or (with `"dm"`
/// listed) the private chat of an allowed user, whose id is the user's.
/// Anything else (a cron `deliver` the model wrote, a session id typed at
/// the desk) gets nothing: the bot only ever talks where it listens.
pub fn may_send(config: &TelegramConfig, chat: i64) -> bool {
    let id = chat.to_string();
    config.allowed_chats.iter().any(|c| {
        let c = c.trim();
        c == id
            || (c.eq_ignore_ascii_case("dm") && chat > 0 && is_allowed_user(config, chat as u64))
    })
}

/// Ok(the text for the agent, `@bot` removed) or why not. `bot_username`
/// is the bot's @name without the `@`.
pub fn accept(
    msg: &Incoming<'_>,
    config: &TelegramConfig,
    bot_username: &str,
) -> Result<String, Ignored> {
    if msg.from_is_bot {
        return Err(Ignored::Bot);
    }
    if !is_allowed_user(config, msg.from_id) {
        return Err(Ignored::UserNotAllowed);
    }
    let chat = msg.chat_id.to_string();
    let chat_ok = config.allowed_chats.iter().any(|c| {
        let c = c.trim();
        (msg.is_private && c.eq_ignore_ascii_case("dm")) || c == chat
    });
    if !chat_ok {
        return Err(Ignored::ChatNotAllowed);
    }
    let mentioned = mentions(msg.text, bot_username);
    if !msg.is_private && config.require_mention && !mentioned && !msg.replies_to_bot {
        return Err(Ignored::NoMention);
    }
    let text = strip_mention(msg.text, bot_username);
    if text.is_empty() {
        return Err(Ignored::Empty);
    }
    Ok(text)
}

/// `@bot` as a word (Telegram usernames are case-insensitive).
fn mentions(text: &str, bot: &str) -> bool {
    !bot.is_empty()
        && text
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | '!' | '?'))
            .any(|word| {
                word.strip_prefix('@')
                    .or_else(|| word.split_once('@').map(|(_, name)| name))
                    .is_some_and(|name| name.eq_ignore_ascii_case(bot))
            })
}

/// The text without the `@bot` words (the model need not see how it was
/// addressed); `/cmd@bot` keeps its command.
fn strip_mention(text: &str, bot: &str) -> String {
    if bot.is_empty() {
        return text.trim().to_string();
    }
    let words: Vec<String> = text
        .split(' ')
        .filter_map(|word| {
            let bare = word.trim_end_matches([',', ':', '!', '?']);
            match bare.strip_prefix('@') {
                Some(name) if name.eq_ignore_ascii_case(bot) => None,
                _ => match bare.split_once('@') {
                    Some((cmd, name)) if cmd.starts_with('/') && name.eq_ignore_ascii_case(bot) => {
                        Some(cmd.to_string())
                    }
                    _ => Some(word.to_string()),
                },
            }
        })
        .collect();
    words.join(" ").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWNER: u64 = 42;
    const BOT: &str = "egirl_bot";

    fn config() -> TelegramConfig {
        TelegramConfig {
            enabled: true,
            allowed_users: vec![OWNER.to_string()],
            allowed_chats: vec!["dm".into(), "-1007".into()],
            ..TelegramConfig::default()
        }
    }

    fn private(from: u64, text: &str) -> Incoming<'_> {
        Incoming {
            from_id: from,
            from_is_bot: false,
            chat_id: from as i64,
            is_private: true,
            replies_to_bot: false,
            text,
        }
    }

    fn group(chat: i64, text: &str) -> Incoming<'_> {
        Incoming {
            chat_id: chat,
            is_private: false,
            ..private(OWNER, text)
        }
    }

    #[test]
    fn owner_dm_is_accepted() {
        assert_eq!(
            accept(&private(OWNER, " hi "), &config(), BOT),
            Ok("hi".into())
        );
    }

    #[test]
    fn strangers_and_bots_are_ignored() {
        assert_eq!(
            accept(&private(7, "hi"), &config(), BOT),
            Err(Ignored::UserNotAllowed)
        );
        let mut bot = private(OWNER, "hi");
        bot.from_is_bot = true;
        assert_eq!(accept(&bot, &config(), BOT), Err(Ignored::Bot));
        let mut c = config();
        c.allowed_users.clear();
        assert_eq!(
            accept(&private(OWNER, "hi"), &c, BOT),
            Err(Ignored::UserNotAllowed)
        );
    }

    #[test]
    fn groups_need_listing_and_a_mention_or_a_reply() {
        let c = config();
        assert_eq!(
            accept(&group(-1008, "@egirl_bot hi"), &c, BOT),
            Err(Ignored::ChatNotAllowed)
        );
        assert_eq!(
            accept(&group(-1007, "hi"), &c, BOT),
            Err(Ignored::NoMention)
        );
        assert_eq!(
            accept(&group(-1007, "@Egirl_Bot, what's up?"), &c, BOT),
            Ok("what's up?".into())
        );
        assert_eq!(
            accept(&group(-1007, "/status@egirl_bot now"), &c, BOT),
            Ok("/status now".into())
        );
        assert_eq!(
            accept(&group(-1007, "@other_bot hi"), &c, BOT),
            Err(Ignored::NoMention)
        );
        let reply = Incoming {
            replies_to_bot: true,
            ..group(-1007, "and then?")
        };
        assert_eq!(accept(&reply, &c, BOT), Ok("and then?".into()));
        let mut relaxed = c.clone();
        relaxed.require_mention = false;
        assert_eq!(accept(&group(-1007, "hi"), &relaxed, BOT), Ok("hi".into()));
    }

    #[test]
    fn only_allowed_chats_are_sent_to() {
        let c = config();
        assert!(may_send(&c, OWNER as i64), "the owner's private chat");
        assert!(may_send(&c, -1007), "a listed group");
        assert!(!may_send(&c, 7), "a stranger's private chat");
        assert!(!may_send(&c, -1008), "an unlisted group");
        let mut no_dm = c.clone();
        no_dm.allowed_chats = vec!["-1007".into()];
        assert!(!may_send(&no_dm, OWNER as i64));
    }

    #[test]
    fn private_chats_need_dm_in_the_list() {
        let mut c = config();
        c.allowed_chats = vec!["-1007".into()];
        assert_eq!(
            accept(&private(OWNER, "hi"), &c, BOT),
            Err(Ignored::ChatNotAllowed)
        );
        assert_eq!(
            accept(&group(-1007, "@egirl_bot"), &config(), BOT),
            Err(Ignored::Empty)
        );
    }
}
