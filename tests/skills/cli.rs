//! `egirl skills list [--json]` from the real binary.

use std::process::Output;

use serde_json::Value;

use super::fixtures;

async fn skills_list(json: bool) -> (tempfile::TempDir, Output) {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"{}\"\n[log]\ndir = \"{}\"\n[skills]\ndirs = [\"{}\"]\n",
        dir.path().join("ws").display(),
        dir.path().join("logs").display(),
        fixtures().join("edge").display(),
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
    let mut args = vec!["skills", "list"];
    if json {
        args.push("--json");
    }
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(dir.path().join("egirl.toml"))
        .args(&args)
        .env("HOME", dir.path())
        .env_remove("EGIRL_CONFIG")
        .env_remove("EGIRL_TEST_NO_SUCH_VARIABLE")
        .output()
        .await
        .expect("run egirl");
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, out)
}

#[tokio::test]
async fn json_has_the_documented_shape() {
    let (_dir, out) = skills_list(true).await;
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let skills = report["skills"].as_array().expect("skills array");
    let keys = [
        "name",
        "description",
        "path",
        "available",
        "reason",
        "error",
    ];
    for row in skills {
        let got: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(got, keys);
    }
    let row = |name: &str| {
        skills
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(row("always")["available"], true);
    assert_eq!(row("always")["reason"], Value::Null);
    assert_eq!(row("missing-env")["available"], false);
    assert_eq!(
        row("missing-env")["reason"],
        "environment variable not set: EGIRL_TEST_NO_SUCH_VARIABLE"
    );
    let bad = row("bad-yaml");
    assert_eq!(bad["available"], false);
    assert!(
        bad["path"]
            .as_str()
            .unwrap()
            .ends_with("edge/bad-yaml/SKILL.md")
    );
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .starts_with("line 6: invalid YAML"),
        "{bad}"
    );
}

#[tokio::test]
async fn text_groups_available_unavailable_and_broken() {
    let (_dir, out) = skills_list(false).await;
    let text = String::from_utf8_lossy(&out.stdout);
    let available = text.find("available (").expect("available section");
    let unavailable = text.find("unavailable (").expect("unavailable section");
    let broken = text.find("broken (3)").expect("broken section");
    assert!(available < unavailable && unavailable < broken, "{text}");
    assert!(
        text.contains("missing on PATH: egirl-test-no-such-binary"),
        "{text}"
    );
    assert!(
        text.contains("edge/bad-yaml/SKILL.md:6: invalid YAML"),
        "{text}"
    );
    assert!(
        text.contains("edge/no-description/SKILL.md:1: missing `description`"),
        "{text}"
    );
    assert!(
        text.contains("edge/multi-line-name/SKILL.md:3: `name` must be one line"),
        "{text}"
    );
}
