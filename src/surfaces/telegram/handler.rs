//! Updates in: messages from allowed users become ops for the core, and
//! approval buttons pressed by an allowed user resolve the request they
//! belong to. Everything else is ignored without a reply (logged at debug).

use teloxide::payloads::AnswerCallbackQuerySetters;
use teloxide::requests::{Request, Requester};
use teloxide::types::{CallbackQuery, Message, Update, UpdateKind};

use super::{Bridge, approvals, filter, lock, pictures, session_for};
use crate::config::{BindingChannel, BindingTarget};
use crate::protocol::{Op, Origin};
use crate::surfaces::routing;

pub async fn handle(bridge: &Bridge, update: Update) {
    match update.kind {
        UpdateKind::Message(message) => on_message(bridge, &message).await,
        UpdateKind::CallbackQuery(query) => on_button(bridge, &query).await,
        _ => {}
    }
}

/// A message from an allowed user becomes a turn; its picture (if any)
/// is downloaded first, in order with the chat's other messages.
async fn on_message(bridge: &Bridge, msg: &Message) {
    let Some(from) = msg.from.as_ref() else {
        return;
    };
    let picture = pictures::picture(msg);
    let Some(text) = msg
        .text()
        .or(msg.caption())
        .or(picture.as_ref().map(|_| ""))
    else {
        tracing::debug!(
            chat = msg.chat.id.0,
            "telegram: ignored a message without text"
        );
        return;
    };
    let bot = lock(&bridge.bot_username).clone();
    let replies_to_bot = msg
        .reply_to_message()
        .and_then(|m| m.from.as_ref())
        .is_some_and(|u| u.is_bot && u.username.as_deref() == Some(bot.as_str()));
    let chat = msg.chat.id.0;
    let incoming = filter::Incoming {
        from_id: from.id.0,
        from_is_bot: from.is_bot,
        chat_id: chat,
        is_private: msg.chat.is_private(),
        replies_to_bot,
        text,
    };
    let text = match filter::accept(&incoming, &bridge.config, &bot) {
        Ok(text) => text,
        // A picture alone is a message.
        Err(filter::Ignored::Empty) if picture.is_some() => String::new(),
        Err(why) => {
            tracing::debug!(chat, user = from.id.0, ?why, "telegram: ignored a message");
            return;
        }
    };
    let target = BindingTarget {
        chat_id: Some(chat.to_string()),
        user: Some(from.id.0.to_string()),
        ..BindingTarget::default()
    };
    let agent = bridge.routing.agent(BindingChannel::Telegram, &target);
    let mut images = Vec::new();
    let mut text = text;
    if let Some(file) = &picture {
        let store = routing::images(&bridge.agent, agent.as_deref());
        match pictures::fetch(bridge, &store, file).await {
            Ok(part) => images.push(part),
            Err(why) => {
                let note = crate::surfaces::attachments::failure_note(&why);
                text = crate::surfaces::attachments::with_notes(text, &[note]);
            }
        }
    }
    let session = session_for(chat);
    let key = routing::turn_key(agent.as_deref(), &session);
    lock(&bridge.turns)
        .entry(key.clone())
        .or_default()
        .reply_to
        .push_back(msg.id);
    bridge.start_typing(key, chat);
    routing::submit(
        &bridge.agent,
        agent.as_deref(),
        Op::UserMessage {
            session,
            origin: Origin::Telegram(chat.to_string()),
            text,
            images,
        },
    );
}

async fn on_button(bridge: &Bridge, query: &CallbackQuery) {
    let answer = match decide(bridge, query) {
        Ok(label) => label,
        Err(why) => {
            tracing::debug!(user = query.from.id.0, why, "telegram: ignored a button");
            why
        }
    };
    // Stops the button's spinner; the text shows briefly on the phone.
    let reply = bridge
        .bot
        .answer_callback_query(query.id.clone())
        .text(answer);
    if let Err(e) = reply.send().await {
        tracing::debug!("telegram: answerCallbackQuery: {e}");
    }
}

/// Ok(what the press did) or Err(why it did nothing).
fn decide(bridge: &Bridge, query: &CallbackQuery) -> Result<&'static str, &'static str> {
    if !filter::is_allowed_user(&bridge.config, query.from.id.0) {
        return Err("not allowed");
    }
    let (decision, id) = query
        .data
        .as_deref()
        .and_then(approvals::parse_callback)
        .ok_or("unknown button")?;
    let message = query.message.as_ref().ok_or("unknown message")?;
    let chat = message.chat().id.0;
    if !bridge.approvals.is_prompt(id, chat, message.id()) {
        return Err("already decided");
    }
    // Two agents may answer in one chat (bindings by user): a user whose
    // messages go to `home` (no commands) must not approve `work`'s.
    let asking = bridge.approval_agents.of(id);
    let target = BindingTarget {
        chat_id: Some(chat.to_string()),
        user: Some(query.from.id.0.to_string()),
        ..BindingTarget::default()
    };
    let presser = bridge.routing.agent(BindingChannel::Telegram, &target);
    if !bridge.approval_agents.answerable_by(id, presser.as_deref()) {
        return Err("not your agent's request");
    }
    routing::submit(
        &bridge.agent,
        asking.as_deref(),
        Op::ApprovalDecision {
            id: id.to_string(),
            decision,
            by: Origin::Telegram(chat.to_string()),
        },
    );
    Ok(if decision.is_approved() {
        "approved"
    } else {
        "denied"
    })
}
