//! API keys and tokens: read from the environment (after `.env`), held in a
//! type whose Debug output is redacted, never written anywhere by egirl.

use std::path::PathBuf;

use secrecy::SecretString;

#[derive(Clone, Debug, Default)]
pub struct Secrets {
    pub anthropic_api_key: Option<SecretString>,
    pub openai_api_key: Option<SecretString>,
    pub azure_openai_api_key: Option<SecretString>,
    pub discord_token: Option<SecretString>,
    pub webhook_secret: Option<SecretString>,
    pub telegram_bot_token: Option<SecretString>,
}

/// The environment variables egirl reads secrets from.
pub const SECRET_VARS: [&str; 6] = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "DISCORD_TOKEN",
    "EGIRL_WEBHOOK_SECRET",
    "TELEGRAM_BOT_TOKEN",
];

/// Name endings that mark a variable as a secret, whoever set it
/// (compared without regard to case: `my_api_key` counts).
pub const SECRET_SUFFIXES: [&str; 4] = ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD"];

/// Whether a variable's name says it holds a secret: one of egirl's keys
/// or a name ending in one of `SECRET_SUFFIXES`.
pub fn is_secret_name(name: &str) -> bool {
    if SECRET_VARS.contains(&name) {
        return true;
    }
    let upper = name.to_ascii_uppercase();
    // An agent's webhook secret: `EGIRL_WEBHOOK_SECRET_<NAME>`.
    upper.starts_with("EGIRL_WEBHOOK_SECRET") || SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// The `name = value` pairs of the `.env` files egirl loaded, as dotenvy
/// parses them (a file that no longer parses gives what it can).
pub fn dotenv_entries(files: &[PathBuf]) -> Vec<(String, String)> {
    let mut entries = Vec::new();
    for file in files {
        let Ok(iter) = dotenvy::from_path_iter(file) else {
            continue;
        };
        entries.extend(iter.flatten());
    }
    entries
}

impl Secrets {
    pub fn from_env() -> Self {
        let get = |name: &str| {
            std::env::var(name)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .map(|v| SecretString::from(v.trim().to_string()))
        };
        Self {
            anthropic_api_key: get(SECRET_VARS[0]),
            openai_api_key: get(SECRET_VARS[1]),
            azure_openai_api_key: get(SECRET_VARS[2]),
            discord_token: get(SECRET_VARS[3]),
            webhook_secret: get(SECRET_VARS[4]),
            telegram_bot_token: get(SECRET_VARS[5]),
        }
    }

    /// Which secrets are present, by variable name (for `egirl doctor`).
    pub fn presence(&self) -> [(&'static str, bool); 6] {
        [
            (SECRET_VARS[0], self.anthropic_api_key.is_some()),
            (SECRET_VARS[1], self.openai_api_key.is_some()),
            (SECRET_VARS[2], self.azure_openai_api_key.is_some()),
            (SECRET_VARS[3], self.discord_token.is_some()),
            (SECRET_VARS[4], self.webhook_secret.is_some()),
            (SECRET_VARS[5], self.telegram_bot_token.is_some()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_by_key_and_suffix() {
        for name in [
            "DISCORD_TOKEN",
            "EGIRL_WEBHOOK_SECRET",
            "TELEGRAM_BOT_TOKEN",
            "FOO_TOKEN",
            "my_api_key",
            "DB_PASSWORD",
            "GH_SECRET",
            "EGIRL_WEBHOOK_SECRET_WORK",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "KEY",
            "TOKENS",
            "KEYBOARD_LAYOUT",
            "SSH_AUTH_SOCK",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn dotenv_entries_reads_names_and_values() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".env");
        std::fs::write(&file, "# note\nA=1\nexport B=\"two words\"\n").unwrap();
        let missing = dir.path().join("gone.env");
        assert_eq!(
            dotenv_entries(&[file, missing]),
            vec![("A".into(), "1".into()), ("B".into(), "two words".into())]
        );
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let s = Secrets {
            anthropic_api_key: Some(SecretString::from("sk-ant-very-secret".to_string())),
            ..Default::default()
        };
        let shown = format!("{s:?}");
        assert!(!shown.contains("very-secret"), "{shown}");
    }
}
