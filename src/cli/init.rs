//! `egirl init`: writes egirl.toml, `.env` (secrets, mode 600) and the
//! workspace templates into a directory, never overwriting a file. Every
//! mode (asking, `--yes`, `--endpoint`, no terminal) writes the same
//! files: the questions only fill in values.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The repo's egirl.toml: every key with its default and a comment (the
/// built-in defaults, so nothing in it assumes the repo's `make run`).
const CONFIG_TEMPLATE: &str = include_str!("../../egirl.toml");

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Where to write egirl.toml, .env and workspace/ (default ~/.egirl).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// The local llama.cpp (or OpenAI-compatible) server.
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// Never ask: write the defaults (and .env with placeholders).
    #[arg(long)]
    pub yes: bool,
}

pub fn run(args: &InitArgs) -> Result<u8> {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| crate::config::expand_home("~/.egirl"));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let interactive = !args.yes && args.endpoint.is_none() && std::io::stdin().is_terminal();
    let mut answers = Answers {
        endpoint: args.endpoint.clone(),
        secrets: Vec::new(),
    };
    if interactive {
        answers = ask()?;
    }

    let config_path = dir.join("egirl.toml");
    let given: Vec<&str> = answers.secrets.iter().map(|(var, _)| *var).collect();
    let config = enable_remotes(&render_config(answers.endpoint.as_deref()), &given);
    report(&config_path, write_new(&config_path, &config, false)?)?;
    // Always written, with a placeholder for each key not given, so the
    // user knows where secrets go (and that they never go in egirl.toml).
    let env_path = dir.join(".env");
    let written = write_new(&env_path, &render_env(&answers.secrets), true)?;
    report(&env_path, written)?;
    let (workspace, written) = crate::workspace::ensure(&dir.join("workspace"))?;
    let written = if written.is_empty() {
        "already there".to_string()
    } else {
        format!("wrote {}", written.join(", "))
    };
    crate::print::out(&format!(
        "workspace {} ({written})\nnext: put your keys in {}, then: egirl --config {} doctor\n",
        workspace.display(),
        env_path.display(),
        config_path.display()
    ))?;
    Ok(super::EXIT_OK)
}

struct Answers {
    endpoint: Option<String>,
    secrets: Vec<(&'static str, String)>,
}

fn ask() -> Result<Answers> {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut prompt = |question: &str, secret: bool| -> Result<String> {
        print!("{question}");
        std::io::stdout().flush()?;
        let _quiet = if secret { EchoOff::new() } else { None };
        Ok(lines
            .next()
            .transpose()?
            .unwrap_or_default()
            .trim()
            .to_string())
    };
    let endpoint = prompt("Local llama.cpp server [http://127.0.0.1:8080]: ", false)?;
    let mut secrets = Vec::new();
    for (var, label) in [
        ("ANTHROPIC_API_KEY", "Anthropic API key (enter to skip): "),
        ("OPENAI_API_KEY", "OpenAI API key (enter to skip): "),
        ("DISCORD_TOKEN", "Discord bot token (enter to skip): "),
        ("TELEGRAM_BOT_TOKEN", "Telegram bot token (enter to skip): "),
    ] {
        let value = prompt(label, true)?;
        if !value.is_empty() {
            secrets.push((var, value));
        }
    }
    Ok(Answers {
        endpoint: (!endpoint.is_empty()).then_some(endpoint),
        secrets,
    })
}

/// The terminal's echo off while a key is typed (as `sudo` and `ssh` do),
/// so a secret never shows on screen or in the scrollback (README:
/// secrets are redacted wherever they show); the newline still echoes.
/// The settings come back when this is dropped, an error included.
struct EchoOff {
    fd: std::os::fd::RawFd,
    saved: libc::termios,
    /// Restores the echo and exits on Ctrl+C meanwhile: SIGINT's default
    /// would leave the user's terminal without echo.
    on_interrupt: Option<tokio::task::JoinHandle<()>>,
}

impl EchoOff {
    /// None when stdin is not a terminal (nothing is echoed then).
    fn new() -> Option<EchoOff> {
        use std::os::fd::AsRawFd;
        let fd = std::io::stdin().as_raw_fd();
        // SAFETY: termios is plain data that tcgetattr fills from a
        // descriptor this process holds open for its whole life.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
            return None;
        }
        let mut quiet = saved;
        quiet.c_lflag &= !libc::ECHO;
        quiet.c_lflag |= libc::ECHONL;
        // SAFETY: as above; tcsetattr only reads `quiet`.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) } != 0 {
            return None;
        }
        let on_interrupt = tokio::runtime::Handle::try_current().ok().map(|runtime| {
            runtime.spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    // SAFETY: as in `drop`.
                    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &saved) };
                    println!();
                    std::process::exit(130);
                }
            })
        });
        Some(EchoOff {
            fd,
            saved,
            on_interrupt,
        })
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(task) = self.on_interrupt.take() {
            task.abort();
        }
        // SAFETY: restores the settings read in `new` on the same descriptor.
        unsafe { libc::tcsetattr(self.fd, libc::TCSANOW, &self.saved) };
    }
}

/// The template with the workspace next to the config and the chosen endpoint.
fn render_config(endpoint: Option<&str>) -> String {
    let mut section = String::new();
    let mut out = String::new();
    for line in CONFIG_TEMPLATE.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            section = trimmed.to_string();
        }
        let replaced = match (section.as_str(), trimmed.split('=').next().map(str::trim)) {
            ("[workspace]", Some("path")) => "path = \"workspace\"".to_string(),
            ("[local]", Some("endpoint")) if endpoint.is_some() => {
                format!("endpoint = \"{}\"", endpoint.unwrap_or_default())
            }
            _ => line.to_string(),
        };
        out.push_str(&replaced);
        out.push('\n');
    }
    out
}

/// The template's example `[remote.NAME]` sections uncommented for each
/// provider whose key was typed: a key alone enables nothing (a provider
/// needs its section), so without this a typed key would do nothing.
fn enable_remotes(config: &str, given: &[&str]) -> String {
    let mut out = String::with_capacity(config.len());
    let mut enabling = false;
    for line in config.lines() {
        if let Some(header) = line.strip_prefix("# [remote.") {
            let name = header.split(']').next().unwrap_or_default();
            enabling = REMOTE_KEYS
                .iter()
                .any(|(section, var)| *section == name && given.contains(var));
            if enabling {
                let var = REMOTE_KEYS
                    .iter()
                    .find(|(s, _)| *s == name)
                    .map(|(_, v)| *v);
                out.push_str(&format!(
                    "[remote.{name}]  # key: {} (in .env)\n",
                    var.unwrap_or_default()
                ));
                continue;
            }
        } else if line.trim().is_empty() {
            enabling = false;
        }
        match line.strip_prefix("# ") {
            Some(rest) if enabling => out.push_str(rest),
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Each remote provider's section and the variable holding its key.
const REMOTE_KEYS: &[(&str, &str)] = &[
    ("anthropic", "ANTHROPIC_API_KEY"),
    ("openai", "OPENAI_API_KEY"),
    ("azure", "AZURE_OPENAI_API_KEY"),
];

/// `.env`: the keys given, and every other secret egirl reads as a
/// commented placeholder (`# NAME=`) under a line saying what it is for.
fn render_env(given: &[(&str, String)]) -> String {
    let mut out = String::from(
        "# egirl's secrets: read at start from this file (and the environment),\n\
         # never from egirl.toml. Uncomment a line and fill in its value.\n",
    );
    let vars = crate::config::secrets::SECRET_VARS
        .iter()
        .chain([&crate::config::BRAVE_KEY_VAR]);
    for var in vars {
        out.push_str(&format!("\n# {}\n", secret_purpose(var)));
        match given.iter().find(|(name, _)| name == var) {
            Some((_, value)) => out.push_str(&format!("{var}={value}\n")),
            None => out.push_str(&format!("# {var}=\n")),
        }
    }
    out
}

/// What a secret variable is for, as `.env` says above its line.
fn secret_purpose(var: &str) -> &'static str {
    match var {
        "ANTHROPIC_API_KEY" => "Anthropic, with a [remote.anthropic] section",
        "OPENAI_API_KEY" => "OpenAI (or a compatible API), with a [remote.openai] section",
        "AZURE_OPENAI_API_KEY" => "Azure OpenAI, with a [remote.azure] section",
        "DISCORD_TOKEN" => "the Discord bot ([channels.discord] enabled = true)",
        "TELEGRAM_BOT_TOKEN" => "the Telegram bot ([channels.telegram] enabled = true)",
        "EGIRL_WEBHOOK_SECRET" => "the webhook: served only when this is set",
        "BRAVE_API_KEY" => "web_search with [tools.web.search] provider = \"brave\"",
        _ => "a secret egirl reads",
    }
}

/// Writes only if absent; secrets get mode 600 from the start.
fn write_new(path: &Path, body: &str, secret: bool) -> Result<bool> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    if secret {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(mut f) => {
            f.write_all(body.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e).with_context(|| format!("cannot create {}", path.display())),
    }
}

fn report(path: &Path, written: bool) -> std::io::Result<()> {
    let line = if written {
        format!("wrote {}\n", path.display())
    } else {
        format!("kept {} (already there)\n", path.display())
    };
    crate::print::out(&line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendered_config_parses_and_points_at_the_endpoint() {
        let text = render_config(Some("http://10.0.0.5:8080"));
        let c = crate::config::parse(&text, Path::new("egirl.toml")).unwrap();
        assert_eq!(c.local.endpoint, "http://10.0.0.5:8080");
        assert_eq!(c.workspace.path, "workspace");
    }

    #[test]
    fn env_holds_the_given_keys_and_a_placeholder_for_every_other() {
        let text = render_env(&[("OPENAI_API_KEY", "sk-1".into())]);
        assert!(text.contains("\nOPENAI_API_KEY=sk-1\n"), "{text}");
        assert!(!text.contains("# OPENAI_API_KEY="), "{text}");
        for var in ["ANTHROPIC_API_KEY", "TELEGRAM_BOT_TOKEN", "BRAVE_API_KEY"] {
            assert!(text.contains(&format!("\n# {var}=\n")), "{var}: {text}");
        }
    }

    #[test]
    fn never_overwrites_and_keeps_secrets_private() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".env");
        assert!(write_new(&p, "A=1\n", true).unwrap());
        assert!(!write_new(&p, "A=2\n", true).unwrap());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "A=1\n");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
