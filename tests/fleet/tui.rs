//! What the TUI shows of several endpoints and the fast model: the status
//! line counts the replicas answering, the routing pane names `local-fast`
//! and a failover's move, the stats pane has a row per endpoint.

use egirl::protocol::{
    EventKind, FinalAnswer, LocalRole, Notice, Route, Routing, TokenUsage, TurnEnded, TurnStarted,
};
use insta::assert_snapshot;

use crate::tui::{app, apply_all, ev, screen};

fn routing(role: &str, model: &str, reason: &str) -> EventKind {
    EventKind::Routing(Routing {
        route: Route::Local(match role {
            "local-fast" => LocalRole::Fast,
            _ => LocalRole::Main,
        }),
        model: model.into(),
        reason: reason.into(),
        confidence: 0.9,
    })
}

fn usage(model: &str, endpoint: &str, input: u64, cached: u64) -> EventKind {
    EventKind::Usage(TokenUsage {
        provider: "llamacpp".into(),
        model: model.into(),
        input_tokens: input,
        output_tokens: 40,
        cached_tokens: cached,
        cost_usd: 0.0,
        tokens_per_sec: Some(50.0),
        latency_ms: None,
        endpoint: Some(endpoint.into()),
        context: None,
    })
}

#[test]
fn replicas_fast_model_and_failover_on_screen() {
    let mut app = app();
    app.status.replicas = Some((1, 2));
    apply_all(
        &mut app,
        [
            ev(EventKind::TurnStarted(TurnStarted { text: "hey!".into(), ..Default::default() })),
            ev(routing("local-fast", "qwen3-0.6b", "greeting: hey")),
            ev(usage("qwen3-0.6b", "http://gpu3:8080", 1500, 0)),
            ev(EventKind::Final(FinalAnswer { text: "Hi!".into() })),
            ev(EventKind::TurnEnded(TurnEnded { interrupted: false })),
            ev(EventKind::TurnStarted(TurnStarted {
                text: "summarize the build log".into(), ..Default::default()
            })),
            ev(routing("local", "qwen3-32b", "summarize: build log")),
            ev(usage("qwen3-32b", "http://gpu1:8080", 2000, 0)),
            ev(EventKind::Notice(Notice {
                message: "local endpoint http://gpu1:8080 failed (cannot reach http://gpu1:8080: Connection refused); this session continues on http://gpu2:8080".into(),
            })),
            ev(routing(
                "local",
                "qwen3-32b",
                "failover: http://gpu1:8080 failed (cannot reach http://gpu1:8080: Connection refused); now on http://gpu2:8080",
            )),
            ev(usage("qwen3-32b", "http://gpu2:8080", 2100, 1800)),
            ev(EventKind::Final(FinalAnswer {
                text: "The build failed in the linker.".into(),
            })),
            ev(EventKind::TurnEnded(TurnEnded { interrupted: false })),
        ],
    );
    assert_snapshot!(screen(&app, 150, 60));
}
