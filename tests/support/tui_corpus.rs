//! A long, realistic conversation for the TUI benchmarks and the start-up
//! measurement: prose with headings, lists, tables, inline code and links,
//! fenced code in ten languages, tool calls, a few turns from Discord.
//! Deterministic (a fixed-seed generator), so every run renders the same.
//!
//! The same turns come out two ways: as the core `Event`s the TUI is fed
//! live (`events`), and as session records (`records`), which is what
//! `egirl --session ID` finds on disk. The benches include this file with
//! `#[path]`, as they do the fake llama-server.

use egirl::chat::{ChatMessage, ToolCall};
use egirl::protocol::{
    AnswerDelta, Event, EventKind, FinalAnswer, LocalRole, Origin, Route, Routing, TokenUsage,
    ToolCallEvent, ToolResultEvent, TurnEnded, TurnStarted,
};
use egirl::sessions::Record;
use serde_json::json;

/// The TUI's own session in the corpus.
pub const SESSION: &str = "tui-bench";
/// Fenced code blocks in the whole conversation, however many turns.
pub const CODE_BLOCKS: usize = 200;
/// Every `TOOL_EVERY`th turn reads a file before answering.
const TOOL_EVERY: usize = 4;
/// Every `DISCORD_EVERY`th turn comes from a Discord channel.
const DISCORD_EVERY: usize = 25;

/// Turns whose transcript (user, tool one-liner, answer) has `messages`
/// entries in the TUI: 889 turns for 2,000.
pub fn turns_for_entries(messages: usize) -> usize {
    count_turns(messages, |t| if is_tool_turn(t) { 3 } else { 2 })
}

/// Turns whose session file (user, assistant with a tool call, tool
/// result, answer) has `messages` records: 800 turns for 2,000.
pub fn turns_for_records(messages: usize) -> usize {
    count_turns(messages, |t| if is_tool_turn(t) { 4 } else { 2 })
}

fn count_turns(messages: usize, per_turn: impl Fn(usize) -> usize) -> usize {
    let (mut turns, mut n) = (0, 0);
    while n < messages {
        n += per_turn(turns);
        turns += 1;
    }
    turns
}

fn is_tool_turn(t: usize) -> bool {
    t % TOOL_EVERY == TOOL_EVERY - 1
}

/// One turn of the conversation.
pub struct Turn {
    pub session: String,
    pub origin: Origin,
    pub user: String,
    /// A `read_file` call made before answering: id, path, the file.
    pub tool: Option<(String, String, String)>,
    pub answer: String,
}

/// `n` turns; exactly `CODE_BLOCKS` answers carry a fenced code block,
/// spread evenly.
pub fn turns(n: usize) -> Vec<Turn> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Languages cycle over the code blocks, so each gets its share.
    let mut blocks = 0;
    (0..n)
        .map(|t| {
            let code = (t + 1) * CODE_BLOCKS / n > t * CODE_BLOCKS / n;
            let (session, origin) = if t % DISCORD_EVERY == DISCORD_EVERY - 1 {
                (
                    "discord-general".to_string(),
                    Origin::Discord("general".into()),
                )
            } else {
                (SESSION.to_string(), Origin::Tui)
            };
            let n = 1 + rng.below(3);
            let user = rng.sentences(n).trim_end().to_string();
            let tool = is_tool_turn(t).then(|| {
                let path = format!("src/{}/{}.rs", rng.word(), rng.word());
                let mut file = String::new();
                for i in 0..12 + rng.below(30) {
                    file.push_str(&format!("{i:>4}  {}\n", rng.sentence()));
                }
                (format!("call-{t}"), path, file)
            });
            let lang = code.then(|| {
                blocks += 1;
                blocks - 1
            });
            let answer = answer(&mut rng, lang);
            Turn {
                session,
                origin,
                user,
                tool,
                answer,
            }
        })
        .collect()
}

/// The turns as the core emits them: `turn_started`, `routing`, the tool
/// call and its result, the answer in ~4-character deltas (a token each),
/// `usage`, `final`, `turn_ended`.
pub fn events(turns: &[Turn]) -> Vec<Event> {
    let mut out = Vec::new();
    for turn in turns {
        let ev = |kind| Event {
            agent: None,
            submission: None,
            session: turn.session.clone(),
            origin: turn.origin.clone(),
            kind,
        };
        out.push(ev(EventKind::TurnStarted(TurnStarted {
            text: turn.user.clone(),
            ..Default::default()
        })));
        out.push(ev(EventKind::Routing(Routing {
            route: Route::Local(LocalRole::Main),
            model: "qwen3-8b".into(),
            reason: "local by default".into(),
            confidence: 1.0,
        })));
        if let Some((id, path, file)) = &turn.tool {
            out.push(ev(EventKind::ToolCall(ToolCallEvent {
                id: id.clone(),
                name: "read_file".into(),
                arguments: json!({ "path": path }),
                sandbox: None,
            })));
            out.push(ev(EventKind::ToolResult(ToolResultEvent {
                id: id.clone(),
                name: "read_file".into(),
                success: true,
                output: file.clone(),
                duration_ms: 1,
                diff: None,
            })));
        }
        for token in tokens(&turn.answer) {
            out.push(ev(EventKind::Delta(AnswerDelta {
                text: token.to_string(),
            })));
        }
        out.push(ev(EventKind::Usage(TokenUsage {
            provider: "llamacpp".into(),
            model: "qwen3-8b".into(),
            input_tokens: 4000,
            output_tokens: (turn.answer.len() / 4) as u64,
            cached_tokens: 3500,
            cost_usd: 0.0,
            tokens_per_sec: Some(48.0),
            latency_ms: None,
            endpoint: None,
            context: None,
        })));
        out.push(ev(EventKind::Final(FinalAnswer {
            text: turn.answer.clone(),
        })));
        out.push(ev(EventKind::TurnEnded(TurnEnded { interrupted: false })));
    }
    out
}

/// The turns of the TUI session as `sessions/<id>.jsonl` records.
pub fn records(turns: &[Turn]) -> Vec<Record> {
    let ts = chrono::DateTime::from_timestamp(1_760_000_000, 0).expect("a valid time");
    let record = |message| Record {
        ts,
        origin: Origin::Tui,
        typed: None,
        provider: None,
        message,
        compaction: None,
        details: Default::default(),
    };
    let mut out = Vec::new();
    for turn in turns {
        out.push(record(ChatMessage::user(turn.user.clone())));
        if let Some((id, path, file)) = &turn.tool {
            let call = ToolCall {
                id: id.clone(),
                name: "read_file".into(),
                arguments: json!({ "path": path }),
                arguments_error: None,
            };
            let mut asked = ChatMessage::assistant("");
            asked.tool_calls.push(call.clone());
            out.push(record(asked));
            out.push(record(ChatMessage::tool_result(&call, file.clone())));
        }
        out.push(record(ChatMessage::assistant(turn.answer.clone())));
    }
    out
}

/// `text` cut into tokens as a tokenizer would stream them: 1 to 7
/// bytes, 4 on average, never inside a character.
pub fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / 4 + 1);
    let mut start = 0;
    let mut i = 0usize;
    while start < text.len() {
        let mut end = (start + 1 + (i * 7 + 3) % 7).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
        i += 1;
    }
    out
}

/// A long answer for the streaming benchmark: prose, lists and a code
/// fence in turn, at least `bytes` long, ending with `marker`.
pub fn long_answer(bytes: usize, marker: &str) -> String {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut text = String::new();
    let mut block = 0;
    while text.len() < bytes {
        text.push_str(&answer(&mut rng, Some(block)));
        text.push_str("\n\n");
        block += 1;
    }
    text.push_str(&rng.sentences(2));
    text.push_str(marker);
    text
}

/// One answer: a few shapes of markdown, with a code block in language
/// number `code` (any number; they cycle) when asked.
fn answer(rng: &mut Rng, code: Option<usize>) -> String {
    let mut s = String::new();
    match rng.below(4) {
        0 => s.push_str(&rng.paragraph()),
        1 => {
            s.push_str(&format!("## {}\n\n", capitalized(&rng.words(3))));
            s.push_str(&rng.paragraph());
            s.push_str("\n\n");
            for _ in 0..2 + rng.below(4) {
                s.push_str(&format!("- {}\n", rng.sentence()));
            }
            s.push_str(&format!("  - nested: `{}`\n", rng.word()));
        }
        2 => {
            s.push_str(&rng.paragraph());
            s.push_str("\n\n| option | default | effect |\n| --- | ---: | --- |\n");
            for _ in 0..3 + rng.below(4) {
                s.push_str(&format!(
                    "| `{}` | {} | {} |\n",
                    rng.word(),
                    rng.below(4096),
                    rng.words(5)
                ));
            }
        }
        _ => {
            s.push_str(&format!("### {}\n\n", capitalized(&rng.words(2))));
            for i in 1..=3 + rng.below(3) {
                s.push_str(&format!("{i}. {}\n", rng.sentence()));
            }
            s.push_str(&format!("\n> {}\n", rng.sentence()));
        }
    }
    if let Some(n) = code {
        s.push_str("\n\n");
        s.push_str(&rng.paragraph());
        s.push_str("\n\n");
        s.push_str(&code_block(n, rng));
        s.push_str("\nThen ");
        s.push_str(&rng.sentences(2));
    }
    s
}

/// A fenced block of 8 to 40 lines in one of ten languages.
fn code_block(n: usize, rng: &mut Rng) -> String {
    const LANGS: [&str; 10] = [
        "rust",
        "python",
        "toml",
        "typescript",
        "bash",
        "json",
        "yaml",
        "go",
        "dockerfile",
        "sql",
    ];
    let lang = LANGS[n % LANGS.len()];
    let mut body = String::new();
    let lines = 8 + rng.below(33);
    while body.lines().count() < lines {
        let (a, b, k) = (rng.word(), rng.word(), rng.below(1000));
        body.push_str(&match lang {
            "rust" => format!(
                "/// Returns the {a} for `{b}`.\npub fn {a}_{k}(input: &str) -> Result<Vec<u32>, Error> {{\n    let {b}: Vec<u32> = input.split(',').map(|s| s.trim().parse()).collect::<Result<_, _>>()?;\n    Ok({b}.into_iter().filter(|v| *v > {k}).collect())\n}}\n\n"
            ),
            "python" => format!(
                "def {a}_{k}(path: str) -> dict[str, int]:\n    \"\"\"Count the {b} in a file.\"\"\"\n    counts = {{}}\n    with open(path) as f:\n        for line in f:\n            counts[line.strip()] = counts.get(line.strip(), 0) + {k}\n    return counts\n\n"
            ),
            "toml" => format!(
                "[{a}]\nenabled = true\nlimit = {k}\nname = \"{b}\"\npaths = [\"src/{a}\", \"tests/{b}\"]\n\n"
            ),
            "typescript" => format!(
                "export async function {a}{k}(url: string): Promise<{{ {b}: number }}> {{\n  const res = await fetch(`${{url}}/{b}?limit={k}`);\n  if (!res.ok) throw new Error(`{a} failed: ${{res.status}}`);\n  return (await res.json()) as {{ {b}: number }};\n}}\n\n"
            ),
            "bash" => format!(
                "# {a}: rebuild and check {b}\nfor f in src/{a}/*.rs; do\n  grep -n \"{b}\" \"$f\" | head -n {k} || echo \"no {b} in $f\"\ndone\ncargo test --locked {a} 2>&1 | tail -n 20\n"
            ),
            "json" => format!(
                "{{\n  \"{a}\": {{ \"limit\": {k}, \"enabled\": true }},\n  \"{b}\": [\"{a}\", \"{b}\", null, 3.5]\n}}\n"
            ),
            "yaml" => format!(
                "{a}:\n  image: ghcr.io/example/{b}:{k}\n  restart: unless-stopped\n  environment:\n    - {b}_LIMIT={k}\n"
            ),
            "go" => format!(
                "func {a}{k}(ctx context.Context, {b} []string) (int, error) {{\n\tn := 0\n\tfor _, s := range {b} {{\n\t\tif strings.HasPrefix(s, \"{a}\") {{\n\t\t\tn += {k}\n\t\t}}\n\t}}\n\treturn n, ctx.Err()\n}}\n\n"
            ),
            "dockerfile" => format!(
                "FROM rust:1.95 AS {a}\nWORKDIR /src/{b}\nCOPY . .\nRUN cargo build --release --locked && strip target/release/{a}\nEXPOSE {k}\n"
            ),
            _ => format!(
                "SELECT {a}.id, count(*) AS {b}_count\nFROM {a}\nJOIN {b} ON {b}.{a}_id = {a}.id\nWHERE {a}.score > {k}\nGROUP BY {a}.id;\n\n"
            ),
        });
    }
    format!("```{lang}\n{}\n```\n", body.trim_end())
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

const WORDS: [&str; 64] = [
    "config", "parser", "window", "session", "token", "cache", "prompt", "server", "request",
    "handler", "buffer", "layout", "frame", "stream", "router", "memory", "index", "worker",
    "channel", "schema", "field", "value", "error", "result", "module", "import", "branch",
    "commit", "test", "bench", "query", "column", "table", "record", "file", "path", "line",
    "width", "height", "theme", "style", "event", "state", "model", "slot", "context", "limit",
    "budget", "retry", "timeout", "socket", "client", "daemon", "signal", "thread", "task",
    "queue", "batch", "delta", "answer", "reply", "pane", "cursor", "offset",
];

/// xorshift64*: small, fast and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn word(&mut self) -> &'static str {
        WORDS[self.below(WORDS.len())]
    }

    fn words(&mut self, n: usize) -> String {
        (0..n).map(|_| self.word()).collect::<Vec<_>>().join(" ")
    }

    /// 6 to 20 words, some as inline code, bold or a link.
    fn sentence(&mut self) -> String {
        let n = 6 + self.below(15);
        let mut words = Vec::with_capacity(n);
        for _ in 0..n {
            let w = self.word();
            words.push(match self.below(20) {
                0 => format!("`{w}_{}`", self.below(100)),
                1 => format!("**{w}**"),
                2 => format!("[{w}](https://docs.example.org/{w})"),
                _ => w.to_string(),
            });
        }
        capitalized(&format!("{}.", words.join(" ")))
    }

    fn sentences(&mut self, n: usize) -> String {
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(&self.sentence());
            s.push(' ');
        }
        s
    }

    fn paragraph(&mut self) -> String {
        let n = 2 + self.below(5);
        self.sentences(n).trim_end().to_string()
    }
}
