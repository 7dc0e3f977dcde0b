//! Agents through the real binary with the fake bots (agents-surfaces):
//! `work` bound to a Discord guild channel, `home` to Telegram and to
//! Discord DMs, on models of their own; `egirl serve` routes each
//! message, webhook and cron job to its agent, and `doctor` / `egirl
//! agents list` show the bindings.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use chrono::Utc;
use egirl::config::Delivery;
use egirl::cron::{CronStore, Job, Schedule};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::fake_discord::{FakeDiscord, OWNER_ID, UserMessage};
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::support::fake_telegram::{FakeTelegram, wait_for};

const GUILD: u64 = 7001;
const WORK_CHANNEL: u64 = 6001;
const DISCORD_DM: u64 = 5001;
const TELEGRAM_DM: i64 = OWNER_ID as i64;
/// A second allowed Discord user (bound to `home` in one test).
const OTHER_USER: u64 = 43;
const WORK_SECRET: &str = "work-webhook-secret-1";
const HOME_SECRET: &str = "home-webhook-secret-2";
const CHAT: &str = "/v1/chat/completions";

/// Two agents in one config: `work` (the `[local]` model, bound to the
/// guild channel) and `home` (`model = "fast"` on a second fake server,
/// no exec, bound to Telegram and Discord DMs), each with a SOUL.md of
/// its own written before the first start. `extra` goes at the end.
struct TwoAgents {
    dir: tempfile::TempDir,
    work: FakeLlama,
    home: FakeLlama,
}

impl TwoAgents {
    async fn new(discord: &FakeDiscord, telegram: &FakeTelegram, extra: &str) -> Self {
        let (work, home) = (FakeLlama::start().await, FakeLlama::start().await);
        let dir = tempfile::tempdir().unwrap();
        let config = format!(
            "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n\
             [local]\nendpoint = \"{work}\"\nmodel = \"fake\"\n\
             [local.fast]\nendpoint = \"{home}\"\nmodel = \"fake-fast\"\n\
             [heartbeat]\nevery = \"0\"\n[webhook]\nlisten = \"127.0.0.1:0\"\n\
             [channels.discord]\nenabled = true\nallowed_users = [{OWNER_ID}, {OTHER_USER}]\n\
             allowed_channels = [\"dm\", \"{WORK_CHANNEL}\"]\nrequire_mention = false\nproxy = \"{proxy}\"\n\
             [channels.telegram]\nenabled = true\nallowed_users = [{OWNER_ID}]\napi_url = \"{api}\"\n\
             [agents.work]\n\
             [agents.home]\nmodel = \"fast\"\nremote = false\ntools.deny = [\"exec\"]\n\
             [[bindings]]\nagent = \"work\"\nchannel = \"discord\"\nguild = \"{GUILD}\"\nchannel_id = \"{WORK_CHANNEL}\"\n\
             [[bindings]]\nagent = \"home\"\nchannel = \"discord\"\nchannel_id = \"{DISCORD_DM}\"\n\
             [[bindings]]\nagent = \"home\"\nchannel = \"telegram\"\n{extra}",
            logs = dir.path().join("logs").display(),
            work = work.url(),
            home = home.url(),
            proxy = discord.proxy(),
            api = telegram.url(),
        );
        std::fs::write(dir.path().join("egirl.toml"), config).unwrap();
        let setup = Self { dir, work, home };
        for (agent, soul) in [
            ("work", "You are WORK-SOUL, a terse coding partner."),
            ("home", "You are HOME-SOUL, a cosy household helper."),
        ] {
            let workspace = setup.workspace(agent);
            std::fs::create_dir_all(&workspace).unwrap();
            std::fs::write(workspace.join("SOUL.md"), soul).unwrap();
        }
        setup
    }

    /// An agent's workspace (the default place: `agents/NAME/workspace`
    /// beside `ws`).
    fn workspace(&self, agent: &str) -> PathBuf {
        self.dir.path().join("agents").join(agent).join("workspace")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_egirl"));
        command
            .arg("--config")
            .arg(self.dir.path().join("egirl.toml"))
            .args(args)
            .env("HOME", self.dir.path())
            .env("DISCORD_TOKEN", "agents-test-token")
            .env("TELEGRAM_BOT_TOKEN", "900:agents-test-token")
            .env("EGIRL_WEBHOOK_SECRET_WORK", WORK_SECRET)
            .env("EGIRL_WEBHOOK_SECRET_HOME", HOME_SECRET)
            .env_remove("EGIRL_WEBHOOK_SECRET")
            .env_remove("EGIRL_CONFIG")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    }

    /// `egirl serve`, and the address its webhook listens on.
    async fn serve(&self) -> (Child, String) {
        let mut child = self
            .command(&["serve"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = tokio::time::timeout(Duration::from_secs(30), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("webhook on http://") {
                    let rest = &line[at + "webhook on http://".len()..];
                    return rest.split('/').next().unwrap().to_string();
                }
            }
            panic!("serve ended without a webhook line");
        })
        .await
        .expect("serve prints its webhook within 30 s");
        // Keep draining stderr so the daemon never blocks on it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        (child, addr)
    }

    async fn run(&self, args: &[&str]) -> std::process::Output {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .await
            .unwrap()
    }
}

fn text_of(requests: &[serde_json::Value]) -> String {
    requests
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names of the tools a chat request offered.
fn offered_tools(request: &serde_json::Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

async fn wait_file_containing(path: &Path, needle: &str) -> String {
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            if text.contains(needle) {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("no `{needle}` in {} within 30 s", path.display()))
}

fn stop(child: &Child) {
    let pid = child.id().unwrap() as i32;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(pid, libc::SIGTERM) };
}

#[tokio::test]
async fn doctor_flags_an_overlap_and_a_dangling_binding_and_agents_list_shows_both() {
    let (discord, telegram) = (FakeDiscord::start().await, FakeTelegram::start().await);
    // A second Telegram binding as specific as the first, and one to an
    // agent no table declares.
    let extra = "[[bindings]]\nagent = \"work\"\nchannel = \"telegram\"\n\
                 [[bindings]]\nagent = \"watch\"\nchannel = \"webhook\"\n";
    let setup = TwoAgents::new(&discord, &telegram, extra).await;
    let out = setup.run(&["doctor"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ok   agents: default, home, work"), "{text}");
    assert!(
        text.contains(&format!(
            "note binding: bindings[0] discord guild={GUILD} channel_id={WORK_CHANNEL} → work"
        )),
        "{text}"
    );
    assert!(
        text.contains("note binding: anything else → default"),
        "{text}"
    );
    assert!(
        text.contains(
            "FAIL bindings: bindings[4] names agent `watch`, which no [agents.watch] table declares"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "note bindings: bindings[2] and bindings[3] match the same messages; bindings[2] wins"
        ),
        "{text}"
    );
    // A dangling binding fails doctor (its messages would be refused);
    // the overlap is a note.
    assert_eq!(out.status.code(), Some(1), "{text}");

    let out = setup.run(&["agents", "list", "--json"]).await;
    assert_eq!(out.status.code(), Some(0));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().expect("one array");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(names, ["default", "home", "work"]);
    let home = &rows[1];
    assert_eq!(home["model"], "fast");
    assert_eq!(home["endpoints"][0], setup.home.url());
    assert_eq!(home["remote"], false);
    assert_eq!(home["tools_denied"], serde_json::json!(["exec"]));
    assert_eq!(
        home["workspace"],
        setup.workspace("home").display().to_string()
    );
    let work = &rows[2];
    assert_eq!(work["endpoints"][0], setup.work.url());
    assert!(
        work["bindings"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!(format!(
                "discord guild={GUILD} channel_id={WORK_CHANNEL}"
            )))
    );

    let out = setup.run(&["--agent", "nobody", "-m", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "egirl: --agent: no agent `nobody` (known: default, home, work)"
    );
}

#[tokio::test]
async fn each_agents_webhook_takes_only_its_own_secret() {
    let (discord, telegram) = (FakeDiscord::start().await, FakeTelegram::start().await);
    let setup = TwoAgents::new(&discord, &telegram, "").await;
    let (child, addr) = setup.serve().await;
    let client = reqwest::Client::new();
    let post = |agent: &str, secret: &str| {
        client
            .post(format!("http://{addr}/api/webhook/{agent}"))
            .bearer_auth(secret)
            .json(&serde_json::json!({"alert": "disk full"}))
            .send()
    };
    assert_eq!(post("work", HOME_SECRET).await.unwrap().status(), 401);
    assert_eq!(post("home", WORK_SECRET).await.unwrap().status(), 401);
    // `default`'s variable is unset: it takes nothing.
    assert_eq!(post("default", WORK_SECRET).await.unwrap().status(), 401);
    // No `webhook` binding: no route without an agent.
    let bare = client
        .post(format!("http://{addr}/api/webhook"))
        .bearer_auth(WORK_SECRET)
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(bare.status(), 404);
    setup.work.push_reply(Reply::text("noted the full disk"));
    assert_eq!(post("work", WORK_SECRET).await.unwrap().status(), 202);
    wait_for(Duration::from_secs(30), || setup.work.hits(CHAT) > 0).await;
    assert_eq!(setup.home.hits(CHAT), 0, "home's model ran a work webhook");
    stop(&child);
}

#[tokio::test]
async fn the_webhook_binding_gives_the_bare_route_its_agents_secret() {
    let (discord, telegram) = (FakeDiscord::start().await, FakeTelegram::start().await);
    let extra = "[[bindings]]\nagent = \"work\"\nchannel = \"webhook\"\n";
    let setup = TwoAgents::new(&discord, &telegram, extra).await;
    let (child, addr) = setup.serve().await;
    let client = reqwest::Client::new();
    let post = |secret: &str| {
        client
            .post(format!("http://{addr}/api/webhook"))
            .header("X-Egirl-Secret", secret)
            .json(&serde_json::json!({"alert": "build broke"}))
            .send()
    };
    assert_eq!(post(HOME_SECRET).await.unwrap().status(), 401);
    setup.work.push_reply(Reply::text("looking at the build"));
    assert_eq!(post(WORK_SECRET).await.unwrap().status(), 202);
    wait_for(Duration::from_secs(30), || setup.work.hits(CHAT) > 0).await;
    assert!(text_of(&setup.work.requests_to(CHAT)).contains("build broke"));
    stop(&child);
}

/// (h) continued: the accepted webhook ran as `work`, in its workspace.
#[tokio::test]
async fn a_webhook_for_work_runs_in_works_workspace() {
    let (discord, telegram) = (FakeDiscord::start().await, FakeTelegram::start().await);
    let setup = TwoAgents::new(&discord, &telegram, "").await;
    let (child, addr) = setup.serve().await;
    setup.work.push_reply(Reply::text("noted the full disk"));
    let accepted = reqwest::Client::new()
        .post(format!("http://{addr}/api/webhook/work"))
        .bearer_auth(WORK_SECRET)
        .json(&serde_json::json!({"alert": "disk full"}))
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 202);
    let transcript = setup.workspace("work").join("sessions/webhook-work.jsonl");
    wait_file_containing(&transcript, "noted the full disk").await;
    assert!(text_of(&setup.work.requests_to(CHAT)).contains("WORK-SOUL"));
    stop(&child);
}

/// (a) prompts, (b) models, (c) transcripts, (e) exec never offered to home.
#[tokio::test]
async fn bound_channels_reach_their_own_agent_model_and_workspace() {
    let (discord, telegram) = (FakeDiscord::start().await, FakeTelegram::start().await);
    let setup = TwoAgents::new(&discord, &telegram, "").await;
    let (child, _) = setup.serve().await;
    discord.wait_sessions(1).await;
    telegram.wait_calls("getUpdates", 1).await;

    setup.work.push_reply(Reply::text("work answer"));
    discord.send(UserMessage {
        guild: Some(GUILD),
        ..UserMessage::dm(WORK_CHANNEL, "fix the build")
    });
    assert_eq!(discord.wait_sent(1).await[0].content, "work answer");
    setup.home.push_reply(Reply::text("home answer"));
    telegram.message(TELEGRAM_DM, OWNER_ID, "water the plants?");
    assert_eq!(telegram.wait_sent(1).await[0].text, "home answer");
    setup.home.push_reply(Reply::text("dm answer"));
    discord.send(UserMessage::dm(DISCORD_DM, "any chores?"));
    assert_eq!(discord.wait_sent(2).await[1].content, "dm answer");

    let work_log = text_of(&setup.work.requests_to(CHAT));
    let home_log = text_of(&setup.home.requests_to(CHAT));
    assert!(work_log.contains("WORK-SOUL") && work_log.contains("fix the build"));
    assert!(!work_log.contains("HOME-SOUL") && !work_log.contains("water the plants"));
    assert!(home_log.contains("HOME-SOUL") && home_log.contains("water the plants"));
    assert!(home_log.contains("any chores?"), "Discord DMs are home's");
    assert!(!home_log.contains("WORK-SOUL") && !home_log.contains("fix the build"));
    for request in setup.home.requests_to(CHAT) {
        let offered = offered_tools(&request);
        assert!(!offered.contains(&"exec".to_string()), "{offered:?}");
    }
    let offered = offered_tools(&setup.work.requests_to(CHAT)[0]);
    assert!(offered.contains(&"exec".to_string()), "{offered:?}");

    let sessions = |agent: &str| setup.workspace(agent).join("sessions");
    let work_chat = sessions("work").join(format!("discord-{WORK_CHANNEL}.jsonl"));
    assert!(
        std::fs::read_to_string(work_chat)
            .unwrap()
            .contains("work answer")
    );
    let home_chat = sessions("home").join(format!("telegram-{TELEGRAM_DM}.jsonl"));
    assert!(
        std::fs::read_to_string(home_chat)
            .unwrap()
            .contains("home answer")
    );
    assert!(
        sessions("home")
            .join(format!("discord-{DISCORD_DM}.jsonl"))
            .exists()
    );
    assert!(
        !sessions("home")
            .join(format!("discord-{WORK_CHANNEL}.jsonl"))
            .exists()
    );
    let default_sessions = setup.dir.path().join("ws/sessions");
    assert!(
        !default_sessions
            .join(format!("discord-{WORK_CHANNEL}.jsonl"))
            .exists()
    );
    stop(&child);
}

/// A user bound to `home` in work's channel: each agent answers its own
/// message, in its own session of the channel.
#[tokio::test]
async fn two_agents_in_one_channel_each_answer_their_own_message() {
    let (discord, telegram) = (FakeDiscord::start().await, FakeTelegram::start().await);
    let extra = format!(
        "[[bindings]]\nagent = \"home\"\nchannel = \"discord\"\nguild = \"{GUILD}\"\n\
         channel_id = \"{WORK_CHANNEL}\"\nuser = \"{OTHER_USER}\"\n"
    );
    let setup = TwoAgents::new(&discord, &telegram, &extra).await;
    let (child, _) = setup.serve().await;
    discord.wait_sessions(1).await;
    setup.work.push_reply(Reply::text("work here"));
    setup.home.push_reply(Reply::text("home here"));
    let in_channel = |author: u64, text: &str| UserMessage {
        guild: Some(GUILD),
        author,
        ..UserMessage::dm(WORK_CHANNEL, text)
    };
    let from_owner = discord.send(in_channel(OWNER_ID, "owner asks"));
    let from_other = discord.send(in_channel(OTHER_USER, "other asks"));
    let sent = discord.wait_sent(2).await;
    let reply_to = |text: &str| {
        sent.iter()
            .find(|m| m.content == text)
            .and_then(|m| m.reply_to)
    };
    assert_eq!(reply_to("work here"), Some(from_owner), "{sent:?}");
    assert_eq!(reply_to("home here"), Some(from_other), "{sent:?}");
    let transcript = |agent: &str| {
        let path = setup
            .workspace(agent)
            .join(format!("sessions/discord-{WORK_CHANNEL}.jsonl"));
        std::fs::read_to_string(path).unwrap()
    };
    let (work, home) = (transcript("work"), transcript("home"));
    assert!(
        work.contains("owner asks") && !work.contains("other asks"),
        "{work}"
    );
    assert!(
        home.contains("other asks") && !home.contains("owner asks"),
        "{home}"
    );
    stop(&child);
}

/// (d) home's memory is not work's; (f) work cannot read home's workspace.
#[tokio::test]
async fn memory_and_files_stay_with_their_agent() {
    let (discord, telegram) = (FakeDiscord::start().await, FakeTelegram::start().await);
    let setup = TwoAgents::new(&discord, &telegram, "").await;
    std::fs::write(setup.workspace("home").join("diary.txt"), "HOME-PRIVATE").unwrap();
    let (child, _) = setup.serve().await;
    discord.wait_sessions(1).await;
    telegram.wait_calls("getUpdates", 1).await;

    setup.home.push_replies([
        Reply::tool_calls(&[(
            "memory_save",
            r#"{"text": "The spare key is under the blue pot", "long_term": true}"#,
        )]),
        Reply::text("saved"),
    ]);
    telegram.message(TELEGRAM_DM, OWNER_ID, "remember where the spare key is");
    telegram.wait_sent(1).await;
    let home_memory = std::fs::read_to_string(setup.workspace("home").join("MEMORY.md")).unwrap();
    assert!(home_memory.contains("blue pot"), "{home_memory}");

    let diary = setup.workspace("home").join("diary.txt");
    let read = format!(r#"{{"path": "{}"}}"#, diary.display());
    setup.work.push_replies([
        Reply::tool_calls(&[
            ("memory_search", r#"{"query": "where is the spare key"}"#),
            ("read_file", read.as_str()),
        ]),
        Reply::text("done looking"),
    ]);
    discord.send(UserMessage {
        guild: Some(GUILD),
        ..UserMessage::dm(WORK_CHANNEL, "where is the spare key?")
    });
    discord.wait_sent(1).await;
    let work_requests = setup.work.requests_to(CHAT);
    let results = work_requests.last().unwrap()["messages"].to_string();
    // Both tools ran: the search over work's own memory, the read refused.
    assert!(results.contains("\\\"hits\\\""), "{results}");
    assert!(
        results.contains("is outside the allowed roots"),
        "{results}"
    );
    assert!(
        !results.contains("blue pot"),
        "work found home's memory: {results}"
    );
    assert!(
        !results.contains("HOME-PRIVATE"),
        "work read home's file: {results}"
    );
    let work_memory = setup.workspace("work").join("MEMORY.md");
    assert!(
        !std::fs::read_to_string(work_memory)
            .unwrap_or_default()
            .contains("blue pot")
    );
    stop(&child);
}

/// (g) each agent's cron job runs in its own workspace.
#[tokio::test]
async fn each_agents_cron_job_runs_in_its_own_workspace() {
    let (discord, telegram) = (FakeDiscord::start().await, FakeTelegram::start().await);
    let setup = TwoAgents::new(&discord, &telegram, "").await;
    let now = Utc::now();
    for (agent, message) in [
        ("work", "WORK-JOB: check CI"),
        ("home", "HOME-JOB: check the fridge"),
    ] {
        CronStore::in_workspace(&setup.workspace(agent))
            .add(Job {
                id: "daily".into(),
                schedule: Schedule::every("1d").unwrap(),
                message: message.into(),
                deliver: Delivery::None,
                enabled: true,
                created_at: now,
                next_run: Some(now - chrono::Duration::seconds(5)),
                last_run: None,
                last_status: None,
                consecutive_errors: 0,
            })
            .unwrap();
    }
    setup.work.push_reply(Reply::text("CI is green"));
    setup.home.push_reply(Reply::text("fridge is full"));
    let (child, _) = setup.serve().await;
    let transcript = |agent: &str| setup.workspace(agent).join("sessions/cron-daily.jsonl");
    let work = wait_file_containing(&transcript("work"), "CI is green").await;
    let home = wait_file_containing(&transcript("home"), "fridge is full").await;
    assert!(
        work.contains("WORK-JOB") && !work.contains("HOME-JOB"),
        "{work}"
    );
    assert!(
        home.contains("HOME-JOB") && !home.contains("WORK-JOB"),
        "{home}"
    );
    assert!(!text_of(&setup.work.requests_to(CHAT)).contains("HOME-JOB"));
    assert!(!text_of(&setup.home.requests_to(CHAT)).contains("WORK-JOB"));
    stop(&child);
}
