//! Screens as text (and, where color is the point, as style runs).

use crossterm::event::KeyCode;
use egirl::protocol::{
    ApprovalDecision, ApprovalRequest, Escalation, EventKind, FinalAnswer, LocalRole, MemoryHit,
    MemoryHits, Origin, ReviewDecision, Route, Routing, TokenUsage, ToolCallEvent, ToolProgress,
    ToolResultEvent, TurnEnded, TurnStarted,
};
use insta::assert_snapshot;

use super::*;

const MARKDOWN: &str = "## Plan\n\nRead the **config**, then *patch* it with `edit_file`. \
See [the docs](https://example.com/docs).\n\n\
1. parse `egirl.toml`\n2. check the `[ui]` table\n   - theme\n   - keys\n\n\
> Local first: nothing leaves the box.\n\n\
| file | lines |\n|------|------:|\n| main.rs | 19 |\n| tui/mod.rs | 30 |\n\n\
```rust\nfn main() {\n    let theme = \"light\"; // picked in egirl.toml\n    println!(\"{theme}\");\n}\n```\n\nDone.";

fn conversation() -> App {
    let mut app = app();
    apply_all(&mut app, turn("How do I switch the theme?", MARKDOWN));
    app
}

#[test]
fn empty_screen() {
    assert_snapshot!(screen(&app(), 120, 36));
}

#[test]
fn conversation_with_markdown_and_code() {
    let app = conversation();
    let buf = buffer(&app, 120, 48);
    assert_snapshot!("conversation_text", text(&buf));
    // The code block's rows: several colors means it was highlighted.
    let code_rows = text(&buf)
        .lines()
        .position(|l| l.contains("```rust"))
        .map(|y| y as u16)
        .unwrap_or(0);
    assert_snapshot!(
        "conversation_code_styles",
        styles(&buf, code_rows..code_rows + 6)
    );
}

/// Every side pane with data: routing (with an escalation and a Discord
/// session), tools in each state, memory hits, usage of two providers.
fn busy_app() -> App {
    let mut app = conversation();
    let discord = Origin::Discord("general".into());
    let tool = |id: &str, name: &str, args: serde_json::Value| {
        EventKind::ToolCall(ToolCallEvent {
            id: id.into(),
            name: name.into(),
            arguments: args,
            sandbox: None,
        })
    };
    let result = |id: &str, name: &str, ok: bool, out: &str, ms: u64| {
        EventKind::ToolResult(ToolResultEvent {
            id: id.into(),
            name: name.into(),
            success: ok,
            output: out.into(),
            duration_ms: ms,
            diff: None,
        })
    };
    apply_all(
        &mut app,
        [
            ev(EventKind::TurnStarted(TurnStarted {
                text: "tidy the build dir".into(),
                ..Default::default()
            })),
            ev(EventKind::Routing(Routing {
                route: Route::Local(LocalRole::Main),
                model: "qwen3-8b".into(),
                reason: "short task, tools available locally".into(),
                confidence: 0.82,
            })),
            ev(tool(
                "c1",
                "read_file",
                serde_json::json!({"path": "Makefile"}),
            )),
            ev(result(
                "c1",
                "read_file",
                true,
                "build:\n\tcargo build\n",
                4,
            )),
            ev(tool(
                "c2",
                "glob",
                serde_json::json!({"pattern": "target/**/*.rlib"}),
            )),
            ev(result("c2", "glob", false, "pattern matched nothing", 12)),
            ev(tool(
                "c3",
                "exec",
                serde_json::json!({"command": "rm -rf target"}),
            )),
            ev(EventKind::ApprovalRequest(ApprovalRequest {
                id: "ap-1".into(),
                tool: "exec".into(),
                command: "rm -rf target".into(),
                cwd: "/home/me/ws".into(),
                rule: Some("rm -rf target".into()),
                rule_covers: None,
                sandbox: None,
                escalation: None,
            })),
            ev(EventKind::ApprovalDecision(ApprovalDecision {
                id: "ap-1".into(),
                decision: ReviewDecision::Denied,
                by: "tui".into(),
            })),
            ev(result("c3", "exec", false, "denied by user", 0)),
            ev(tool(
                "c4",
                "exec",
                serde_json::json!({"command": "cargo clean"}),
            )),
            ev(EventKind::Escalation(Escalation {
                from: "local".into(),
                to: "anthropic".into(),
                reason: "the local answer scored 0.31".into(),
                trigger: "low confidence".into(),
            })),
            ev(EventKind::MemoryHits(MemoryHits {
                query: "build dir".into(),
                hits: vec![
                    MemoryHit {
                        path: "memory/2025-01-12.md".into(),
                        start_line: 14,
                        end_line: 16,
                        score: 0.91,
                        snippet: "We keep target/ on the big disk.".into(),
                        ..Default::default()
                    },
                    MemoryHit {
                        path: "MEMORY.md".into(),
                        start_line: 3,
                        end_line: 3,
                        score: 0.47,
                        snippet: "Prefers `make` over raw cargo.".into(),
                        ..Default::default()
                    },
                ],
            })),
            ev(EventKind::Usage(TokenUsage {
                provider: "anthropic".into(),
                model: "claude-sonnet".into(),
                input_tokens: 5300,
                output_tokens: 420,
                cached_tokens: 0,
                cost_usd: 0.0222,
                tokens_per_sec: None,
                latency_ms: None,
                endpoint: None,
                context: None,
            })),
            ev_from(
                "discord-7",
                discord.clone(),
                EventKind::Routing(Routing {
                    route: Route::Local(LocalRole::Main),
                    model: "qwen3-8b".into(),
                    reason: "forced local with /local".into(),
                    confidence: 1.0,
                }),
            ),
        ],
    );
    app
}

#[test]
fn side_panes_with_data() {
    assert_snapshot!(screen(&busy_app(), 150, 44));
}

#[test]
fn tools_pane_zoomed() {
    let mut app = busy_app();
    press(&mut app, key(KeyCode::F(3)));
    assert_snapshot!(screen(&app, 100, 30));
}

#[test]
fn approval_modal_single() {
    let mut app = conversation();
    app.apply(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap-1".into(),
        tool: "exec".into(),
        command: "find . -name '*.orig' -mtime +7 -print0 | xargs -0 rm -f && git status --short && echo done cleaning the repository".into(),
        cwd: "/home/me/.egirl/workspace".into(),
        rule: None,
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })));
    arm(&mut app);
    assert_snapshot!(screen(&app, 100, 30));
}

/// The modal shows the rule the core derived: a command whose options run
/// something else is remembered as its exact argv, not as `find .`.
#[test]
fn approval_modal_shows_the_exact_rule_for_a_widening_command() {
    let mut app = conversation();
    let command = "find . -name '*.md' -exec touch X {} +";
    app.apply(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap-1".into(),
        tool: "exec".into(),
        command: command.into(),
        cwd: "/home/me/ws".into(),
        rule: egirl::tools::approval::approval_prefix(command),
        rule_covers: egirl::tools::approval::rule_preview(command).map(Into::into),
        sandbox: None,
        escalation: None,
    })));
    arm(&mut app);
    assert_snapshot!(screen(&app, 100, 30));
}

/// A web_fetch request shows the URL and offers the host as the rule.
#[test]
fn approval_modal_for_a_new_web_host() {
    let mut app = conversation();
    app.apply(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap-1".into(),
        tool: "web_fetch".into(),
        command: "https://docs.example.org/guide/install.html".into(),
        cwd: "/home/me/ws".into(),
        rule: Some("docs.example.org".into()),
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })));
    arm(&mut app);
    assert_snapshot!(screen(&app, 100, 30));
}

/// A delegation shows Claude Code's progress under the call while it runs
/// (tools pane zoomed), and its own permission request asks with its tool
/// and input.
#[test]
fn a_delegation_shows_its_progress_and_claude_codes_request() {
    let mut app = conversation();
    app.apply(ev(EventKind::ToolCall(ToolCallEvent {
        id: "d1".into(),
        name: "delegate_claude_code".into(),
        arguments: serde_json::json!({"task": "Add a --verbose flag to the CLI", "dir": "."}),
        sandbox: None,
    })));
    for text in [
        "I'll look at the argument parser first.",
        "→ Read /home/me/ws/src/cli.rs",
        "→ Edit /home/me/ws/src/cli.rs",
        "? Edit /home/me/ws/src/cli.rs (asking you)",
    ] {
        app.apply(ev(EventKind::ToolProgress(ToolProgress {
            id: "d1".into(),
            text: text.into(),
        })));
    }
    assert_snapshot!("delegation_progress_in_conversation", screen(&app, 100, 30));
    press(&mut app, key(KeyCode::F(3)));
    assert_snapshot!("delegation_progress", screen(&app, 100, 30));
    app.apply(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap-9".into(),
        tool: "claude_code".into(),
        command: r#"Edit {"file_path":"/home/me/ws/src/cli.rs","old_string":"quiet: bool,","new_string":"quiet: bool,\n    verbose: bool,"}"#.into(),
        cwd: "/home/me/ws".into(),
        rule: None,
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })));
    arm(&mut app);
    assert_snapshot!("delegation_permission_request", screen(&app, 100, 30));
}

#[test]
fn approval_modal_queued() {
    let mut app = conversation();
    app.apply(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap-1".into(),
        tool: "exec".into(),
        command: "cargo test".into(),
        cwd: "/home/me/ws".into(),
        rule: Some("cargo test".into()),
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })));
    for (i, channel) in ["general", "ops"].iter().enumerate() {
        app.apply(ev_from(
            &format!("discord-{i}"),
            Origin::Discord(channel.to_string()),
            EventKind::ApprovalRequest(ApprovalRequest {
                id: format!("ap-d{i}"),
                tool: "exec".into(),
                command: "systemctl restart llama".into(),
                cwd: "/srv".into(),
                rule: Some("systemctl restart".into()),
                rule_covers: None,
                sandbox: None,
                escalation: None,
            }),
        ));
    }
    arm(&mut app);
    assert_snapshot!("approval_queued_first", screen(&app, 100, 30));
    press(&mut app, key(KeyCode::Char('y')));
    // The next request starts greyed: it waits for its own quiet period.
    assert_snapshot!("approval_queued_second", screen(&app, 100, 30));
}

#[test]
fn narrow_terminal() {
    let mut app = busy_app();
    press(&mut app, key(KeyCode::Tab));
    press(&mut app, key(KeyCode::Tab));
    press(&mut app, key(KeyCode::Tab));
    assert_snapshot!(screen(&app, 80, 24));
}

#[test]
fn help_overlay() {
    let mut app = app();
    press(&mut app, key(KeyCode::Char('?')));
    assert_snapshot!(screen(&app, 100, 40));
}

#[test]
fn help_scrolls_on_a_short_terminal() {
    let mut app = app();
    press(&mut app, key(KeyCode::Char('?')));
    let top = screen(&app, 80, 24);
    assert!(top.contains("Keys") && !top.contains("/quit"), "{top}");
    press(&mut app, key(KeyCode::PageDown));
    press(&mut app, key(KeyCode::PageDown));
    press(&mut app, key(KeyCode::PageDown));
    // Scrolled to the end (and no further): the last command shows.
    assert_snapshot!("help_overlay_scrolled_80x24", screen(&app, 80, 24));
    press(&mut app, key(KeyCode::Esc));
    press(&mut app, key(KeyCode::Char('?')));
    assert_eq!(app.help_scroll, 0, "the help opens at the top again");
}

#[test]
fn theme_switch() {
    let mut app = conversation();
    let before = buffer(&app, 100, 30);
    type_text(&mut app, "/theme light");
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.theme.name, "light");
    let after = buffer(&app, 100, 30);
    assert_ne!(styles(&before, 0..30), styles(&after, 0..30));
    assert_snapshot!("theme_light_styles", styles(&after, 0..30));
    // A bad name keeps the theme and says why.
    type_text(&mut app, "/theme nope");
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.theme.name, "light");
    type_text(&mut app, "/theme high-contrast");
    press(&mut app, key(KeyCode::Enter));
    assert_snapshot!("theme_high_contrast", screen(&app, 100, 30));
}

#[test]
fn any_terminal_size_renders_without_panicking() {
    let mut busy = busy_app();
    busy.apply(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap-9".into(),
        tool: "exec".into(),
        command: "echo a long command that has to wrap somewhere".into(),
        cwd: "/ws".into(),
        rule: Some("echo a".into()),
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })));
    let mut help = app();
    press(&mut help, key(KeyCode::Char('?')));
    let mut zoomed = busy_app();
    press(&mut zoomed, key(KeyCode::F(4)));
    for app in [&busy, &help, &zoomed, &conversation()] {
        for w in [1u16, 2, 5, 12, 20, 33, 60, 99, 100] {
            for h in [1u16, 2, 4, 7, 13, 29, 30] {
                buffer(app, w, h);
            }
        }
    }
}

#[test]
fn the_status_line_shows_the_discord_connection() {
    use egirl::protocol::BotStatus;
    let mut app = app();
    assert!(screen(&app, 160, 30).contains("discord off"));
    for (state, shown) in [
        (BotStatus::Connecting, "discord connecting…"),
        (BotStatus::Ready("egirl-bot".into()), "discord ● egirl-bot"),
        (
            BotStatus::Reconnecting("connection lost".into()),
            "discord reconnecting…",
        ),
        (
            BotStatus::Stopped("Discord rejected the token (DISCORD_TOKEN)".into()),
            "discord stopped: Discord rejected the token",
        ),
    ] {
        app.status.discord = state;
        let s = screen(&app, 160, 30);
        assert!(s.contains(shown), "{shown}: {s}");
    }
}

/// A Discord conversation mirrored into the TUI: the user's message, the
/// routing, a tool call and the answer, each under the channel's badge.
#[test]
fn a_discord_turn_is_mirrored_with_its_badge() {
    let mut app = app();
    let discord = Origin::Discord("5001".into());
    let from = |kind| ev_from("discord-5001", discord.clone(), kind);
    apply_all(
        &mut app,
        [
            from(EventKind::TurnStarted(TurnStarted {
                text: "what's in my todo file?".into(),
                ..Default::default()
            })),
            from(EventKind::Routing(Routing {
                route: Route::Local(LocalRole::Main),
                model: "qwen3-8b".into(),
                reason: "simple file task".into(),
                confidence: 0.9,
            })),
            from(EventKind::ToolCall(ToolCallEvent {
                id: "t1".into(),
                name: "read_file".into(),
                arguments: serde_json::json!({"path": "todo.md"}),
                sandbox: None,
            })),
            from(EventKind::ToolResult(ToolResultEvent {
                id: "t1".into(),
                name: "read_file".into(),
                success: true,
                output: "- call the bank\n- water the plants".into(),
                duration_ms: 3,
                diff: None,
            })),
            from(EventKind::Final(FinalAnswer {
                text: "Two things: call the bank and water the plants.".into(),
            })),
            from(EventKind::TurnEnded(TurnEnded { interrupted: false })),
        ],
    );
    let s = screen(&app, 120, 24);
    assert!(s.contains("Discord #5001"), "{s}");
    assert_snapshot!(s);
}

/// `/memory Q` in the input box asks the core; its answer (`memory_hits`)
/// fills the memory pane, shown zoomed.
#[test]
fn memory_search_from_the_input_box() {
    let mut app = app();
    type_text(&mut app, "/memory where is the spare key");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(
        matches!(
            sent.as_slice(),
            [egirl::protocol::Op::Command {
                command: egirl::protocol::Command::MemorySearch { query },
                ..
            }] if query == "where is the spare key"
        ),
        "{sent:?}"
    );
    apply_all(
        &mut app,
        [ev(EventKind::MemoryHits(MemoryHits {
            query: "where is the spare key".into(),
            hits: vec![
                MemoryHit {
                    path: "MEMORY.md".into(),
                    start_line: 7,
                    end_line: 9,
                    score: 0.81,
                    snippet: "The spare key is under the blue flowerpot by the back door.".into(),
                    ..Default::default()
                },
                MemoryHit {
                    path: "memory/2025-06-14.md".into(),
                    start_line: 12,
                    end_line: 20,
                    score: 0.42,
                    snippet: "### 18:02 · user · tui\n\nGave Ana the spare key for the weekend."
                        .into(),
                    ..Default::default()
                },
            ],
        }))],
    );
    press(&mut app, key(KeyCode::F(4)));
    assert_snapshot!(screen(&app, 90, 20));

    // Without a query: a hint, nothing sent.
    type_text(&mut app, "/memory");
    assert!(ops(press(&mut app, key(KeyCode::Enter))).is_empty());
}

/// A hit names the line that matched and shows it, not the chunk's first
/// line: the planted fact at line 43 of a chunk that starts at line 23.
#[test]
fn memory_pane_shows_the_line_that_matched() {
    let mut app = app();
    apply_all(
        &mut app,
        [ev(EventKind::MemoryHits(MemoryHits {
            query: "favorite text editor".into(),
            hits: vec![
                MemoryHit {
                    path: "MEMORY.md".into(),
                    start_line: 23,
                    end_line: 43,
                    score: 1.0,
                    snippet: "- Fact 39: the favorite color of the cat is grey.\n- Fact 40: the favorite tea is oolong.\n\nMy favorite text editor is Helix.".into(),
                    snippet_start_line: 40,
                    snippet_end_line: 43,
                    best_line: 43,
                },
                MemoryHit {
                    path: "memory/2025-06-14.md".into(),
                    start_line: 1,
                    end_line: 9,
                    score: 0.33,
                    snippet: "### 18:02 · user · tui\n\nTried Zed as a text editor for a day.\nBack to the old one.".into(),
                    snippet_start_line: 1,
                    snippet_end_line: 4,
                    best_line: 3,
                },
            ],
        }))],
    );
    press(&mut app, key(KeyCode::F(4)));
    assert_snapshot!(screen(&app, 90, 14));
}

/// The keystroke guard's three looks: the keys greyed behind "wait…"
/// while the keyboard is busy, lit once armed, and `p` asking for Enter.
#[test]
fn approval_modal_waits_then_arms_then_asks_before_always() {
    let mut app = conversation();
    app.apply(ev(EventKind::ApprovalRequest(ApprovalRequest {
        id: "ap-1".into(),
        tool: "exec".into(),
        command: "touch notes.txt".into(),
        cwd: "/home/me/ws".into(),
        rule: Some("touch".into()),
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })));
    app.frame_drawn(std::time::Instant::now());
    let waiting = screen(&app, 100, 30);
    assert_snapshot!("approval_waiting", waiting);
    let row = waiting
        .lines()
        .position(|l| l.contains("wait…"))
        .expect("the keys row") as u16;
    let keys_styles = |app: &App| styles(&buffer(app, 100, 30), row..row + 1);
    assert_snapshot!("approval_waiting_keys_styles", keys_styles(&app));
    arm(&mut app);
    assert_snapshot!("approval_armed_keys_styles", keys_styles(&app));
    assert!(ops(press(&mut app, key(KeyCode::Char('p')))).is_empty());
    assert_snapshot!("approval_confirm_always", screen(&app, 100, 30));
}
