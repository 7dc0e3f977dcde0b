//! `/model`, `--model`: a session pinned to a model (see tests/daily/mod.rs).
//!
//! Two fake llama servers play `[local]` and `[local.fast]` (each naming
//! its own served model on `/v1/models`) and a fake Anthropic API the
//! remote provider; which server a turn reached is read from their logs.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_anthropic::{self, FakeAnthropic};
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::tui::pty::{Launch, Pty};

pub(super) const MAIN_SERVED: &str = "main-served-q8.gguf";
pub(super) const FAST_SERVED: &str = "fast-served-q4.gguf";
const CLAUDE: &str = "claude-test-model";

/// The last user message of each chat request `fake` received.
pub(super) fn asked(fake: &FakeLlama) -> Vec<String> {
    fake.requests()
        .iter()
        .filter_map(|body| {
            body["messages"]
                .as_array()?
                .iter()
                .rev()
                .find(|m| m["role"] == "user")
                .and_then(|m| m["content"].as_str().map(String::from))
        })
        .collect()
}

pub(super) fn was_asked(fake: &FakeLlama, text: &str) -> bool {
    asked(fake).iter().any(|m| m.contains(text))
}

/// The main and fast fakes, each naming its served model.
pub(super) async fn local_pair() -> (FakeLlama, FakeLlama) {
    let (main, fast) = (FakeLlama::start().await, FakeLlama::start().await);
    main.set_served_model(MAIN_SERVED);
    fast.set_served_model(FAST_SERVED);
    (main, fast)
}

/// `[local.fast]` on `fast`, plus `extra`, after the `[local]` section.
pub(super) fn fast_section(fast: &FakeLlama, extra: &str) -> String {
    format!(
        "[local.fast]\nendpoint = \"{}\"\nmodel = \"fast-model\"\n{extra}",
        fast.url()
    )
}

fn anthropic_section(cloud: &FakeAnthropic) -> String {
    format!(
        "[remote.anthropic]\nmodel = \"{CLAUDE}\"\nbase_url = \"{}\"\n",
        cloud.url()
    )
}

/// A config in `dir` for the TUI (main, fast, anthropic), with its key in
/// the `.env` beside it.
fn write_tui_config(dir: &Path, main: &FakeLlama, fast: &FakeLlama, cloud: &FakeAnthropic) {
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"main-model\"\n{}{}",
        dir.join("logs").display(),
        main.url(),
        fast_section(fast, ""),
        anthropic_section(cloud),
    );
    std::fs::write(dir.join("egirl.toml"), config).expect("config");
    std::fs::write(dir.join(".env"), "ANTHROPIC_API_KEY=sk-ant-test-0000\n").expect(".env");
}

pub(super) fn launch(dir: &Path, session: &str) -> Pty {
    Pty::launch(Launch {
        bin: env!("CARGO_BIN_EXE_egirl").into(),
        args: vec![
            "--config".into(),
            dir.join("egirl.toml").display().to_string(),
            "--session".into(),
            session.into(),
        ],
        home: dir,
        watch: Vec::new(),
    })
}

/// `/model` lists the roles with what each fake serves and the Anthropic
/// model; picking `local.fast` sends the next turn to the fast server (the
/// routing pane says it was pinned), and the pin survives quitting and
/// `--session`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_picker_lists_the_models_and_a_pin_routes_and_survives_a_resume() {
    let (main, fast) = local_pair().await;
    let cloud = FakeAnthropic::start().await;
    fast.push_replies([
        Reply::text("Paris, from the fast model."),
        Reply::text("Rome, still fast."),
    ]);
    let dir = tempfile::tempdir().expect("temp dir");
    write_tui_config(dir.path(), &main, &fast, &cloud);

    let mut pty = launch(dir.path(), "pinned-tui");
    pty.wait_for("Type a message").await;
    pty.send("/model\r");
    pty.wait_for("Model · Enter").await;
    for shown in [
        "auto · the router",
        "local · main-model",
        "local.fast · fast-model",
        MAIN_SERVED,
        FAST_SERVED,
        &format!("anthropic:{CLAUDE}"),
    ] {
        pty.wait_for(shown).await;
    }
    // auto, local, local.fast: two down from the pin in force (auto).
    pty.send("\x1b[B\x1b[B\r");
    pty.wait_for("pinned local.fast").await;

    pty.send("What is the capital of France?\r");
    pty.wait_for("Paris, from the fast model.").await;
    pty.wait_for("pinned by /model").await;
    assert!(was_asked(&fast, "capital of France"), "{:?}", asked(&fast));
    assert!(!was_asked(&main, "capital of France"), "{:?}", asked(&main));
    assert_eq!(cloud.hits(), 0);
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));

    // Resumed: the status line shows the pin before any turn, and the next
    // turn goes to the fast server again.
    let mut pty = launch(dir.path(), "pinned-tui");
    pty.wait_for("pinned local.fast").await;
    pty.send("And the capital of Italy?\r");
    pty.wait_for("Rome, still fast.").await;
    assert!(was_asked(&fast, "capital of Italy"), "{:?}", asked(&fast));
    assert!(!was_asked(&main, "capital of Italy"), "{:?}", asked(&main));

    // `/model auto` gives the session back to the router.
    pty.send("/model auto\r");
    pty.wait_for("runs on auto").await;
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
}

/// `--model local.fast -m …` runs the turn on the fast server; an unknown
/// model is one clear line and a failure, with nothing sent.
#[tokio::test]
async fn headless_model_flag_pins_the_turn() {
    let (main, fast) = local_pair().await;
    fast.push_reply(Reply::text("fast answer"));
    let cli = Cli::new(&main, &fast_section(&fast, ""));
    let out = cli
        .run(&[
            "--model",
            "local.fast",
            "--json",
            "-m",
            "Summarize what a B-tree is.",
        ])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(was_asked(&fast, "Summarize what a B-tree is."));
    assert!(main.requests().is_empty(), "{:?}", asked(&main));
    let events = events(&out);
    let routing = of_type(&events, "routing");
    assert_eq!(routing[0]["role"], "local-fast", "{routing:?}");
    assert_eq!(routing[0]["reason"], "pinned by /model", "{routing:?}");

    let out = cli.run(&["--model", "mistral:large", "-m", "hello"]).await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("unknown model `mistral:large`"), "{err}");
    assert!(err.contains("local.fast"), "the choices are named: {err}");
    assert_eq!(fast.requests().len(), 1, "nothing more was sent");
}

/// The same weak local answer escalates to Anthropic unpinned, and stays
/// local when the session is pinned to `local`.
#[tokio::test]
async fn a_pinned_local_model_never_escalates_on_its_own() {
    let main = FakeLlama::start().await;
    let cloud = FakeAnthropic::start().await;
    cloud.push(fake_anthropic::Reply::text(&["The remote answer."]));
    // Too short for what was asked: the too-short check escalates it (the
    // unpinned turn first asks the main model "local or remote?").
    main.push_replies([Reply::text("ok"), Reply::text("ok"), Reply::text("ok")]);
    let cli = Cli::new(&main, &anthropic_section(&cloud));
    let key = [("ANTHROPIC_API_KEY", "sk-ant-test-0000")];
    let question = "Explain how an LSM-tree storage engine handles compaction, write amplification \
and read amplification, and when I should prefer it over a B-tree for a write-heavy time-series workload.";
    let mut args = vec!["--json", "--session", "weak-unpinned", "-m"];
    args.push(question);
    let out = cli.run_with_env(&args, &key).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let unpinned = events(&out);
    assert_eq!(of_type(&unpinned, "escalation").len(), 1, "{unpinned:?}");
    assert_eq!(cloud.hits(), 1);

    let mut args = vec![
        "--json",
        "--model",
        "local",
        "--session",
        "weak-pinned",
        "-m",
    ];
    args.push(question);
    let out = cli.run_with_env(&args, &key).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let pinned = events(&out);
    assert!(of_type(&pinned, "escalation").is_empty(), "{pinned:?}");
    let finals = of_type(&pinned, "final");
    assert_eq!(finals[0]["text"], "ok", "{finals:?}");
    assert_eq!(of_type(&pinned, "routing")[0]["reason"], "pinned by /model");
    // Give a stray remote call time to land.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(cloud.hits(), 1, "the pinned turn reached Anthropic");
    let transcript = cli.workspace().join("sessions").join("weak-pinned.jsonl");
    let text = std::fs::read_to_string(transcript).expect("transcript");
    let pin: Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["mark"] == "model_pinned")
        .expect("the pin is in the transcript");
    assert_eq!(pin["model"], "local");
}

/// What the picker and the status line look like: the choices with what
/// each endpoint serves, the pin marked; after `model_pinned`, the status
/// line names the pin.
#[test]
fn the_picker_and_the_pinned_status_line_on_screen() {
    use egirl::protocol::{EventKind, ModelChoice, ModelPinned, Models};
    use egirl::surfaces::tui::models::ModelPicker;
    use insta::assert_snapshot;

    use crate::tui::{app, apply_all, ev, screen};

    let choice = |id: &str, label: &str, detail: &str| ModelChoice {
        id: id.into(),
        label: label.into(),
        detail: detail.into(),
    };
    let mut app = app();
    apply_all(
        &mut app,
        [ev(EventKind::ModelPinned(ModelPinned {
            model: "local.fast".into(),
            label: "local.fast · qwen3-0.6b".into(),
        }))],
    );
    app.models = Some(ModelPicker::new(Models {
        choices: vec![
            choice("auto", "auto · the router picks each turn", ""),
            choice("local", "local · qwen3-32b", "serves qwen3-32b-q8_0.gguf"),
            choice(
                "local.fast",
                "local.fast · qwen3-0.6b",
                "serves qwen3-0.6b-q8_0.gguf",
            ),
            choice(
                "anthropic:claude-sonnet-4-5",
                "anthropic:claude-sonnet-4-5",
                "",
            ),
        ],
        pinned: "local.fast".into(),
    }));
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("pinned local.fast · qwen3-0.6b"), "{shown}");
    assert_snapshot!(shown);
}
