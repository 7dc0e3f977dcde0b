//! Fixed prompt size: with the built-in tools, the fixed prompt
//! (static system text + tool list) must stay under 1,500 tokens so egirl
//! works on a 4,096-token local context; so must the fixed prompt with
//! everything on (every built-in offered and two MCP servers).
//!
//! Counted by a real llama-server's own tokenizer (`/tokenize`,
//! `/apply-template`): the one `make install` puts in ~/.cache/egirl
//! (SmolLM2-135M-Instruct), started here on a free port with `--jinja -c
//! 4096` and stopped at the end. Character counts (and chars/4) are printed
//! too, as a tokenizer-independent figure.
//!
//! The last table is each agent's fixed prompt, alone and with a second
//! and third agent declared: no agent's grows by adding agents.
//!
//! `cargo bench --bench prompt_size`; prints "skipped: ..." and exits 0
//! when the server or model is missing, or when not run by `cargo bench`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use egirl::agent::{STATIC_SYSTEM, system_prompt, user_message};
use egirl::chat::ChatMessage;
use egirl::config::{LocalConfig, ToolFormat};
use egirl::providers::llamacpp::{ChatRequest, LlamaCpp};
use egirl::providers::tool_call_text::{spaced_json, tools_system_block};

const TARGET_TOKENS: u64 = 1_500;
const N_CTX: u64 = 4_096;

/// Stops the server on every way out, panics included.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn cache_dir() -> PathBuf {
    match std::env::var_os("EGIRL_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/egirl"),
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

fn main() {
    // `cargo test --benches` runs bench targets without `--bench`: no server there.
    if !std::env::args().any(|a| a == "--bench") {
        println!("skipped: prompt_size runs under `cargo bench` only");
        return;
    }
    let cache = cache_dir();
    let binary = cache.join("llama/bin/llama-server");
    let model = cache.join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
    for (what, path) in [("llama-server", &binary), ("model", &model)] {
        if !path.is_file() {
            println!(
                "skipped: no {what} at {} (run `make install` or scripts/install-llama.sh)",
                path.display()
            );
            return;
        }
    }
    let port = free_port();
    let log_path = std::env::temp_dir().join(format!("egirl-prompt-size-{port}.log"));
    let log = std::fs::File::create(&log_path).expect("server log");
    let child = Command::new(&binary)
        .args(["--jinja", "-c", &N_CTX.to_string(), "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "-m"])
        .arg(&model)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("server log"))
        .stderr(log)
        .spawn()
        .expect("start llama-server");
    let server = Server(child);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let local = LocalConfig {
        endpoint: format!("http://127.0.0.1:{port}"),
        tool_format: ToolFormat::Qwen3,
        ..LocalConfig::default()
    };
    let outcome = runtime.block_on(measure(LlamaCpp::new(&local)));
    drop(server);
    if let Err(e) = outcome {
        eprintln!(
            "prompt_size failed: {e} (server log: {})",
            log_path.display()
        );
        std::process::exit(1);
    }
    let _ = std::fs::remove_file(&log_path);
}

/// The `<available_skills>` block for `tests/fixtures/skills` on a machine
/// that has every binary and variable they ask for (the largest list they
/// make), with the default budget; and how many skills it lists.
fn skills_block(scratch: &std::path::Path) -> (String, usize) {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/skills");
    let config = egirl::config::SkillsConfig {
        dirs: vec![fixtures.display().to_string()],
        ..Default::default()
    };
    let workspace = scratch.join("skills-ws");
    let registry = egirl::skills::Registry::load(&config, &workspace);
    let host = egirl::skills::gating::Host {
        os: std::env::consts::OS.to_string(),
        path: Vec::new(),
        env_is_set: Box::new(|_| true),
    };
    // Every binary present: a PATH of one folder holding them all.
    let bins = scratch.join("bins");
    let _ = std::fs::create_dir_all(&bins);
    for skill in registry.snapshot().skills.iter() {
        let r = &skill.requirements;
        for bin in r.bins.iter().chain(r.any_bins.iter()) {
            use std::os::unix::fs::PermissionsExt;
            let path = bins.join(bin);
            let _ = std::fs::write(&path, "#!/bin/sh\n");
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
        }
    }
    let host = egirl::skills::gating::Host {
        path: vec![bins],
        ..host
    };
    let snapshot = registry.reload_with(&host);
    let listed = snapshot
        .prompt
        .lines()
        .filter(|l| l.starts_with("- "))
        .count();
    (snapshot.prompt.clone(), listed)
}

async fn measure(server: LlamaCpp) -> Result<(), String> {
    let started = Instant::now();
    while server.health().await.is_err() {
        if started.elapsed() > Duration::from_secs(120) {
            return Err("llama-server not healthy within 120 s".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let props = server.props().await.map_err(|e| e.to_string())?;
    let count = async |text: &str| server.count_tokens(text).await.map_err(|e| e.to_string());

    let specs = egirl::tools::specs();
    let tools_block = tools_system_block(&specs);
    // As the wire puts it: system text, a blank line, the tools block.
    let fixed = format!("{STATIC_SYSTEM}\n\n{tools_block}");
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (workspace, _) =
        egirl::workspace::ensure(&dir.path().join("ws")).map_err(|e| e.to_string())?;
    let system = system_prompt(&workspace);
    let full_system = format!("{system}\n\n{tools_block}");

    println!(
        "model: {} (n_ctx {}); tokens by the server's /tokenize, no BOS",
        props.model_path.as_deref().unwrap_or("?"),
        props.n_ctx.unwrap_or(0)
    );
    println!();
    parts_header();
    let row = async |name: &str, text: &str| part_row(&count, name, text).await;
    row("STATIC_SYSTEM", STATIC_SYSTEM).await?;
    for spec in &specs {
        let line = spaced_json(&spec.to_openai_json());
        row(
            &format!("  tool `{}` (one line of the block)", spec.name),
            &line,
        )
        .await?;
    }
    let label = format!(
        "tools block (`tools_system_block`, {} tools)",
        egirl::tools::specs().len()
    );
    row(&label, &tools_block).await?;
    let fixed_tokens = row("**fixed prompt: STATIC_SYSTEM + tools block**", &fixed).await?;
    row(
        "workspace files (default templates)",
        &system[STATIC_SYSTEM.len()..],
    )
    .await?;
    row(
        "system prompt (`system_prompt`, default workspace)",
        &system,
    )
    .await?;
    let full_tokens = row("system prompt + tools block", &full_system).await?;
    let skills = skills_block(dir.path());
    row(
        &format!(
            "skills block: the {} fixture skills usable by the model, `[skills] prompt_chars` default",
            skills.1
        ),
        &skills.0,
    )
    .await?;

    // Rendered by the server's chat template, with BOS: what the model
    // really reads before the first user word, and a whole first turn.
    let rendered = async |system_text: &str, user: &str| -> Result<u64, String> {
        let request = ChatRequest {
            messages: vec![ChatMessage::system(system_text), ChatMessage::user(user)],
            tools: specs.clone().into(),
            max_tokens: 0,
            slot: None,
            images: Default::default(),
        };
        server
            .count_prompt(&request)
            .await
            .map_err(|e| e.to_string())
    };
    let fixed_rendered = rendered(STATIC_SYSTEM, "").await?;
    let full_rendered = rendered(&system, "").await?;
    let first_turn = rendered(&system, &user_message("hi", chrono::Local::now())).await?;
    println!();
    println!("| rendered by the chat template (qwen3 tool format, BOS included) | tokens |");
    println!("| --- | ---: |");
    println!("| fixed prompt, empty user message | {fixed_rendered} |");
    println!("| default workspace, empty user message | {full_rendered} |");
    println!("| default workspace, first turn \"hi\" | {first_turn} |");
    println!();
    let verdict = if fixed_tokens < TARGET_TOKENS {
        "meets"
    } else {
        "MISSES"
    };
    println!(
        "fixed prompt {fixed_tokens} tokens: {verdict} the target of < {TARGET_TOKENS}; \
         with the default workspace {full_tokens} tokens ({:.0}% of a {N_CTX}-token context)",
        full_tokens as f64 * 100.0 / N_CTX as f64
    );
    measure_mcp(&count, &specs, dir.path()).await?;
    measure_agents(&count, dir.path()).await
}

/// Each agent's fixed prompt (STATIC_SYSTEM + the tools block of what its
/// policy offers) and its system prompt on a workspace made from the
/// templates: one agent alone, then the same config with two agents
/// declared (`home`: tools.deny = ["exec"]; `work`). Adding agents adds
/// nothing to any agent's prompt.
async fn measure_agents(
    count: &impl AsyncFn(&str) -> Result<u64, String>,
    scratch: &std::path::Path,
) -> Result<(), String> {
    let base = format!(
        "[workspace]\npath = \"{}\"\n",
        scratch.join("agents-bench/workspace").display()
    );
    let two = format!("{base}[agents.home.tools]\ndeny = [\"exec\"]\n[agents.work]\n");
    let parse = |text: &str| {
        egirl::config::parse(text, std::path::Path::new("egirl.toml")).map_err(|e| e.to_string())
    };
    println!();
    println!("Several agents: each agent's fixed prompt, alone and beside others:");
    println!();
    println!(
        "| config | agent | tools | fixed prompt chars | tokens | + its workspace (templates) tokens |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: |");
    for (label, text) in [("one agent", &base), ("two agents declared", &two)] {
        let config = parse(text)?;
        for name in config.agent_names() {
            let agent = config.for_agent(&name).ok_or("declared agent")?;
            let specs = egirl::tools::offered(&agent);
            let tools_block = tools_system_block(&specs);
            let fixed = format!("{STATIC_SYSTEM}\n\n{tools_block}");
            let path = config.agent_workspace(&name);
            let (workspace, _) = egirl::workspace::ensure(&path).map_err(|e| e.to_string())?;
            let system = format!("{}\n\n{tools_block}", system_prompt(&workspace));
            println!(
                "| {label} | {name} | {} | {} | {} | {} |",
                specs.len(),
                fixed.chars().count(),
                count(&fixed).await?,
                count(&system).await?
            );
        }
    }
    Ok(())
}

/// The fixed prompt with server-everything and server-filesystem connected
/// (all their tools), as a turn offers it: the built-ins, then the MCP
/// tools' compact listing (`tools::mcp::specs`).
async fn measure_mcp(
    count: &impl AsyncFn(&str) -> Result<u64, String>,
    builtin: &[egirl::chat::ToolSpec],
    scratch: &std::path::Path,
) -> Result<(), String> {
    let cache = cache_dir().join("mcp/node_modules/@modelcontextprotocol");
    let everything = cache.join("server-everything/dist/index.js");
    let filesystem = cache.join("server-filesystem/dist/index.js");
    if !everything.is_file() || !filesystem.is_file() {
        println!();
        println!("MCP rows skipped: run scripts/install-mcp-servers.sh");
        return Ok(());
    }
    let text = format!(
        "[servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n\
         [servers.filesystem]\ncommand = \"node\"\nargs = [{:?}, {:?}]\n",
        everything.display().to_string(),
        filesystem.display().to_string(),
        scratch.display().to_string()
    );
    let config: egirl::config::McpConfig = toml::from_str(&text).map_err(|e| e.to_string())?;
    let env: Vec<_> = std::env::vars_os().collect();
    let manager = egirl::mcp::McpManager::start(&config, scratch, env, egirl::bus::EventBus::new());
    manager.settled().await;
    let connected = manager.tools().len();
    let mut specs = builtin.to_vec();
    let mcp_specs = egirl::tools::mcp::specs(&manager, "").await;
    specs.extend(mcp_specs.iter().cloned());
    manager.shutdown().await;
    if connected == 0 {
        return Err("no MCP tool connected (see the servers' state with egirl mcp list)".into());
    }
    let tools_block = tools_system_block(&specs);
    let fixed = format!("{STATIC_SYSTEM}\n\n{tools_block}");
    println!();
    println!("With server-everything and server-filesystem connected ({connected} MCP tools):");
    println!();
    parts_header();
    let row = async |name: &str, text: &str| part_row(count, name, text).await;
    for spec in &mcp_specs {
        let line = spaced_json(&spec.to_openai_json());
        row(&format!("  tool `{}`", spec.name), &line).await?;
    }
    let label = format!("tools block ({} tools)", specs.len());
    row(&label, &tools_block).await?;
    let fixed_tokens = row(
        "**fixed prompt with MCP: STATIC_SYSTEM + tools block**",
        &fixed,
    )
    .await?;
    let verdict = verdict(fixed_tokens);
    println!();
    println!(
        "fixed prompt with {connected} MCP tools: {fixed_tokens} tokens: {verdict} the budget of {TARGET_TOKENS}"
    );
    measure_everything_on(count, &mcp_specs, connected).await
}

/// Every built-in offered (`web_search` configured, `delegate_claude_code`'s
/// binary present, two ACP agents for `delegate`, the browser) and the two MCP servers: the largest tool list a turn
/// gets, as `tools::offered` lists it, then the `mcp` tool.
async fn measure_everything_on(
    count: &impl AsyncFn(&str) -> Result<u64, String>,
    mcp_specs: &[egirl::chat::ToolSpec],
    connected: usize,
) -> Result<(), String> {
    let mut config = egirl::config::Config::default();
    config.tools.web.search = Some(egirl::config::WebSearchConfig {
        provider: egirl::config::SearchProvider::Searxng,
        endpoint: Some("http://127.0.0.1:8888".into()),
    });
    // Any executable stands for `claude`: only its presence is checked.
    config.delegate.claude_code.binary = "/bin/sh".into();
    // Two ACP agents, described as a user would (`delegate` names them).
    for (name, description) in [
        ("claude", "Claude Code, for large refactors"),
        ("codex", "OpenAI codex, for a second opinion"),
    ] {
        let agent: egirl::config::DelegateAgent = toml::from_str(&format!(
            "command = \"{name}-acp\"\ndescription = {description:?}"
        ))
        .map_err(|e| e.to_string())?;
        config.delegate.agents.insert(name.into(), agent);
    }
    // The browser is offered when its executable exists.
    config.tools.browser.executable = "/bin/sh".into();
    let mut specs = egirl::tools::offered(&config);
    let builtins = specs.len();
    specs.extend(mcp_specs.iter().cloned());
    let tools_block = tools_system_block(&specs);
    let fixed = format!("{STATIC_SYSTEM}\n\n{tools_block}");
    println!();
    println!("Everything on: every built-in offered ({builtins} specs), {connected} MCP tools:");
    println!();
    parts_header();
    let row = async |name: &str, text: &str| part_row(count, name, text).await;
    for spec in &specs {
        let line = spaced_json(&spec.to_openai_json());
        row(&format!("  tool `{}`", spec.name), &line).await?;
    }
    row(
        &format!("tools block ({} tools)", specs.len()),
        &tools_block,
    )
    .await?;
    let fixed_tokens = row(
        "**fixed prompt, everything on: STATIC_SYSTEM + tools block**",
        &fixed,
    )
    .await?;
    let verdict = verdict(fixed_tokens);
    println!();
    println!(
        "fixed prompt with everything on: {fixed_tokens} tokens: {verdict} the budget of {TARGET_TOKENS} ({} left)",
        TARGET_TOKENS as i64 - fixed_tokens as i64
    );
    Ok(())
}

/// The head of a `| part | chars | chars/4 | tokens |` table.
fn parts_header() {
    println!("| part | chars | chars/4 | tokens |");
    println!("| --- | ---: | ---: | ---: |");
}

/// One row of that table: `text`'s characters, their quarter and its
/// tokens as the server counts them; the tokens.
async fn part_row(
    count: &impl AsyncFn(&str) -> Result<u64, String>,
    name: &str,
    text: &str,
) -> Result<u64, String> {
    let tokens = count(text).await?;
    let chars = text.chars().count();
    println!("| {name} | {chars} | {} | {tokens} |", chars.div_ceil(4));
    Ok(tokens)
}

fn verdict(tokens: u64) -> &'static str {
    if tokens <= TARGET_TOKENS {
        "meets"
    } else {
        "MISSES"
    }
}
