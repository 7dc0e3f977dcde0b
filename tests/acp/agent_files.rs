//! `egirl acp` and the files of an editor's session: an editor that reads
//! and writes files itself (`fs/read_text_file`, `fs/write_text_file`),
//! and a project in an allowed path where the session works.

use serde_json::json;

use super::agent::{assert_only_frames, ok, run_client, run_scenario, updates};
use crate::support::cli::Cli;
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn an_editor_that_serves_files_gets_the_writes_and_its_buffers_are_read_and_edited() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("write_file", r#"{"path": "new.txt", "content": "hello\n"}"#)]),
        Reply::text("wrote it"),
        Reply::tool_calls(&[(
            "edit_file",
            r#"{"path": "draft.md", "old_text": "unsaved", "new_text": "edited"}"#,
        )]),
        Reply::text("edited it"),
        Reply::tool_calls(&[(
            "write_file",
            r#"{"path": ".egirl/approvals.toml", "content": "x"}"#,
        )]),
        Reply::text("could not"),
        Reply::tool_calls(&[("read_file", r#"{"path": "draft.md"}"#)]),
        Reply::text("read it"),
    ]);
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).expect("workspace");
    std::fs::write(ws.join("draft.md"), "saved line\n").expect("draft");
    let real = ws.canonicalize().expect("ws");
    let (new, draft) = (real.join("new.txt"), real.join("draft.md"));
    let buffers = json!({ draft.display().to_string(): "unsaved line\n" });
    let report = run_scenario(
        &cli,
        json!([
            {"do": "initialize"},
            {"do": "new", "cwd": ws},
            {"do": "prompt", "text": "write new.txt"},
            {"do": "prompt", "text": "edit the draft"},
            {"do": "prompt", "text": "approve yourself"},
            {"do": "prompt", "text": "read the draft"},
        ]),
        &[],
        buffers,
    )
    .await;
    assert_only_frames(&report);
    let buffers = &report["buffers"];
    assert_eq!(buffers[new.display().to_string()], "hello\n", "{report}");
    assert!(!new.exists(), "written to the disk, not through the editor");
    let wrote = ok(&report, 2);
    let done = updates(wrote, "tool_call_update");
    assert_eq!(
        done.last().expect("done")["content"][0]["newText"],
        "hello\n"
    );

    let edited = ok(&report, 3);
    assert_eq!(
        buffers[draft.display().to_string()],
        "edited line\n",
        "{edited}"
    );
    assert_eq!(
        std::fs::read_to_string(&draft).expect("draft"),
        "saved line\n"
    );
    let done = updates(edited, "tool_call_update");
    let diff = &done.last().expect("done")["content"][0];
    assert_eq!(
        (diff["oldText"].as_str(), diff["newText"].as_str()),
        (Some("unsaved line\n"), Some("edited line\n"))
    );

    let refused = updates(ok(&report, 4), "tool_call_update");
    assert_eq!(refused.last().expect("refused")["status"], "failed");
    let asked: Vec<&str> = report["fs"]
        .as_array()
        .expect("fs calls")
        .iter()
        .filter_map(|c| c["path"].as_str())
        .collect();
    let read = updates(ok(&report, 5), "tool_call_update");
    let output = read.last().expect("read")["rawOutput"].to_string();
    assert!(
        output.contains("edited line") && !output.contains("saved line"),
        "{output}"
    );
    assert!(
        asked.iter().all(|p| !p.contains(".egirl")),
        "a protected path went to the editor: {asked:?}"
    );
}

#[tokio::test]
async fn a_project_in_an_allowed_path_is_where_relative_paths_and_commands_start() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[(
            "write_file",
            r#"{"path": "src/lib.rs", "content": "fn a() {}\n"}"#,
        )]),
        Reply::text("wrote it"),
        Reply::tool_calls(&[("exec", r#"{"command": "touch made-here"}"#)]),
        Reply::text("ran it"),
    ]);
    let project_dir = tempfile::tempdir().expect("project");
    let project = project_dir.path().canonicalize().expect("project");
    let extra = format!(
        "[tools]\nallowed_paths = [{:?}]\n",
        project.display().to_string()
    );
    let cli = Cli::new(&fake, &extra);
    std::fs::create_dir_all(cli.workspace()).expect("workspace");
    let report = run_client(
        &cli,
        json!([
            {"do": "initialize"},
            {"do": "new", "cwd": project},
            {"do": "prompt", "text": "write src/lib.rs"},
            {"do": "prompt", "text": "touch a file"},
        ]),
        &["allow_once"],
    )
    .await;
    assert_only_frames(&report);
    let wrote = ok(&report, 2);
    let written = project.join("src/lib.rs");
    assert_eq!(
        std::fs::read_to_string(&written).expect("in the project"),
        "fn a() {}\n"
    );
    assert!(
        !cli.workspace().join("src/lib.rs").exists(),
        "written in the workspace"
    );
    let call = updates(wrote, "tool_call");
    assert_eq!(call[0]["locations"][0]["path"], json!(written));
    let ran = ok(&report, 3);
    assert_eq!(
        report["permissions"][0]["toolCall"]["toolCallId"],
        updates(ran, "tool_call")[0]["toolCallId"]
    );
    assert!(
        project.join("made-here").exists(),
        "the command ran elsewhere: {ran}"
    );
}
