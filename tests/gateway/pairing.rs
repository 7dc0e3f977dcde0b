//! Device pairing through the real binary: `egirl pair` shows a code the
//! daemon (another process) accepts once, not after it expired, and not
//! past the attempts' limit; the device's own token admits it until
//! `egirl devices revoke`, after which its next op is refused.

use super::tcp::{Daemon, message, next, open, pair, refused_hello, send, served_turn};
use crate::support::fake_llama::{FakeLlama, Reply};

/// `egirl pair --name NAME`'s code.
async fn new_code(daemon: &Daemon, name: &str) -> String {
    let out = daemon.run(&["pair", "--name", name]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let code = stdout
        .split_whitespace()
        .find(|w| w.len() == 9 && w.as_bytes()[4] == b'-')
        .unwrap_or_else(|| panic!("no code in {stdout}"));
    code.to_string()
}

/// Sends `pair` with `code` on a fresh connection: the answer frame.
async fn try_pair(daemon: &Daemon, code: &str) -> serde_json::Value {
    let mut socket = open(&daemon.url, &[]).await.unwrap();
    send(&mut socket, &pair(code)).await;
    next(&mut socket).await.expect("an answer to pair")
}

#[tokio::test]
async fn a_code_pairs_once_and_a_revoked_device_is_refused_on_its_next_op() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let code = new_code(&daemon, "my phone").await;

    let base = daemon.url.trim_end_matches("/ws").to_string();
    let paired = egirl::link::ws::pair(&base, &code, "phone").await.unwrap();
    let (device, token) = (paired.device, paired.token);
    let again = try_pair(&daemon, &code).await;
    assert_eq!(again["frame"], "error", "a code works once: {again}");

    let devices =
        std::fs::read_to_string(daemon.config_dir().join("gateway/devices.toml")).unwrap();
    assert!(!devices.contains(&token), "only the token's hash is kept");
    let listed = daemon.run(&["devices", "list"]).await;
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(&device) && listed.contains("my phone"),
        "{listed}"
    );

    let mut socket = open(&daemon.url, &[]).await.unwrap();
    llama.push_reply(Reply::text("hello device"));
    served_turn(&mut socket, Some(&token), "hi").await;

    let revoked = daemon.run(&["devices", "revoke", &device]).await;
    assert!(
        revoked.status.success(),
        "{}",
        String::from_utf8_lossy(&revoked.stderr)
    );
    send(&mut socket, &message("op-2", "still there?")).await;
    let refused = loop {
        let frame = next(&mut socket).await.expect("refused, not dropped");
        if frame["frame"] == "error" {
            break frame;
        }
    };
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("no longer admitted"),
        "{refused}"
    );
    assert!(next(&mut socket).await.is_none(), "closed after the error");
    let mut socket = open(&daemon.url, &[]).await.unwrap();
    assert_eq!(
        refused_hello(&mut socket, Some(&token)).await,
        "wrong token"
    );

    let listed = daemon.run(&["devices", "list"]).await;
    assert!(!String::from_utf8_lossy(&listed.stdout).contains(&device));
    let (_dir, stderr) = daemon.stop().await;
    assert!(
        !stderr.contains(&token) && !stderr.contains(&code),
        "{stderr}"
    );
}

#[tokio::test]
async fn an_expired_code_is_refused_and_attempts_are_limited() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;

    // A code past its 5 minutes (its file's expiry moved back).
    let code = new_code(&daemon, "old").await;
    let pending = daemon.config_dir().join("gateway/pairing.toml");
    let text = std::fs::read_to_string(&pending).unwrap();
    let expired: String = text
        .lines()
        .map(|l| match l.starts_with("expires_at") {
            true => "expires_at = \"2000-01-01T00:00:00Z\"".to_string(),
            false => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&pending, expired).unwrap();
    let answer = try_pair(&daemon, &code).await;
    assert_eq!(answer["frame"], "error");
    assert!(
        answer["message"].as_str().unwrap().contains("expired"),
        "{answer}"
    );

    // Five attempts a minute, right or wrong: the sixth is refused even
    // with the right code (the expired try above was the first).
    let code = new_code(&daemon, "new").await;
    let wrong = if code == "0000-0000" {
        "0000-0001"
    } else {
        "0000-0000"
    };
    for _ in 0..4 {
        let answer = try_pair(&daemon, wrong).await;
        assert_eq!(answer["message"], "wrong pairing code", "{answer}");
    }
    let answer = try_pair(&daemon, &code).await;
    assert_eq!(answer["frame"], "error", "{answer}");
    assert!(
        answer["message"].as_str().unwrap().contains("too many"),
        "{answer}"
    );
    daemon.stop().await;
}

/// Another machine pairs with `egirl attach ws://… --pair CODE`: it is
/// attached at once, its device token is kept (0600) in its own config
/// dir, and the next `egirl attach ws://…` needs nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn egirl_attach_pairs_a_new_machine_and_keeps_its_token() {
    use std::os::unix::fs::PermissionsExt;
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama).await;
    let code = new_code(&daemon, "laptop").await;
    let base = daemon.url.trim_end_matches("/ws").to_string();
    let laptop = tempfile::tempdir().unwrap();
    let config = laptop.path().join("egirl.toml");
    std::fs::write(
        &config,
        format!(
            "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\n",
            laptop.path().join("logs").display(),
            llama.url()
        ),
    )
    .unwrap();
    let attach = |extra: &[&str]| {
        let mut args = vec![
            "--config".to_string(),
            config.display().to_string(),
            "attach".into(),
            base.clone(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        crate::tui::pty::Pty::launch(crate::tui::pty::Launch {
            bin: env!("CARGO_BIN_EXE_egirl").into(),
            args,
            home: laptop.path(),
            watch: Vec::new(),
        })
    };
    let mut tui = attach(&["--pair", &code, "--name", "laptop"]);
    tui.wait_for(&format!("attached: {base}")).await;
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
    let saved = laptop.path().join(".config/egirl/gateway/device-token");
    let mode = std::fs::metadata(&saved).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let mut tui = attach(&[]);
    tui.wait_for(&format!("attached: {base}")).await;
    llama.push_reply(Reply::text("from the laptop"));
    tui.send("hello from afar\r");
    tui.wait_for("from the laptop").await;
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));

    let out = daemon.run(&["devices", "list"]).await;
    assert!(String::from_utf8_lossy(&out.stdout).contains("laptop"));
    let token = std::fs::read_to_string(&saved).unwrap();
    let (_dir, stderr) = daemon.stop().await;
    assert!(!stderr.contains(token.trim()), "{stderr}");
}
