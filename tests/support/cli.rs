//! The real `egirl` binary in a temp dir of its own: a config pointing at a
//! fake server, `HOME` there too (and egirl's trust store under it, or in
//! a temp dir of its own), so nothing of the user's is read.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

use crate::support::fake_llama::FakeLlama;

pub struct Cli {
    pub dir: tempfile::TempDir,
    workspace: PathBuf,
    /// `$XDG_CONFIG_HOME` (egirl's trust store) when `HOME` is inside the
    /// workspace: a store the model could write would trust nothing.
    state: Option<tempfile::TempDir>,
}

impl Cli {
    /// `extra` is appended to the config (after `[local]`).
    pub fn new(fake: &FakeLlama, extra: &str) -> Self {
        Self::with_workspace(fake, "ws", extra)
    }

    /// A Cli whose workspace is the directory holding its config
    /// (`[workspace] path = "."`): the config is inside what the model can
    /// reach, as when egirl is started from inside its workspace. Such a
    /// config (and a `.env` beside it) loads only when trusted: each run
    /// first trusts them as they are then, as the user who wrote them
    /// would (`egirl trust --yes`).
    pub fn holding_its_config(fake: &FakeLlama, extra: &str) -> Self {
        let mut cli = Self::with_workspace(fake, ".", extra);
        cli.state = Some(tempfile::tempdir().expect("temp dir"));
        cli
    }

    fn with_workspace(fake: &FakeLlama, path: &str, extra: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = format!(
            "[workspace]\npath = \"{path}\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n{extra}",
            dir.path().join("logs").display(),
            fake.url()
        );
        std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
        let workspace = match path {
            "." => dir.path().to_path_buf(),
            _ => dir.path().join(path),
        };
        Self {
            dir,
            workspace,
            state: None,
        }
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("egirl.toml")
    }

    /// The workspace (created by the first run).
    pub fn workspace(&self) -> PathBuf {
        self.workspace.clone()
    }

    pub async fn run(&self, args: &[&str]) -> Output {
        self.run_with_env(args, &[]).await
    }

    pub async fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        self.run_in(&std::env::current_dir().expect("cwd"), args, env)
            .await
    }

    /// As [`Cli::run_with_env`], started in `cwd` (where egirl looks for
    /// `./egirl.toml` and `./.env`).
    pub async fn run_in(
        &self,
        cwd: &std::path::Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Output {
        if self.state.is_some() {
            self.trust_its_start_up_files().await;
        }
        let mut cmd = self.command(cwd);
        cmd.arg("--config").arg(self.config()).args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().await.expect("run egirl")
    }

    /// egirl started in `cwd` with no `--config`: it finds its config
    /// the way a user's plain `egirl` would (`./egirl.toml`, then
    /// `~/.egirl/egirl.toml`).
    pub async fn run_unnamed_in(&self, cwd: &std::path::Path, args: &[&str]) -> Output {
        let mut cmd = self.command(cwd);
        cmd.args(args);
        cmd.output().await.expect("run egirl")
    }

    /// The binary with this Cli's `HOME` and trust store, started in `cwd`.
    fn command(&self, cwd: &std::path::Path) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"));
        cmd.current_dir(cwd)
            .env("HOME", self.dir.path())
            .env_remove("EGIRL_CONFIG")
            .env_remove("XDG_CONFIG_HOME");
        if let Some(state) = &self.state {
            cmd.env("XDG_CONFIG_HOME", state.path());
        }
        cmd
    }

    /// `egirl trust --yes` of the config and the `.env` beside it.
    async fn trust_its_start_up_files(&self) {
        let mut cmd = self.command(self.dir.path());
        cmd.arg("--config")
            .arg(self.config())
            .args(["trust", "--yes"])
            .arg(self.config());
        let env = self.dir.path().join(".env");
        if env.is_file() {
            cmd.arg(env);
        }
        let out = cmd.output().await.expect("run egirl trust");
        assert!(out.status.success(), "egirl trust: {}", stderr(&out));
    }
}

/// The `--json` event lines of a run.
pub fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The events of one `type`, in order.
pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The `tool_result` of call `id`; a run without one fails the test.
pub fn tool_result<'a>(events: &'a [Value], id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {events:?}"))
}

/// The `tool_result` of call `id` as (success, output).
pub fn tool_outcome(events: &[Value], id: &str) -> (bool, String) {
    let e = tool_result(events, id);
    (
        e["success"].as_bool().unwrap_or(true),
        e["output"].as_str().unwrap_or("").to_string(),
    )
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
