//! Events out: the answers of Telegram sessions become HTML messages in
//! their chat (split under 4,096 characters, the first replying to the
//! message that asked), "typing" shows while a turn runs, and approvals
//! are asked with buttons and edited once decided.

use std::sync::Arc;

use teloxide::payloads::{EditMessageTextSetters, SendMessageSetters};
use teloxide::requests::{Request, Requester};
use teloxide::types::{ChatId, InlineKeyboardMarkup, MessageId, ParseMode, ReplyParameters};
use tokio_util::sync::CancellationToken;

use super::api::{self, Failure};
use super::{Bridge, approvals, chat_of, filter, html, lock, split};
use crate::bus::EventReceiver;
use crate::protocol::{
    ApprovalDecision, ApprovalRequest, ErrorEvent, Event, EventKind, FinalAnswer, Op, Origin,
    ReviewDecision,
};
use crate::surfaces::routing::{TurnKey, turn_key};

pub async fn run(bridge: Arc<Bridge>, mut events: EventReceiver, stop: CancellationToken) {
    loop {
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Some(event) => handle(&bridge, event).await,
                None => break,
            },
            _ = stop.cancelled() => break,
        }
    }
    // What the core said before the stop is still delivered: an answer
    // that finished during `egirl serve`'s grace period is in here.
    while let Ok(event) = events.try_recv() {
        handle(&bridge, event).await;
    }
    // Typing stops with the bridge.
    lock(&bridge.turns).clear();
}

async fn handle(bridge: &Bridge, event: Event) {
    let Some(chat) = chat_of(&event.session) else {
        return;
    };
    if !filter::may_send(&bridge.config, chat) {
        if matches!(event.kind, EventKind::TurnStarted(_)) {
            tracing::debug!(
                chat,
                "telegram: not sending to a chat the config does not allow"
            );
        }
        return;
    }
    match &event.kind {
        EventKind::TurnStarted(_) => {
            begin_turn(bridge, &event);
            // A heartbeat usually ends in silence (HEARTBEAT_OK): no typing.
            if event.origin != Origin::Heartbeat {
                bridge.start_typing(key(&event), chat);
            }
        }
        EventKind::Final(FinalAnswer { text }) => {
            let reply_to = answering(bridge, &event);
            send(bridge, chat, reply_to, text).await;
        }
        EventKind::Error(ErrorEvent { message }) => {
            let reply_to = answering(bridge, &event);
            send(bridge, chat, reply_to, &format!("⚠️ {message}")).await;
        }
        EventKind::TurnEnded(_) => {
            if let Some(turn) = lock(&bridge.turns).get_mut(&key(&event)) {
                // An interrupted turn answers nothing: its message is done with.
                turn.answering = None;
                turn.typing = None;
            }
        }
        EventKind::ApprovalRequest(ApprovalRequest {
            id,
            command,
            rule,
            sandbox,
            // Running outside the sandbox is asked at the TUI only.
            escalation: None,
            ..
        }) => {
            bridge.approval_agents.note(&event);
            let prompt = approvals::prompt_html(command, sandbox.as_deref());
            let keyboard = approvals::keyboard(id, rule.as_deref());
            approval_requested(bridge, chat, id, command, prompt, keyboard).await;
        }
        EventKind::ApprovalDecision(ApprovalDecision {
            id, decision, by, ..
        }) => {
            bridge.approval_agents.take(id);
            if let Some(waiting) = bridge.approvals.remove(id)
                && let Some(prompt) = waiting.prompt
            {
                let text = approvals::decided_html(&waiting.command, *decision, by);
                edit(bridge, chat, prompt, text).await;
            }
        }
        _ => {}
    }
}

fn key(event: &Event) -> TurnKey {
    turn_key(event.agent.as_deref(), &event.session)
}

/// A Telegram-started turn takes the oldest waiting message as the one it
/// answers (turns run in the order their messages came); a turn typed into
/// this session from the TUI, or started by cron, answers none.
fn begin_turn(bridge: &Bridge, event: &Event) {
    let mut turns = lock(&bridge.turns);
    let turn = turns.entry(key(event)).or_default();
    turn.answering = match event.origin {
        Origin::Telegram(_) => turn.reply_to.pop_front(),
        _ => None,
    };
}

/// The message the current turn answers (once: later chunks and errors
/// are not replies).
fn answering(bridge: &Bridge, event: &Event) -> Option<MessageId> {
    lock(&bridge.turns)
        .get_mut(&key(event))
        .and_then(|turn| turn.answering.take())
}

async fn approval_requested(
    bridge: &Bridge,
    chat: i64,
    id: &str,
    command: &str,
    prompt: String,
    keyboard: InlineKeyboardMarkup,
) {
    bridge.approvals.insert(id, chat, command);
    let posted = api::retrying("sending an approval", &bridge.token, || {
        bridge
            .bot
            .send_message(ChatId(chat), prompt.clone())
            .parse_mode(ParseMode::Html)
            .reply_markup(keyboard.clone())
            .send()
    })
    .await;
    match posted {
        Ok(message) => bridge.approvals.set_prompt(id, message.id),
        Err(e) => {
            failed(bridge, chat, &e);
            // Nobody could see the question and no TUI can answer it:
            // deny rather than wait for the timeout.
            if !bridge.attended {
                bridge.approvals.remove(id);
                crate::surfaces::routing::submit(
                    &bridge.agent,
                    bridge.approval_agents.of(id).as_deref(),
                    Op::ApprovalDecision {
                        id: id.to_string(),
                        decision: ReviewDecision::Denied,
                        by: Origin::Telegram(chat.to_string()),
                    },
                );
            }
        }
    }
}

/// Sends `text` (markdown) as HTML messages. A failure is logged: the
/// answer stays in the session's transcript.
async fn send(bridge: &Bridge, chat: i64, reply_to: Option<MessageId>, text: &str) {
    for (i, part) in split::split(text, split::TELEGRAM_LIMIT)
        .into_iter()
        .enumerate()
    {
        let reference = if i == 0 { reply_to } else { None };
        let mut sent = send_one(bridge, chat, reference, &part, true).await;
        if let Err(Failure::BadHtml(why)) = &sent {
            // Telegram disagrees with the markup: the same text, plain.
            tracing::warn!("telegram: {why}; sending the answer as plain text");
            sent = send_one(bridge, chat, reference, &html::visible(&part), false).await;
        }
        if let Err(e) = sent {
            failed(bridge, chat, &e);
            break;
        }
    }
}

async fn send_one(
    bridge: &Bridge,
    chat: i64,
    reply_to: Option<MessageId>,
    text: &str,
    as_html: bool,
) -> Result<(), Failure> {
    api::retrying("sending an answer", &bridge.token, || {
        let mut message = bridge.bot.send_message(ChatId(chat), text.to_string());
        if as_html {
            message = message.parse_mode(ParseMode::Html);
        }
        if let Some(original) = reply_to {
            // Deleted meanwhile: still send the answer, just not as a reply.
            message = message
                .reply_parameters(ReplyParameters::new(original).allow_sending_without_reply());
        }
        message.send()
    })
    .await
    .map(|_| ())
}

async fn edit(bridge: &Bridge, chat: i64, message: MessageId, text: String) {
    let edited = api::retrying("editing an approval", &bridge.token, || {
        bridge
            .bot
            .edit_message_text(ChatId(chat), message, text.clone())
            .parse_mode(ParseMode::Html)
            .send()
    })
    .await;
    if let Err(e) = edited {
        failed(bridge, chat, &e);
    }
}

fn failed(bridge: &Bridge, chat: i64, failure: &Failure) {
    match failure {
        Failure::Unauthorized => bridge.token_rejected(),
        Failure::BadHtml(why) | Failure::Other(why) => {
            tracing::warn!("telegram: sending to chat {chat} failed: {why}")
        }
    }
}
