//! Which server answers at a local endpoint (found once by the probes in
//! `probe`), and what egirl can do with it.

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ServerKind {
    #[default]
    LlamaCpp,
    Vllm,
    Ollama,
    /// Answers chat completions, none of the probes.
    Other,
}

impl ServerKind {
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::LlamaCpp => "llama.cpp",
            ServerKind::Vllm => "vLLM",
            ServerKind::Ollama => "Ollama",
            ServerKind::Other => "OpenAI-compatible",
        }
    }

    /// Exact prompt token counts (`/tokenize`).
    pub fn exact_counts(self) -> bool {
        matches!(self, ServerKind::LlamaCpp | ServerKind::Vllm)
    }

    /// Prefix-cache hits reported per reply (`timings.cache_n`).
    pub fn cache_stats(self) -> bool {
        self == ServerKind::LlamaCpp
    }

    /// Slots: `id_slot` per session and `/slots` save/restore.
    pub fn slots(self) -> bool {
        self == ServerKind::LlamaCpp
    }

    /// One line for `egirl doctor`: what egirl can and cannot do here.
    pub fn capabilities(self) -> String {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        format!(
            "exact counts {}, cache stats {}, slot save {}",
            yes_no(self.exact_counts()),
            yes_no(self.cache_stats()),
            yes_no(self.slots())
        )
    }
}

/// What the probes found at one endpoint.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerInfo {
    pub kind: ServerKind,
    pub version: Option<String>,
    /// The server's context window, where it says.
    pub n_ctx: Option<u64>,
    pub total_slots: Option<u32>,
    /// llama-server's `chat_template_caps.supports_tools`.
    pub supports_tools: Option<bool>,
    /// The model takes images: llama-server's `/props` `modalities.vision`,
    /// Ollama's `/api/show` `capabilities`; vLLM does not say.
    pub vision: Option<bool>,
}
