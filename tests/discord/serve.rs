//! `egirl serve`: the real binary runs the bot without a TUI, answers a
//! DM and stops on SIGTERM with the transcript on disk.

use std::time::Duration;

use super::DM;
use crate::support::fake_discord::{FakeDiscord, OWNER_ID, UserMessage};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn serve_answers_a_dm_and_stops_on_sigterm() {
    let llama = FakeLlama::start().await;
    let fake = FakeDiscord::start().await;
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_serve(&llama, &fake, dir.path());

    fake.wait_sessions(1).await;
    llama.push_reply(Reply::text("served"));
    fake.send(UserMessage::dm(DM, "hello daemon"));
    assert_eq!(fake.wait_sent(1).await[0].content, "served");

    sigterm(&child);
    let out = tokio::time::timeout(Duration::from_secs(15), child.wait_with_output())
        .await
        .expect("exits within 15 s")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("ready as egirl-test"), "{stderr}");
    assert!(!stderr.contains("serve-test-token"), "{stderr}");

    let transcript = dir
        .path()
        .join("ws/sessions")
        .join(format!("discord-{DM}.jsonl"));
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(
        text.contains("hello daemon") && text.contains("served"),
        "{text}"
    );
}

/// `egirl serve` on a config with the fake llama-server and Discord.
fn spawn_serve(
    llama: &FakeLlama,
    fake: &FakeDiscord,
    dir: &std::path::Path,
) -> tokio::process::Child {
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n[local]\nendpoint = \"{llama}\"\nmodel = \"fake\"\n\
         [channels.discord]\nenabled = true\nallowed_users = [{OWNER_ID}]\nproxy = \"{proxy}\"\n",
        logs = dir.join("logs").display(),
        llama = llama.url(),
        proxy = fake.proxy(),
    );
    std::fs::write(dir.join("egirl.toml"), config).unwrap();
    tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(dir.join("egirl.toml"))
        .arg("serve")
        .env("HOME", dir)
        .env("DISCORD_TOKEN", "serve-test-token")
        .env_remove("EGIRL_CONFIG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

fn sigterm(child: &tokio::process::Child) {
    let pid = child.id().unwrap() as i32;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(pid, libc::SIGTERM) };
}

#[tokio::test]
async fn an_answer_finishing_after_sigterm_still_reaches_discord() {
    let llama = FakeLlama::start().await;
    let fake = FakeDiscord::start().await;
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_serve(&llama, &fake, dir.path());
    fake.wait_sessions(1).await;
    llama.push_reply(
        Reply::chunks(&["finished ", "after ", "the ", "signal"])
            .frame_delay(Duration::from_millis(250)),
    );
    fake.send(UserMessage::dm(DM, "take your time"));
    // The turn is under way (typing) when the signal comes.
    let start = tokio::time::Instant::now();
    while !fake.typing().contains(&DM) {
        assert!(start.elapsed() < Duration::from_secs(15), "no turn started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sigterm(&child);
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("exits")
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = fake.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].content, "finished after the signal");
}
