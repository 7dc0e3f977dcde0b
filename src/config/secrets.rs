//! API keys and tokens: read from the environment (after `.env`), held in a
//! type whose Debug output is redacted, never written anywhere by egirl.

use secrecy::SecretString;

#[derive(Clone, Debug, Default)]
pub struct Secrets {
    pub anthropic_api_key: Option<SecretString>,
    pub openai_api_key: Option<SecretString>,
    pub azure_openai_api_key: Option<SecretString>,
    pub discord_token: Option<SecretString>,
    pub webhook_secret: Option<SecretString>,
}

/// The environment variables egirl reads secrets from.
pub const SECRET_VARS: [&str; 5] = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "DISCORD_TOKEN",
    "EGIRL_WEBHOOK_SECRET",
];

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
        }
    }

    /// Which secrets are present, by variable name (for `egirl doctor`).
    pub fn presence(&self) -> [(&'static str, bool); 5] {
        [
            (SECRET_VARS[0], self.anthropic_api_key.is_some()),
            (SECRET_VARS[1], self.openai_api_key.is_some()),
            (SECRET_VARS[2], self.azure_openai_api_key.is_some()),
            (SECRET_VARS[3], self.discord_token.is_some()),
            (SECRET_VARS[4], self.webhook_secret.is_some()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
