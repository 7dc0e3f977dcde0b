//! A rewind whose files cannot all be put back leaves the session as it
//! was: no `rewound` mark over files that were not restored, the
//! checkpoints kept, and a second try once the cause is gone succeeds.

use serde_json::json;

use super::{calls, transcript_lines};
use crate::support::cli::{Cli, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn a_restore_that_fails_writes_no_rewound_mark_and_can_be_retried() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    let a = ws.join("a.txt");
    std::fs::write(&a, "original").unwrap();
    fake.push_replies([
        Reply::text("hello back"),
        calls(&[(
            "write_file",
            json!({"path": "a.txt", "content": "changed in turn 2"}),
        )]),
        Reply::text("changed"),
    ]);
    for text in ["hello", "change a"] {
        let out = cli.run(&["-m", text, "--session", "s"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "changed in turn 2");

    // The copy of a.txt cannot be read: a failure root cannot override
    // (a read-only directory would not stop root, which CI runs as).
    let turn = ws.join(".egirl/checkpoints/s/000002");
    let blob = std::fs::read_dir(&turn)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| !p.ends_with("manifest.jsonl"))
        .expect("a.txt's copy");
    let copy = std::fs::read(&blob).unwrap();
    std::fs::remove_file(&blob).unwrap();
    let before = transcript_lines(&ws, "s");

    let out = cli.run(&["--session", "s", "--rewind", "2"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("could not restore a.txt"), "{said}");
    assert!(said.contains("was not rewound"), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    // No mark: the transcript is as it was, and so is the file.
    let after = transcript_lines(&ws, "s");
    assert!(after.iter().all(|l| l["mark"] != "rewound"), "{after:?}");
    assert_eq!(after, before);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "changed in turn 2");

    // The checkpoint was kept: once its copy is back, the rewind goes through.
    std::fs::write(&blob, copy).unwrap();
    let out = cli.run(&["--session", "s", "--rewind", "2"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "original");
    let lines = transcript_lines(&ws, "s");
    assert_eq!(lines.last().unwrap()["mark"], "rewound");
    assert!(!turn.exists());
}
