//! How each core event folds into the TUI's state: `App::apply` notes the
//! session's activity, then hands the payload to one handler per kind.

use super::{App, Effect, LocalState};
use crate::protocol::{
    AnswerDelta, ApprovalDecision, ApprovalRequest, Compacted, ContextTrimmed, ErrorEvent,
    Escalation, Event, EventKind, FinalAnswer, HookOutcome, HookRun, MemoryHits, NO_SESSION,
    Notice, Origin, Queued, ReasoningDelta, Refused, Routing, SessionId, SubmissionId, Target,
    TokenUsage, ToolCallEvent, ToolProgress, ToolResultEvent, TurnEnded, TurnStarted,
};
use crate::surfaces::tui::approval::PendingApproval;
use crate::surfaces::tui::conversation::{Kind, Level, compaction_label};
use crate::surfaces::tui::feeds::{self, MemorySearch, RoutingRecord, ToolEntry, ToolState};
use crate::surfaces::tui::layout::Pane;
use crate::surfaces::tui::meter::Meter;
use crate::surfaces::tui::scroll::Scroll;
use crate::surfaces::tui::sessions::SessionInfo;

impl App {
    /// Folds one core event into the state.
    pub fn apply(&mut self, event: Event) -> Vec<Effect> {
        let Event {
            submission,
            session,
            origin,
            kind,
            agent,
        } = event;
        if self.failed_request(submission.as_ref(), &kind) {
            return Vec::new();
        }
        if session == NO_SESSION {
            self.sessionless(kind);
            return Vec::new();
        }
        self.note_agent(&session, agent.as_deref());
        let shown = self.shows(&session);
        let target = self.note_activity(&session, &origin, &kind, shown);
        // These change only the side panes and the status line.
        let side_only = matches!(
            kind,
            EventKind::Routing(_)
                | EventKind::MemoryHits(_)
                | EventKind::Usage(_)
                | EventKind::Hook(_)
                | EventKind::Models(_)
        );
        let mut effects = Vec::new();
        match kind {
            EventKind::TurnStarted(started) => self.on_turn_started(&session, &origin, started),
            EventKind::Queued(Queued { text, .. }) => {
                self.conversation
                    .push(&session, &origin, Kind::User { queued: true }, text)
            }
            EventKind::Routing(routing) => self.on_routing(session, routing),
            EventKind::Escalation(escalation) => self.on_escalation(session, &origin, escalation),
            EventKind::Delta(AnswerDelta { text }) => {
                self.conversation.delta(&session, &origin, &text)
            }
            EventKind::Reasoning(ReasoningDelta { text }) => {
                self.conversation.reasoning(&session, &origin, &text)
            }
            EventKind::ToolCall(call) => self.on_tool_call(session, origin, call),
            EventKind::ApprovalRequest(request) => {
                effects.extend(self.on_approval_request(session, origin, request))
            }
            EventKind::ApprovalDecision(ApprovalDecision { id, decision, .. }) => {
                self.approvals.remove(&id);
                self.tools.decided(&id, decision.is_approved());
            }
            EventKind::ToolResult(result) => self.on_tool_result(&session, result),
            EventKind::ToolProgress(ToolProgress { id, text }) => {
                self.tools.progressed(&session, &id, &text)
            }
            EventKind::MemoryHits(hits) => {
                let ours = submission.as_ref().is_some_and(|id| self.asked.remove(id));
                self.on_memory_hits(session, hits, ours);
            }
            EventKind::Usage(usage) => self.on_usage(&session, target, usage),
            EventKind::ContextTrimmed(trimmed) => {
                self.on_context_trimmed(&session, &origin, trimmed)
            }
            EventKind::Notice(Notice { message }) => {
                self.conversation
                    .push(&session, &origin, Kind::Notice(Level::Warning), message)
            }
            EventKind::Compaction(compacted) => self.on_compaction(&session, &origin, compacted),
            EventKind::Final(FinalAnswer { text }) => {
                self.conversation.finish(&session, &origin, &text)
            }
            EventKind::Error(ErrorEvent { message }) => {
                self.on_error(&session, &origin, target, message)
            }
            EventKind::Models(models) => {
                let ours = submission.as_ref().is_some_and(|id| self.asked.remove(id));
                self.on_models(&session, models, ours);
            }
            EventKind::ModelPinned(pinned) => self.on_model_pinned(&session, pinned),
            // An editor's own round trip (`egirl acp`): nothing to show.
            EventKind::FileRequest(_) => {}
            kind @ (EventKind::Forked(_) | EventKind::Rewound(_)) => {
                self.on_timeline(submission.as_ref(), &session, kind)
            }
            EventKind::TurnEnded(ended) => {
                effects.extend(self.on_turn_ended(&session, &origin, ended))
            }
            kind @ (EventKind::ApprovalRules(_) | EventKind::ApprovalRevoked(_)) => {
                self.on_rules_event(submission.as_ref(), kind)
            }
            EventKind::Hook(run) => self.on_hook(session, origin, run),
            EventKind::Refused(refused) => self.on_refused(&session, &origin, refused),
        }
        if shown && !side_only {
            self.conversation_scroll.content_added();
        }
        effects
    }

    /// A request of this TUI that failed gets no other answer: forgotten;
    /// true when the error is the `/approvals` list's (shown there).
    fn failed_request(&mut self, submission: Option<&SubmissionId>, kind: &EventKind) -> bool {
        let EventKind::Error(error) = kind else {
            return false;
        };
        if let Some(id) = submission {
            self.asked.remove(id);
        }
        self.approval_rules_error(submission, error)
    }

    /// Records that the session spoke (and whether the user has seen it);
    /// returns where its requests go.
    fn note_activity(
        &mut self,
        session: &SessionId,
        origin: &Origin,
        kind: &EventKind,
        shown: bool,
    ) -> Option<Target> {
        let elsewhere = *session != self.session;
        let info = self
            .sessions
            .entry(session.clone())
            .or_insert_with(|| SessionInfo::new(origin.clone()));
        info.last_activity = Some(std::time::SystemTime::now());
        // A message the user has not seen: the input points elsewhere, or
        // the conversation shows another session.
        // The heartbeat's standing prompt is not news; its answer (if any) is.
        let news = matches!(kind, EventKind::Final(_))
            || (matches!(kind, EventKind::TurnStarted(_)) && *origin != Origin::Heartbeat);
        if (elsewhere || !shown) && news {
            info.unread += 1;
        }
        info.target
    }

    /// The session's entry, which `note_activity` made for every event.
    fn session_info(&mut self, session: &str) -> Option<&mut SessionInfo> {
        self.sessions.get_mut(session)
    }

    /// An event of no session (an MCP server's notice): shown where the
    /// user is looking, and no session is made of it.
    fn sessionless(&mut self, kind: EventKind) {
        match kind {
            EventKind::Notice(Notice { message }) => self.notice(Level::Warning, message),
            EventKind::Error(ErrorEvent { message }) => self.notice(Level::Error, message),
            _ => {}
        }
    }

    /// The memory pane shows the hits; the user's own `/memory` also
    /// brings them into view (the pane may be a tab behind another, or
    /// hidden on a small terminal) and says how many in the conversation.
    fn on_memory_hits(&mut self, session: SessionId, hits: MemoryHits, ours: bool) {
        let MemoryHits { query, hits } = hits;
        if ours {
            self.side_tab = Pane::Memory;
            let found = match hits.len() {
                0 => format!("no memory hits for \"{query}\""),
                1 => format!("1 memory hit for \"{query}\""),
                n => format!("{n} memory hits for \"{query}\""),
            };
            let mut text = format!("{found} (Memory pane; F4 zooms it)");
            for hit in hits.iter().take(3) {
                let line = hit.best_line.max(hit.start_line);
                text.push_str(&format!("\n  {}:{line}  {}", hit.path, hit.matched_line()));
            }
            self.notice(Level::Info, text);
        }
        self.memory = Some(MemorySearch {
            session,
            query,
            hits,
        });
        self.side_scroll[2] = Scroll::at_top();
    }

    fn on_turn_started(&mut self, session: &str, origin: &Origin, started: TurnStarted) {
        if let Some(info) = self.session_info(session) {
            info.running = true;
            info.started.get_or_insert_with(std::time::Instant::now);
            if info.title.is_none() && *origin != Origin::Heartbeat {
                info.title = Some(crate::surfaces::tui::sessions::title(&started.text));
            }
        }
        if *origin != Origin::Heartbeat {
            self.conversation.user(session, origin, &started.text);
            self.conversation.attach_images(session, started.images);
        }
    }

    fn on_routing(&mut self, session: SessionId, routing: Routing) {
        if let Some(info) = self.session_info(&session) {
            info.target = Some(routing.route.target());
        }
        if session == self.session {
            self.status.provider = routing.route.provider().to_string();
            self.status.model = routing.model.clone();
        }
        self.side_added(Pane::Routing);
        self.routing
            .push(RoutingRecord::Decision { session, routing });
    }

    fn on_escalation(&mut self, session: SessionId, origin: &Origin, escalation: Escalation) {
        if let Some(info) = self.session_info(&session) {
            info.target = Some(Target::Remote);
        }
        self.side_added(Pane::Routing);
        // The local attempt ends here; the remote answer follows as a
        // message of its own.
        self.conversation.close(&session);
        self.conversation.push(
            &session,
            origin,
            Kind::Notice(Level::Warning),
            format!("escalated to {}: {}", escalation.to, escalation.reason),
        );
        self.routing.push(RoutingRecord::Escalation {
            session,
            escalation,
        });
    }

    /// The model declined to answer: a notice under what it said.
    fn on_refused(&mut self, session: &SessionId, origin: &Origin, refused: Refused) {
        let line = format!(
            "{} declined to answer ({})",
            refused.provider, refused.reason
        );
        let notice = Kind::Notice(Level::Warning);
        self.conversation.push(session, origin, notice, line)
    }

    /// A hook run goes in the tools pane as an entry of its own, named
    /// `hook EVENT`, its command as the summary and its stderr as output.
    fn on_hook(&mut self, session: SessionId, origin: Origin, run: HookRun) {
        let state = match run.outcome {
            HookOutcome::Ok => ToolState::Ok,
            HookOutcome::Blocked => ToolState::Denied,
            HookOutcome::Failed | HookOutcome::TimedOut => ToolState::Failed,
        };
        self.tools.push(ToolEntry {
            call: ToolCallEvent {
                id: format!("hook:{}", run.call_id.as_deref().unwrap_or(&run.event)),
                name: format!("hook {}", run.event),
                arguments: serde_json::json!({ "command": run.command }),
                sandbox: None,
            },
            session,
            origin,
            state,
            duration_ms: Some(run.duration_ms),
            output: run.message,
            approval: None,
            diff: None,
        });
        self.side_added(Pane::Tools);
    }

    fn on_tool_call(&mut self, session: SessionId, origin: Origin, call: ToolCallEvent) {
        self.conversation.close(&session);
        self.tool_started(&call.id);
        let seq = self.tools.push(ToolEntry {
            call,
            session: session.clone(),
            origin: origin.clone(),
            state: ToolState::Running,
            duration_ms: None,
            output: String::new(),
            approval: None,
            diff: None,
        });
        self.side_added(Pane::Tools);
        self.conversation
            .push(&session, &origin, Kind::Tool(seq), String::new());
    }

    /// Rings for every new request: a queued one is news too.
    fn on_approval_request(
        &mut self,
        session: SessionId,
        origin: Origin,
        request: ApprovalRequest,
    ) -> Option<Effect> {
        self.tools
            .awaiting(&session, &request.tool, &request.command, &request.id);
        let before = self.approvals.len();
        let alert = self.approval_alert(&request.tool, &origin);
        self.approvals.push(PendingApproval {
            session,
            origin,
            request,
        });
        (self.approvals.len() > before).then_some(alert)
    }

    fn on_tool_result(&mut self, session: &str, result: ToolResultEvent) {
        let ToolResultEvent {
            id,
            success,
            output,
            duration_ms,
            diff,
            ..
        } = result;
        self.tool_done(&id);
        self.tools
            .finished(session, &id, success, &output, duration_ms);
        if let Some(diff) = diff {
            self.tools.diffed(session, &id, diff);
        }
    }

    fn on_usage(&mut self, session: &SessionId, target: Option<Target>, usage: TokenUsage) {
        let TokenUsage {
            provider,
            model,
            input_tokens,
            output_tokens,
            cached_tokens,
            cost_usd,
            tokens_per_sec,
            endpoint,
            context,
            ..
        } = usage;
        if let Some(endpoint) = &endpoint {
            self.stats
                .add_endpoint(endpoint, input_tokens, output_tokens, cached_tokens);
        }
        if target != Some(Target::Remote) {
            self.status.local = LocalState::Up;
        }
        if *session == self.session {
            // The core says what the next prompt carries; without it (an
            // older core) prompt and answer are the closest guess.
            let meter = match context {
                Some(c) => Meter {
                    used: c.used,
                    length: Some(c.length),
                    estimated: false,
                },
                None => Meter {
                    used: input_tokens + output_tokens,
                    length: None,
                    estimated: false,
                },
            };
            self.show_meter(meter);
        }
        self.stats.add(feeds::Usage {
            session,
            target,
            provider: &provider,
            model: &model,
            input_tokens,
            output_tokens,
            cached_tokens,
            cost_usd,
            tokens_per_sec,
        });
    }

    fn on_context_trimmed(&mut self, session: &str, origin: &Origin, trimmed: ContextTrimmed) {
        let ContextTrimmed {
            dropped_messages,
            prompt_tokens,
            context_length,
        } = trimmed;
        if session == self.session {
            self.show_meter(Meter {
                used: prompt_tokens,
                length: Some(context_length),
                estimated: false,
            });
        }
        let text = format!(
            "left out {dropped_messages} older messages to fit the context window ({prompt_tokens}/{context_length} tokens)"
        );
        self.conversation
            .push(session, origin, Kind::Notice(Level::Info), text);
    }

    fn on_compaction(&mut self, session: &str, origin: &Origin, compacted: Compacted) {
        let Compacted {
            before_tokens,
            after_tokens,
            summarized_messages,
            summary,
            ..
        } = compacted;
        if session == self.session {
            self.show_meter(Meter {
                used: after_tokens,
                length: None,
                estimated: false,
            });
        }
        let label = compaction_label(summarized_messages, before_tokens, after_tokens);
        self.conversation
            .push(session, origin, Kind::Compaction(label), summary);
    }

    fn on_error(
        &mut self,
        session: &str,
        origin: &Origin,
        target: Option<Target>,
        message: String,
    ) {
        // Only a turn's error is a model request's: a failed `/fork`,
        // `/rewind` or `/compact` says nothing about the local server.
        let in_turn = self.sessions.get(session).is_some_and(|s| s.running);
        if in_turn && target != Some(Target::Remote) {
            self.status.local = LocalState::Failing;
        }
        self.conversation.close(session);
        self.conversation
            .push(session, origin, Kind::Notice(Level::Error), message);
    }

    /// A fork or a rewind: ours when it answers our submission; an event
    /// without an id (an older core) is ours when it is the shown session.
    fn on_timeline(&mut self, submission: Option<&SubmissionId>, session: &str, kind: EventKind) {
        let ours = match submission {
            Some(id) => self.asked.remove(id),
            None => session == self.session,
        };
        self.timeline_event(session, kind, ours);
    }

    /// A long turn of the user's own (not a bot's, cron's or the
    /// heartbeat's) may notify that it ended.
    fn on_turn_ended(
        &mut self,
        session: &str,
        origin: &Origin,
        ended: TurnEnded,
    ) -> Option<Effect> {
        let mut started = None;
        if let Some(info) = self.session_info(session) {
            info.running = false;
            started = info.started.take();
        }
        let alert = match origin {
            Origin::Tui | Origin::Web | Origin::Cli if !ended.interrupted => {
                self.turn_end_alert(started, std::time::Instant::now())
            }
            _ => None,
        };
        // Calls of this session the turn left without a result stop counting.
        let elsewhere: std::collections::HashSet<&str> = self
            .tools
            .iter()
            .filter(|t| t.session != session)
            .map(|t| t.call.id.as_str())
            .collect();
        self.tool_started
            .retain(|id, _| elsewhere.contains(id.as_str()));
        self.conversation.close(session);
        if ended.interrupted {
            self.conversation.push(
                session,
                origin,
                Kind::Notice(Level::Info),
                "interrupted".into(),
            );
        }
        alert
    }
}
