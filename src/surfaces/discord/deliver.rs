//! Events out: the answers of Discord sessions become messages in their
//! channel (split at 2,000 characters, the first replying to the message
//! that asked), typing shows while a turn runs, and approvals are asked
//! or denied as the bridge's options say.

use std::sync::Arc;

use serenity::all::{
    ChannelId, CreateAllowedMentions, CreateMessage, Http, MessageId, MessageReference,
};
use tokio_util::sync::CancellationToken;

use super::{Bridge, approvals, channel_of, chunk, lock};
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
    let Some(channel) = channel_of(&event.session) else {
        return;
    };
    match &event.kind {
        // A heartbeat usually ends in silence (HEARTBEAT_OK): no typing for it.
        EventKind::TurnStarted(_) => {
            begin_turn(bridge, &event);
            // A heartbeat usually ends in silence (HEARTBEAT_OK): no typing.
            if event.origin != Origin::Heartbeat {
                bridge.start_typing(key(&event), channel);
            }
        }
        EventKind::Final(FinalAnswer { text }) => {
            let reply_to = answering(bridge, &event);
            send(bridge, channel, reply_to, text).await;
        }
        EventKind::Error(ErrorEvent { message }) => {
            let reply_to = answering(bridge, &event);
            send(bridge, channel, reply_to, &format!("⚠️ {message}")).await;
        }
        EventKind::TurnEnded(_) => {
            if let Some(turn) = lock(&bridge.turns).get_mut(&key(&event)) {
                // An interrupted turn answers nothing: its message is done with.
                turn.answering = None;
                turn.typing = None;
            }
        }
        EventKind::ApprovalRequest(ApprovalRequest { id, command, .. }) => {
            bridge.approval_agents.note(&event);
            approval_requested(bridge, channel, id, command).await;
        }
        EventKind::ApprovalDecision(ApprovalDecision { id, .. }) => {
            bridge.approvals.remove(id);
            bridge.approval_agents.take(id);
        }
        _ => {}
    }
}

fn key(event: &Event) -> TurnKey {
    turn_key(event.agent.as_deref(), &event.session)
}

/// A Discord-started turn takes the oldest waiting message as the one it
/// answers (turns run in the order their messages came); a turn typed into
/// this session from the TUI, or started by cron, answers none.
fn begin_turn(bridge: &Bridge, event: &Event) {
    if let Some(turn) = lock(&bridge.turns).get_mut(&key(event)) {
        turn.answering = match event.origin {
            Origin::Discord(_) => turn.reply_to.pop_front(),
            _ => None,
        };
    }
}

/// The message the current turn answers (once: later chunks and errors
/// are not replies).
fn answering(bridge: &Bridge, event: &Event) -> Option<MessageId> {
    lock(&bridge.turns)
        .get_mut(&key(event))
        .and_then(|turn| turn.answering.take())
}

async fn approval_requested(bridge: &Bridge, channel: ChannelId, id: &str, command: &str) {
    if bridge.config.approve_in_discord {
        bridge.approvals.insert(id, channel);
        match send(bridge, channel, None, &approvals::prompt_text(command)).await {
            Some(prompt) => bridge.approvals.set_prompt(id, prompt),
            // Nobody could see the question, and no TUI can answer it:
            // deny rather than wait forever.
            None if !bridge.attended => {
                bridge.approvals.remove(id);
                deny(bridge, channel, id);
            }
            None => {}
        }
    } else if !bridge.attended {
        // Nobody can answer: the policy's fallback is deny (allow rules were
        // checked before the request was raised).
        deny(bridge, channel, id);
    }
}

fn deny(bridge: &Bridge, channel: ChannelId, id: &str) {
    let agent = bridge.approval_agents.of(id);
    crate::surfaces::routing::submit(
        &bridge.agent,
        agent.as_deref(),
        Op::ApprovalDecision {
            id: id.to_string(),
            decision: ReviewDecision::Denied,
            by: Origin::Discord(channel.get().to_string()),
        },
    );
}

/// Sends `text` in chunks; returns the id of the first message sent.
/// A failure is logged: the answer stays in the session's transcript.
async fn send(
    bridge: &Bridge,
    channel: ChannelId,
    reply_to: Option<MessageId>,
    text: &str,
) -> Option<MessageId> {
    let Some(http) = bridge.http() else {
        tracing::warn!("discord: not connected; an answer for channel {channel} was not sent");
        return None;
    };
    let mut first = None;
    for (i, part) in chunk::split(text, chunk::DISCORD_LIMIT)
        .into_iter()
        .enumerate()
    {
        let reference = if i == 0 { reply_to } else { None };
        match send_one(&http, channel, reference, part).await {
            Ok(id) => {
                first.get_or_insert(id);
            }
            Err(e) => {
                tracing::warn!("discord: sending to channel {channel} failed: {e}");
                break;
            }
        }
    }
    first
}

async fn send_one(
    http: &Http,
    channel: ChannelId,
    reply_to: Option<MessageId>,
    content: String,
) -> serenity::Result<MessageId> {
    // The model's text never pings @everyone, roles or users.
    let mut message = CreateMessage::new()
        .content(content)
        .allowed_mentions(CreateAllowedMentions::new().replied_user(false));
    if let Some(original) = reply_to {
        // Deleted meanwhile: still send the answer, just not as a reply.
        let reference = MessageReference::from((channel, original)).fail_if_not_exists(false);
        message = message.reference_message(reference);
    }
    Ok(channel.send_message(http, message).await?.id)
}
