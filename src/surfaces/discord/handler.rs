//! Gateway events in: messages become ops for the core (or answers to a
//! waiting approval), connection changes become the bridge's status.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serenity::all::{
    ChannelId, ConnectionStage, Context, EventHandler, GuildId, Message, Reaction, ReactionType,
    Ready, ResumedEvent, ShardStageUpdateEvent, UserId,
};
use serenity::async_trait;

use super::{Bridge, approvals, filter, lock, session_for};
use crate::chat::ImagePart;
use crate::config::{BindingChannel, BindingTarget};
use crate::protocol::{BotStatus, Op, Origin, ReviewDecision};
use crate::surfaces::{attachments, routing};

pub struct Handler {
    bridge: Arc<Bridge>,
}

impl Handler {
    pub fn new(bridge: Arc<Bridge>) -> Self {
        Self { bridge }
    }

    fn ready_status(&self) -> BotStatus {
        BotStatus::Ready(lock(&self.bridge.bot_name).clone())
    }

    /// The message's pictures, downloaded and stored, and a note for each
    /// one that could not be had.
    async fn pictures(&self, msg: &Message, agent: Option<&str>) -> (Vec<ImagePart>, Vec<String>) {
        let store = routing::images(&self.bridge.agent, agent);
        let (mut images, mut notes) = (Vec::new(), Vec::new());
        for attachment in msg.attachments.iter().filter(|a| is_picture(a)) {
            let got = attachments::download(
                &self.bridge.downloads,
                &store,
                &attachment.url,
                u64::from(attachment.size),
                format!("discord: {}", attachment.filename),
            )
            .await;
            match got {
                Ok(part) => images.push(part),
                Err(why) => notes.push(attachments::failure_note(&why)),
            }
        }
        (images, notes)
    }

    fn decide(&self, id: String, decision: ReviewDecision, channel: u64) {
        let agent = self.bridge.approval_agents.of(&id);
        routing::submit(
            &self.bridge.agent,
            agent.as_deref(),
            Op::ApprovalDecision {
                id,
                decision,
                by: Origin::Discord(channel.to_string()),
            },
        );
    }

    /// The agent the message goes to (None: the config declares none).
    fn agent_for(&self, msg: &Message) -> Option<String> {
        self.agent_of(msg.guild_id, msg.channel_id, msg.author.id)
    }

    /// The agent `user`'s messages in `channel` go to.
    fn agent_of(&self, guild: Option<GuildId>, channel: ChannelId, user: UserId) -> Option<String> {
        let target = BindingTarget {
            guild: guild.map(|g| g.get().to_string()),
            channel_id: Some(channel.get().to_string()),
            chat_id: None,
            user: Some(user.get().to_string()),
        };
        self.bridge.routing.agent(BindingChannel::Discord, &target)
    }

    /// Whether a user whose messages go to `agent` answers approval `id`
    /// (`ApprovalAgents::answerable_by`).
    fn answers(&self, agent: Option<&str>, id: &str) -> bool {
        self.bridge.approval_agents.answerable_by(id, agent)
    }
}

#[async_trait]
impl EventHandler for Handler {
    async fn ready(&self, _ctx: Context, ready: Ready) {
        self.bridge
            .bot_id
            .store(ready.user.id.get(), Ordering::Relaxed);
        *lock(&self.bridge.bot_name) = ready.user.name.clone();
        tracing::info!("discord: ready as {}", ready.user.name);
        self.bridge.set_status(self.ready_status());
    }

    async fn resume(&self, _ctx: Context, _event: ResumedEvent) {
        tracing::info!("discord: session resumed");
        self.bridge.set_status(self.ready_status());
    }

    async fn shard_stage_update(&self, _ctx: Context, event: ShardStageUpdateEvent) {
        let was_ready = matches!(&*self.bridge.status.borrow(), BotStatus::Ready(_));
        match event.new {
            ConnectionStage::Connected => self.bridge.set_status(self.ready_status()),
            ConnectionStage::Disconnected
            | ConnectionStage::Connecting
            | ConnectionStage::Resuming
                if was_ready =>
            {
                tracing::info!("discord: connection lost ({:?}); reconnecting", event.new);
                self.bridge.set_status(BotStatus::Reconnecting(
                    "connection lost; reconnecting".into(),
                ));
            }
            _ => {}
        }
    }

    async fn message(&self, ctx: Context, msg: Message) {
        let bot_id = self.bridge.bot_id();
        let channel = msg.channel_id.get();
        let incoming = filter::Incoming {
            author_id: msg.author.id.get(),
            author_is_bot: msg.author.bot,
            channel_id: channel,
            is_dm: msg.guild_id.is_none(),
            mentions_bot: msg.mentions.iter().any(|u| u.id.get() == bot_id),
            content: &msg.content,
        };
        let has_pictures = msg.attachments.iter().any(is_picture);
        let text = match filter::accept(&incoming, &self.bridge.config, bot_id) {
            Ok(text) => text,
            // A picture alone is a message.
            Err(filter::Ignored::Empty) if has_pictures => String::new(),
            Err(why) => {
                tracing::debug!(
                    channel,
                    author = msg.author.id.get(),
                    ?why,
                    "discord: ignored a message"
                );
                return;
            }
        };
        let agent = self.agent_for(&msg);
        if self.bridge.config.approve_in_discord
            && let Some(decision) = approvals::parse_reply(&text)
            && let Some(id) = self
                .bridge
                .approvals
                .oldest_in_where(msg.channel_id, |id| self.answers(agent.as_deref(), id))
        {
            self.decide(id, decision, channel);
            return;
        }
        let (images, notes) = self.pictures(&msg, agent.as_deref()).await;
        let text = attachments::with_notes(text, &notes);
        let session = session_for(channel);
        {
            let mut turns = lock(&self.bridge.turns);
            let key = routing::turn_key(agent.as_deref(), &session);
            let turn = turns.entry(key).or_default();
            turn.reply_to.push_back(msg.id);
            if turn.typing.is_none() {
                turn.typing = Some(msg.channel_id.start_typing(&ctx.http));
            }
        }
        routing::submit(
            &self.bridge.agent,
            agent.as_deref(),
            Op::UserMessage {
                session,
                origin: Origin::Discord(channel.to_string()),
                text,
                images,
            },
        );
    }

    async fn reaction_add(&self, _ctx: Context, reaction: Reaction) {
        if !self.bridge.config.approve_in_discord {
            return;
        }
        let Some(user) = reaction.user_id else { return };
        if user.get() == self.bridge.bot_id() || !self.bridge.is_allowed_user(user.get()) {
            return;
        }
        let ReactionType::Unicode(emoji) = &reaction.emoji else {
            return;
        };
        let Some(decision) = approvals::parse_reaction(emoji) else {
            return;
        };
        let agent = self.agent_of(reaction.guild_id, reaction.channel_id, user);
        if let Some(id) = self.bridge.approvals.by_prompt(reaction.message_id)
            && self.answers(agent.as_deref(), &id)
        {
            self.decide(id, decision, reaction.channel_id.get());
        }
    }
}

/// An attachment that is a picture, by its declared type or its name.
fn is_picture(attachment: &serenity::all::Attachment) -> bool {
    attachments::is_image_type(attachment.content_type.as_deref())
        || crate::images::has_image_extension(std::path::Path::new(&attachment.filename))
}
