//! Finding and reading the one config file. Configs are never merged: the
//! file found is read over the built-in defaults.

use std::path::{Path, PathBuf};

use super::locate::{key_on_line, line_col};
use super::{Config, MemoryConfig};

/// A config problem, reported as one line: `file:line:col: key: message`.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.line())]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub key: Option<String>,
    pub message: String,
}

impl ConfigError {
    fn line(&self) -> String {
        let mut out = self.file.display().to_string();
        if let (Some(line), Some(col)) = (self.line, self.column) {
            out.push_str(&format!(":{line}:{col}"));
        }
        out.push_str(": ");
        if let Some(key) = &self.key {
            out.push_str(&format!("`{key}`: "));
        }
        out.push_str(&self.message);
        out
    }
}

#[derive(Clone, Debug)]
pub struct LoadedConfig {
    pub config: Config,
    /// The file read, or None when running on built-in defaults.
    pub path: Option<PathBuf>,
}

/// A config file found, and whether by the working-directory search
/// (`./egirl.toml`) rather than named (`--config`, `$EGIRL_CONFIG`) or
/// in egirl's own home (`~/.egirl/egirl.toml`).
#[derive(Clone, Debug)]
pub struct FoundConfig {
    pub path: PathBuf,
    pub searched: bool,
}

/// `--config`, else `$EGIRL_CONFIG`, else `./egirl.toml`, else
/// `~/.egirl/egirl.toml`. An explicitly named file must exist.
pub fn find_config_path(explicit: Option<&Path>) -> Result<Option<PathBuf>, ConfigError> {
    Ok(find_config(explicit)?.map(|found| found.path))
}

/// As [`find_config_path`], saying how the file was found.
pub fn find_config(explicit: Option<&Path>) -> Result<Option<FoundConfig>, ConfigError> {
    let named = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("EGIRL_CONFIG").map(PathBuf::from));
    if let Some(path) = named {
        if !path.is_file() {
            return Err(ConfigError {
                file: path,
                line: None,
                column: None,
                key: None,
                message: "config file not found".into(),
            });
        }
        return Ok(Some(FoundConfig {
            path,
            searched: false,
        }));
    }
    let [cwd, home] = fallback_paths();
    // `./egirl.toml`, as a message about it should name it.
    let cwd = Path::new(".").join(cwd);
    Ok([(cwd, true), (home, false)]
        .into_iter()
        .find(|(p, _)| p.is_file())
        .map(|(path, searched)| FoundConfig { path, searched }))
}

/// Where a config is looked for when none is named, in order.
fn fallback_paths() -> [PathBuf; 2] {
    [
        PathBuf::from("egirl.toml"),
        super::expand_home("~/.egirl/egirl.toml"),
    ]
}

/// Every file [`find_config_path`] would try at a start without
/// `--config` (absolute where the working directory is known), whether or
/// not it exists now: one the model could write would take over the next
/// start, so all of them are protected, not only the one in use.
pub fn config_candidates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::env::var_os("EGIRL_CONFIG")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    out.extend(
        fallback_paths()
            .into_iter()
            .map(|p| std::path::absolute(&p).unwrap_or(p)),
    );
    out
}

pub fn load(explicit: Option<&Path>) -> Result<LoadedConfig, ConfigError> {
    let Some(found) = find_config(explicit)? else {
        return Ok(LoadedConfig {
            config: Config::default(),
            path: None,
        });
    };
    let text = read_config(&found.path)?;
    load_text(&text, &found.path)
}

/// The text of the config file at `path`.
pub fn read_config(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: None,
        column: None,
        key: None,
        message: format!("cannot read: {e}"),
    })
}

/// Parses the text read from `path` (read once: what is checked against
/// the trust store is what is parsed).
pub fn load_text(text: &str, path: &Path) -> Result<LoadedConfig, ConfigError> {
    let mut config = parse(text, path)?;
    // A relative workspace path is relative to the config file, not the cwd.
    let ws = &config.workspace.path;
    if !ws.starts_with('~')
        && Path::new(ws).is_relative()
        && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
    {
        config.workspace.path = dir.join(ws).display().to_string();
    }
    Ok(LoadedConfig {
        config,
        path: Some(path.to_path_buf()),
    })
}

/// Parses and validates config text; errors name line, column and key.
pub fn parse(text: &str, file: &Path) -> Result<Config, ConfigError> {
    let de = toml::Deserializer::new(text);
    let config: Config = serde_path_to_error::deserialize(de).map_err(|err| {
        let key = err.path().to_string();
        let inner = err.into_inner();
        let (line, column) = match inner.span() {
            Some(span) => line_col(text, span.start),
            None => (None, None),
        };
        // A syntax error has no key path: name the key written on that line.
        let key = (!key.is_empty() && key != ".")
            .then_some(key)
            .or_else(|| line.and_then(|l| key_on_line(text, l)));
        ConfigError {
            file: file.to_path_buf(),
            line,
            column,
            key,
            message: inner.message().trim().replace('\n', " "),
        }
    })?;
    validate(&config).map_err(|(key, message)| ConfigError::at(text, file, &key, None, message))?;
    Ok(config)
}

/// Checks serde cannot express. Returns the dotted key and the problem.
fn validate(config: &Config) -> Result<(), (String, String)> {
    validate_urls(config)?;
    validate_limits(config)?;
    validate_memory(&config.memory)?;
    config.tools.web.check()?;
    config.tools.browser.check()?;
    config.images.check()?;
    config.delegate.check()?;
    super::agents::check(config)?;
    super::mcp::validate(&config.mcp)?;
    for (i, hook) in config.hooks.iter().enumerate() {
        if hook
            .command
            .first()
            .is_none_or(|program| program.trim().is_empty())
        {
            return Err((
                format!("hooks[{i}].command"),
                "must name a program: [\"/path/to/script\", \"arg\"...]".into(),
            ));
        }
    }
    for (i, prefix) in config.tools.exec.allow.iter().enumerate() {
        match shell_words::split(prefix) {
            Ok(words) if !words.is_empty() => {}
            _ => {
                return Err((
                    format!("tools.exec.allow[{i}]"),
                    format!("`{prefix}` is not a command prefix"),
                ));
            }
        }
    }
    Ok(())
}

/// Every endpoint and base URL is an http(s) URL.
fn validate_urls(config: &Config) -> Result<(), (String, String)> {
    let url = |key: &str, value: &str| -> Result<(), (String, String)> {
        match reqwest::Url::parse(value) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(()),
            _ => Err((key.to_string(), format!("`{value}` is not an http(s) URL"))),
        }
    };
    url("local.endpoint", &config.local.endpoint)?;
    for endpoint in &config.local.endpoints {
        url("local.endpoints", endpoint)?;
    }
    if let Some(fast) = &config.local.fast {
        if !fast.endpoint.is_empty() {
            url("local.fast.endpoint", &fast.endpoint)?;
        }
        for endpoint in &fast.endpoints {
            url("local.fast.endpoints", endpoint)?;
        }
    }
    if let Some(e) = &config.local.embeddings {
        url("local.embeddings.endpoint", &e.endpoint)?;
    }
    if let Some(a) = &config.remote.anthropic {
        url("remote.anthropic.base_url", &a.base_url)?;
    }
    if let Some(o) = &config.remote.openai {
        url("remote.openai.base_url", &o.base_url)?;
    }
    if let Some(a) = &config.remote.azure {
        url("remote.azure.endpoint", &a.endpoint)?;
    }
    if let Some(p) = &config.channels.discord.proxy {
        url("channels.discord.proxy", p)?;
    }
    url(
        "channels.telegram.api_url",
        &config.channels.telegram.api_url,
    )
}

/// The local server's, the agent's and routing's numbers are in range,
/// and the compaction model is one egirl has.
fn validate_limits(config: &Config) -> Result<(), (String, String)> {
    if config.local.max_concurrent == 0 {
        return Err(("local.max_concurrent".into(), "must be at least 1".into()));
    }
    if config.local.context_length < 512 {
        return Err((
            "local.context_length".into(),
            "must be at least 512 tokens".into(),
        ));
    }
    if config.agent.max_turns == 0 {
        return Err(("agent.max_turns".into(), "must be at least 1".into()));
    }
    if !(0.0..=1.0).contains(&config.agent.compact_at) {
        return Err((
            "agent.compact_at".into(),
            "must be between 0 (off) and 1".into(),
        ));
    }
    if !matches!(
        config.agent.compaction_model.as_str(),
        "local" | "fast" | "remote"
    ) {
        return Err((
            "agent.compaction_model".into(),
            format!(
                "`{}` is not a model egirl has: use \"local\", \"fast\" ([local.fast], else the main model) or \"remote\"",
                config.agent.compaction_model
            ),
        ));
    }
    for (key, cap) in [
        ("remote.budget_day_usd", config.remote.budget_day_usd),
        ("remote.budget_month_usd", config.remote.budget_month_usd),
    ] {
        if cap.is_some_and(|usd| !usd.is_finite() || usd < 0.0) {
            return Err((key.into(), "must be a number of USD, 0 or more".into()));
        }
    }
    if !(0.0..=1.0).contains(&config.routing.escalation_threshold) {
        return Err((
            "routing.escalation_threshold".into(),
            "must be between 0 and 1".into(),
        ));
    }
    Ok(())
}

/// The memory search's weights and limits are in range.
fn validate_memory(memory: &MemoryConfig) -> Result<(), (String, String)> {
    for (key, weight) in [
        ("memory.vector_weight", memory.vector_weight),
        ("memory.text_weight", memory.text_weight),
    ] {
        if !(0.0..=1.0).contains(&weight) {
            return Err((key.into(), "must be between 0 and 1".into()));
        }
    }
    if memory.vector_weight + memory.text_weight <= 0.0 {
        return Err((
            "memory.text_weight".into(),
            "memory.vector_weight and memory.text_weight cannot both be 0".into(),
        ));
    }
    if !(0.0..=1.0).contains(&memory.min_score) {
        return Err(("memory.min_score".into(), "must be between 0 and 1".into()));
    }
    if memory.max_results == 0 {
        return Err(("memory.max_results".into(), "must be at least 1".into()));
    }
    if memory.candidate_multiplier == 0 {
        return Err((
            "memory.candidate_multiplier".into(),
            "must be at least 1".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, Path::new("egirl.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn empty_config_is_all_defaults() {
        let c = parse("", Path::new("egirl.toml")).unwrap();
        assert_eq!(c.agent.max_turns, 10);
        assert_eq!(c.tools.exec.approval, super::super::ExecApproval::Ask);
        assert!(c.local.server.is_none());
    }

    #[test]
    fn the_repo_config_documents_the_memory_defaults() {
        let repo = include_str!("../../egirl.toml");
        let c = parse(repo, Path::new("egirl.toml")).unwrap();
        assert_eq!(c.memory, super::super::MemoryConfig::default());
    }

    #[test]
    fn compaction_settings_are_checked() {
        let c = parse("", Path::new("egirl.toml")).unwrap();
        assert_eq!(c.agent.compact_at, 0.75);
        assert!(c.agent.memory_flush);
        assert_eq!(c.agent.compaction_model, "fast");
        let c = parse(
            "[agent]\ncompaction_model = \"remote\"",
            Path::new("egirl.toml"),
        )
        .unwrap();
        assert_eq!(c.agent.compaction_model, "remote");
        let c = parse(
            "[agent]\ncompaction_model = \"fast\"",
            Path::new("egirl.toml"),
        )
        .unwrap();
        assert_eq!(c.agent.compaction_model, "fast");
        let e = err("[agent]\ncompaction_model = \"gpu9\"");
        assert!(
            e.contains("agent.compaction_model") && e.contains("`gpu9`"),
            "{e}"
        );
        let e = err("[agent]\ncompact_at = 1.5");
        assert!(e.contains("agent.compact_at"), "{e}");
    }

    #[test]
    fn memory_settings_are_checked() {
        for (bad, key) in [
            ("[memory]\nvector_weight = 1.5", "memory.vector_weight"),
            (
                "[memory]\nvector_weight = 0.0\ntext_weight = 0.0",
                "memory.text_weight",
            ),
            ("[memory]\nmin_score = -1.0", "memory.min_score"),
            ("[memory]\nmax_results = 0", "memory.max_results"),
            ("[tools.web]\nmax_bytes = 0", "tools.web.max_bytes"),
            ("[tools.web]\ntimeout = \"0\"", "tools.web.timeout"),
            (
                "[delegate.claude_code]\ntimeout = \"0\"",
                "delegate.claude_code.timeout",
            ),
            (
                "[memory]\ncandidate_multiplier = 0",
                "memory.candidate_multiplier",
            ),
        ] {
            let e = err(bad);
            assert!(e.contains(&format!("`{key}`")), "{bad}: {e}");
        }
    }

    #[test]
    fn syntax_error_names_line_and_column() {
        let e = err("[local]\nendpoint = \"http://x\n");
        assert!(e.starts_with("egirl.toml:2:"), "{e}");
        assert!(e.contains("`local.endpoint`"), "{e}");
    }

    #[test]
    fn wrong_type_names_key_and_position() {
        let e = err("[local]\nendpoint = \"http://127.0.0.1:1\"\ncontext_length = \"big\"\n");
        assert!(
            e.starts_with("egirl.toml:3:18: `local.context_length`:"),
            "{e}"
        );
    }

    #[test]
    fn unknown_key_is_refused() {
        let e = err("[tools.exec]\napprovel = \"ask\"\n");
        assert!(e.contains("egirl.toml:2:1"), "{e}");
        assert!(e.contains("approvel"), "{e}");
    }

    #[test]
    fn missing_required_value_is_named() {
        let e = err("[local.server]\nbinary = \"llama-server\"\n");
        assert!(e.contains("local.server"), "{e}");
        assert!(e.contains("model"), "{e}");
    }

    #[test]
    fn bad_url_and_enum_are_refused() {
        let e = err("[local]\nendpoint = \"localhost:8080\"\n");
        assert!(e.starts_with("egirl.toml:2:1: `local.endpoint`"), "{e}");
        let e = err("[tools.exec]\napproval = \"sometimes\"\n");
        assert!(e.contains("tools.exec.approval"), "{e}");
        assert!(e.contains(":2:12"), "{e}");
    }

    #[test]
    fn every_endpoint_is_a_url() {
        let e = err("[local]\nendpoints = [\"http://a:1\", \"gpu2:8080\"]\n");
        assert!(e.starts_with("egirl.toml:2:1: `local.endpoints`"), "{e}");
        let e = err("[local.fast]\nendpoint = \"fast:8082\"\n");
        assert!(
            e.starts_with("egirl.toml:2:1: `local.fast.endpoint`"),
            "{e}"
        );
    }

    #[test]
    fn discord_ids_accept_strings_and_integers() {
        let c = parse(
            "[channels.discord]\nallowed_users = [\"123\", 456]\n",
            Path::new("egirl.toml"),
        )
        .unwrap();
        assert_eq!(c.channels.discord.allowed_users, vec!["123", "456"]);
        let c = parse(
            "[channels.telegram]\nallowed_chats = [\"dm\", -1001234]\n",
            Path::new("egirl.toml"),
        )
        .unwrap();
        assert_eq!(c.channels.telegram.allowed_chats, vec!["dm", "-1001234"]);
    }
}
