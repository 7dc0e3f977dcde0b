use super::*;
use crate::config::ExecApproval;
use crate::tools::approval::test_context;
use serde_json::json;

fn ctx(dir: &Path) -> ToolContext {
    test_context(dir, ExecApproval::Full)
}

#[tokio::test]
async fn reports_exit_code_stdout_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let args = json!({"command": "echo out; echo err >&2; exit 3"});
    let out = run(&args, &ctx(dir.path())).await;
    assert!(!out.success);
    assert!(out.output.starts_with("exit code 3 ("), "{}", out.output);
    assert!(
        out.output.ends_with("\n[stdout]\nout\n[stderr]\nerr"),
        "{}",
        out.output
    );

    let out = run(&json!({"command": "pwd"}), &ctx(dir.path())).await;
    assert!(out.success);
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        out.output
            .ends_with(&format!("[stdout]\n{}", cwd.display())),
        "{}",
        out.output
    );

    let out = run(&json!({"command": "true"}), &ctx(dir.path())).await;
    assert!(
        out.success && out.output.ends_with("(no output)"),
        "{}",
        out.output
    );
}

fn alive(pid: i32) -> bool {
    // A zombie nobody reaps yet is as dead as it gets.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// The processes whose argv is `sleep <arg>`: a sandboxed command's `$!`
/// is its number in its own PID namespace, so the tests find their
/// background `sleep` by a duration no other test uses.
fn sleeping(arg: &str) -> Vec<i32> {
    let wanted = format!("sleep\0{arg}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            (cmdline == wanted.as_bytes() && alive(pid)).then_some(pid)
        })
        .collect()
}

async fn assert_gone(arg: &str) {
    for _ in 0..50 {
        if sleeping(arg).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("background `sleep {arg}` outlived the command");
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ctx(dir.path());
    ctx.exec.timeout_secs = 60;
    let args = json!({"command": "sleep 30.1 & sleep 30", "timeout_secs": 1});
    let started = Instant::now();
    let out = run(&args, &ctx).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        !out.success && out.output.starts_with("timed out after 1s"),
        "{}",
        out.output
    );
    assert_gone("30.1").await;
}

#[tokio::test]
async fn background_children_do_not_outlive_a_finished_command() {
    let dir = tempfile::tempdir().unwrap();
    let args = json!({"command": "sleep 30.2 & echo done"});
    let started = Instant::now();
    let out = run(&args, &ctx(dir.path())).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        out.success && out.output.ends_with("[stdout]\ndone"),
        "{}",
        out.output
    );
    assert_gone("30.2").await;
}

#[tokio::test]
async fn cancel_kills_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let args = json!({"command": "sleep 30.3 & sleep 30"});
    let out = run(&args, &ctx).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        !out.success && out.output.starts_with("interrupted"),
        "{}",
        out.output
    );
    assert_gone("30.3").await;
}

#[tokio::test]
async fn output_is_capped_keeping_head_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let mut ctx = ctx(dir.path());
    ctx.exec.max_output_bytes = 1000;
    let args =
        json!({"command": "printf start; head -c 100000 /dev/zero | tr '\\0' a; printf end"});
    let out = run(&args, &ctx).await;
    assert!(out.success, "{}", out.output);
    assert!(out.output.contains("[stdout]\nstarta"), "{}", out.output);
    assert!(
        out.output.contains("[... 99008 bytes cut ...]"),
        "{}",
        out.output
    );
    assert!(out.output.ends_with("aend"), "{}", out.output);
    assert!(out.output.len() < 1200);
}

#[tokio::test]
async fn denied_by_policy() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = test_context(dir.path(), ExecApproval::Deny);
    let out = run(&json!({"command": "touch x"}), &ctx).await;
    assert!(
        !out.success && out.output.contains("deny"),
        "{}",
        out.output
    );
    assert!(!dir.path().join("x").exists());
}

#[test]
fn capped_buffer_is_bounded() {
    let mut c = Capped::new(10);
    for _ in 0..1000 {
        c.push(b"0123456789");
    }
    assert_eq!(c.head.len() + c.tail.len(), 10);
    assert_eq!(c.cut, 9990);
    assert_eq!(c.render(), "01234\n[... 9990 bytes cut ...]\n56789");
}
