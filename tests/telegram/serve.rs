//! The real binary: `egirl serve` runs the Telegram bot without a TUI (an
//! answer still streaming when SIGTERM comes is delivered before it
//! exits), and `egirl doctor` checks the token with `getMe`.

use std::time::Duration;

use super::DM;
use crate::support::cli::Cli;
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::support::fake_telegram::{FakeTelegram, OWNER_ID, REVOKED_TOKEN};

const TOKEN: &str = "900:serve-test-token-qq";

/// `egirl serve` on a config with the fake llama-server and Bot API.
fn spawn_serve(
    llama: &FakeLlama,
    fake: &FakeTelegram,
    dir: &std::path::Path,
) -> tokio::process::Child {
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n[local]\nendpoint = \"{llama}\"\nmodel = \"fake\"\n\
         [channels.telegram]\nenabled = true\nallowed_users = [{OWNER_ID}]\napi_url = \"{api}\"\n",
        logs = dir.join("logs").display(),
        llama = llama.url(),
        api = fake.url(),
    );
    std::fs::write(dir.join("egirl.toml"), config).unwrap();
    tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(dir.join("egirl.toml"))
        .arg("serve")
        .env("HOME", dir)
        .env("TELEGRAM_BOT_TOKEN", TOKEN)
        .env_remove("EGIRL_CONFIG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn an_answer_streaming_across_sigterm_is_still_delivered() {
    let llama = FakeLlama::start().await;
    let fake = FakeTelegram::start().await;
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_serve(&llama, &fake, dir.path());
    fake.wait_calls("getUpdates", 1).await;
    llama.push_reply(
        Reply::chunks(&["finished ", "after ", "the ", "signal"])
            .frame_delay(Duration::from_millis(250)),
    );
    let asked = fake.message(DM, OWNER_ID, "take your time");
    // The turn is under way (typing) when the signal comes.
    let start = tokio::time::Instant::now();
    while !fake.actions().iter().any(|(chat, _)| *chat == DM) {
        assert!(start.elapsed() < Duration::from_secs(15), "no turn started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = child.id().unwrap() as i32;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("exits within 20 s")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("serving telegram"), "{stderr}");
    assert!(
        stderr.contains("telegram: ready as egirl_test_bot"),
        "{stderr}"
    );
    assert!(!stderr.contains("serve-test-token"), "{stderr}");
    let sent = fake.sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].text, "finished after the signal");
    assert_eq!(sent[0].reply_to, Some(asked));

    let transcript = dir
        .path()
        .join("ws/sessions")
        .join(format!("telegram-{DM}.jsonl"));
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(
        text.contains("take your time") && text.contains("finished after the signal"),
        "{text}"
    );
}

#[tokio::test]
async fn doctor_checks_the_token_with_get_me() {
    let llama = FakeLlama::start().await;
    let fake = FakeTelegram::start().await;
    let cli = Cli::new(
        &llama,
        &format!(
            "[channels.telegram]\nenabled = true\nallowed_users = [{OWNER_ID}]\napi_url = \"{}\"\n",
            fake.url()
        ),
    );
    let out = cli
        .run_with_env(&["doctor"], &[("TELEGRAM_BOT_TOKEN", TOKEN)])
        .await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ok   telegram: getMe answered: @egirl_test_bot"),
        "{text}"
    );
    assert!(text.contains("note TELEGRAM_BOT_TOKEN: set"), "{text}");
    assert_eq!(fake.calls("getMe"), 1);

    let out = cli
        .run_with_env(&["doctor"], &[("TELEGRAM_BOT_TOKEN", REVOKED_TOKEN)])
        .await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("FAIL telegram: Telegram rejected the token (TELEGRAM_BOT_TOKEN)"),
        "{text}"
    );
    assert!(!text.contains("revoked-token"), "{text}");
    assert_eq!(out.status.code(), Some(1));
}
