//! `egirl --session ID --rewind N`: the live session goes back to before
//! its message N and the files the file tools changed since are restored.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use super::{calls, sent_user_messages, transcript_lines};
use crate::support::cli::{Cli, events, stderr, tool_outcome};
use crate::support::fake_llama::{FakeLlama, Reply};

/// Bytes a text round trip would change: CRLF, trailing blanks, no final
/// newline, a non-ASCII character.
const ORIGINAL: &[u8] = b"first line\r\nsecond line  \r\nlast \xc3\xa9";

#[tokio::test]
async fn rewind_restores_files_byte_for_byte_removes_created_ones_and_keeps_the_transcript() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    let a = ws.join("a.txt");
    std::fs::write(&a, ORIGINAL).unwrap();
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o750)).unwrap();

    fake.push_replies([
        // Turn 1: talk only.
        Reply::text("hello back"),
        // Turn 2: an edit, a new file, a command.
        calls(&[
            (
                "edit_file",
                json!({"path": "a.txt", "old_text": "second line", "new_text": "EDITED"}),
            ),
            (
                "write_file",
                json!({"path": "new/b.txt", "content": "created in turn 2"}),
            ),
            ("exec", json!({"command": "touch by-command.txt"})),
        ]),
        Reply::text("changed things"),
        // Turn 3: a once more.
        calls(&[(
            "write_file",
            json!({"path": "a.txt", "content": "overwritten in turn 3"}),
        )]),
        Reply::text("overwrote"),
        // After the rewind.
        Reply::text("fresh start"),
    ]);
    let turn = |text: &'static str| {
        let cli = &cli;
        async move {
            let out = cli
                .run(&["-m", text, "--session", "s", "--json", "--approve-exec"])
                .await;
            assert!(out.status.success(), "{}", stderr(&out));
            events(&out)
        }
    };
    turn("hello").await;
    let ev = turn("change the files").await;
    for id in ["fake_call_0", "fake_call_1", "fake_call_2"] {
        let (ok, output) = tool_outcome(&ev, id);
        assert!(ok, "{id}: {output}");
    }
    assert!(ws.join("by-command.txt").exists());
    turn("overwrite a").await;
    assert_eq!(std::fs::read(&a).unwrap(), b"overwritten in turn 3");
    assert!(ws.join("new/b.txt").exists());

    let out = cli.run(&["--session", "s", "--rewind", "2"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(said.contains("rewound s to before message 2"), "{said}");
    assert!(said.contains("restored a.txt"), "{said}");
    assert!(said.contains("removed new/b.txt"), "{said}");
    assert!(
        said.contains("1 command ran since; commands' changes are not undone"),
        "{said}"
    );
    assert!(said.contains("message 2 was: change the files"), "{said}");

    // Byte for byte, with its mode; the created file is gone; the
    // command's file is not undone.
    assert_eq!(std::fs::read(&a).unwrap(), ORIGINAL);
    let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
    assert!(!ws.join("new/b.txt").exists());
    assert!(ws.join("by-command.txt").exists());
    // That future's checkpoints are used up.
    assert!(!ws.join(".egirl/checkpoints/s/000002").exists());
    assert!(!ws.join(".egirl/checkpoints/s/000003").exists());

    // The transcript keeps every message, then the rewound mark.
    let lines = transcript_lines(&ws, "s");
    let typed: Vec<&str> = lines.iter().filter_map(|l| l["typed"].as_str()).collect();
    assert_eq!(typed, ["hello", "change the files", "overwrite a"]);
    let mark = lines.last().unwrap();
    assert_eq!(mark["mark"], "rewound");
    assert_eq!(mark["turn"], 2);
    assert_eq!(mark["keep"], 2);

    // Resuming continues from turn 1: the rewound turns are not sent.
    let out = cli.run(&["-m", "try again", "--session", "s"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fresh start\n");
    let sent = sent_user_messages(&fake.requests());
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent[0].contains("hello"), "{sent:?}");
    assert!(sent[1].contains("try again"), "{sent:?}");
    let all = serde_json::to_string(&fake.requests().last()).unwrap();
    assert!(
        !all.contains("EDITED") && !all.contains("change the files"),
        "{all}"
    );
}

#[tokio::test]
async fn rewinding_past_the_messages_fails_and_changes_nothing() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("one")]);
    let cli = Cli::new(&fake, "");
    let out = cli.run(&["-m", "only message", "--session", "s"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let before = transcript_lines(&cli.workspace(), "s");
    for n in ["0", "2"] {
        let out = cli.run(&["--session", "s", "--rewind", n]).await;
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr(&out).contains("has 1 user message(s)"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(transcript_lines(&cli.workspace(), "s"), before);
}
