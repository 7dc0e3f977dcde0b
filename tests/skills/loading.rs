//! Discovery, parsing, gating, precedence and the prompt block, on the
//! fixtures.

use std::sync::Arc;

use egirl::routing::SkillComplexity;
use egirl::skills::{Registry, Snapshot};

use super::{config, fixtures, host, workspace};

const REAL_WORLD: [&str; 12] = [
    "1password",
    "apple-notes",
    "coding-agent",
    "github",
    "himalaya",
    "notion",
    "obsidian",
    "pdf",
    "spotify",
    "summarize",
    "tmux",
    "weather",
];

fn load_dir(dir: &std::path::Path, bins: &[&str], env: &'static [&'static str]) -> Arc<Snapshot> {
    let (_tmp, ws) = workspace();
    let registry = Registry::load(&config(&[dir]), &ws);
    let fake = host(bins, env);
    registry.reload_with(&fake.host)
}

#[test]
fn real_world_skills_all_load_and_gate_on_this_machine_s_tools() {
    let snap = load_dir(&fixtures(), &["gh", "curl", "tmux", "mutool", "codex"], &[]);
    assert!(snap.broken.is_empty(), "{:?}", snap.broken);
    let names: Vec<&str> = snap.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, REAL_WORLD);

    let reason = |name: &str| snap.get(name).and_then(|s| s.unavailable.clone());
    for ok in ["github", "weather", "tmux", "pdf", "coding-agent"] {
        assert_eq!(reason(ok), None, "{ok}");
    }
    assert_eq!(
        reason("summarize").as_deref(),
        Some("missing on PATH: summarize")
    );
    assert_eq!(
        reason("spotify").as_deref(),
        Some(
            "needs one of: spogo, spotify_player; environment variable not set: SPOTIFY_CLIENT_ID"
        )
    );
    assert_eq!(
        reason("1password").as_deref(),
        Some("missing on PATH: op; environment variable not set: OP_SERVICE_ACCOUNT_TOKEN")
    );
    assert_eq!(
        reason("apple-notes").as_deref(),
        Some("only for macos (this is linux); missing on PATH: memo")
    );
    assert_eq!(
        reason("notion").as_deref(),
        Some("environment variable not set: NOTION_API_KEY")
    );

    // Multi-line JSON metadata (github), one-line JSON with egirl keys
    // (weather), nested YAML under the legacy clawdbot key (summarize).
    let github = snap.get("github").unwrap();
    assert_eq!(github.emoji.as_deref(), Some("🐙"));
    assert_eq!(github.homepage.as_deref(), Some("https://cli.github.com"));
    assert!(
        github
            .description
            .starts_with("Interact with GitHub using the `gh` CLI: issues")
    );
    let weather = snap.get("weather").unwrap();
    assert_eq!(weather.complexity, SkillComplexity::Local);
    assert_eq!(
        weather.triggers,
        ["forecast", "will it rain", "temperature outside"]
    );
    let summarize = snap.get("summarize").unwrap();
    assert_eq!(summarize.emoji.as_deref(), Some("🧾"));
    assert!(
        summarize
            .description
            .ends_with("for \"what's in this link\"."),
        "{}",
        summarize.description
    );
    assert_eq!(
        snap.get("coding-agent").unwrap().complexity,
        SkillComplexity::Remote
    );
    let one_password = snap.get("1password").unwrap();
    assert!(!one_password.model_invocable && one_password.user_invocable);

    // Only available, model-invocable skills reach the prompt.
    assert!(snap.prompt.starts_with("<available_skills>\n"));
    for listed in ["github", "weather", "tmux", "pdf", "coding-agent"] {
        assert!(
            snap.prompt.contains(&format!("- {listed}: ")),
            "{listed}: {}",
            snap.prompt
        );
    }
    for hidden in ["summarize", "spotify", "1password", "apple-notes", "notion"] {
        assert!(!snap.prompt.contains(&format!("- {hidden}")), "{hidden}");
    }
    // The router knows the pinned ones; triggers pre-select.
    assert_eq!(
        snap.router
            .find_in_message("what's the forecast for Paris?")
            .map(|m| m.name.as_str()),
        Some("weather")
    );
    assert_eq!(
        snap.preselect("will it rain tomorrow?")
            .map(|s| s.name.as_str()),
        Some("weather")
    );
    assert!(snap.preselect("hello there").is_none());
}

#[test]
fn edge_cases_load_or_are_listed_with_file_and_line() {
    let snap = load_dir(&fixtures().join("edge"), &["sh"], &[]);
    let names: Vec<&str> = snap.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "always",
            "base-dir",
            "bom-blank-line",
            "bom-crlf",
            "colon-description",
            "küche",
            "leading-blank-line",
            "legacy-clawdis",
            "mac-only",
            "missing-bin",
            "missing-env",
            "no-frontmatter",
            "no-name",
            "quick-note",
            "scalars",
            "summary",
        ]
    );
    let get = |name: &str| snap.get(name).unwrap();

    assert_eq!(
        get("bom-crlf").description,
        "Written on Windows, with a byte-order mark."
    );
    assert!(get("bom-crlf").available());
    assert_eq!(
        get("scalars").description,
        "A folded description that spans three lines in the file."
    );
    assert_eq!(
        get("scalars").homepage.as_deref(),
        Some("https://example.com/it's")
    );
    assert_eq!(
        get("küche").description,
        "Rezepte und Einkaufslisten 🍲 — 料理のレシピ"
    );
    assert_eq!(
        get("no-name").description,
        "A skill without a name; the folder names it."
    );

    // Not YAML (an unquoted ": " in the description), read key by key.
    let colon = get("colon-description");
    assert_eq!(
        colon.description,
        "Notes: quick capture, then file them: inbox first"
    );
    assert_eq!(colon.complexity, SkillComplexity::Local);
    assert!(
        colon
            .warning
            .as_deref()
            .is_some_and(|w| w.starts_with("line 3: ")),
        "{:?}",
        colon.warning
    );

    // Gating.
    assert_eq!(
        get("missing-bin").unavailable.as_deref(),
        Some("missing on PATH: egirl-test-no-such-binary")
    );
    assert_eq!(
        get("missing-env").unavailable.as_deref(),
        Some("environment variable not set: EGIRL_TEST_NO_SUCH_VARIABLE")
    );
    assert_eq!(
        get("legacy-clawdis").unavailable.as_deref(),
        Some("environment variable not set: EGIRL_TEST_NO_SUCH_VARIABLE")
    );
    assert_eq!(
        get("mac-only").unavailable.as_deref(),
        Some("only for macos (this is linux)")
    );
    assert!(get("always").available());

    // The single-file skill's folder is the directory itself.
    let quick = get("quick-note");
    assert!(quick.path.ends_with("edge/quick-note.md"));
    assert_eq!(
        quick.base_dir,
        std::fs::canonicalize(fixtures().join("edge")).unwrap()
    );

    // Broken ones, with file and line; README.md (no frontmatter) is not a skill.
    let broken: Vec<(String, usize, String)> = snap
        .broken
        .iter()
        .map(|b| (b.name.clone(), b.line, b.error.clone()))
        .collect();
    assert_eq!(broken.len(), 3, "{broken:?}");
    let (name, line, error) = &broken[0];
    assert_eq!(name, "bad-yaml");
    assert!(error.starts_with("invalid YAML"), "{error}");
    assert_eq!(*line, 6, "the file line of `   bins: [jq`");
    assert!(
        snap.broken[0].message().contains("edge/bad-yaml/SKILL.md:"),
        "{}",
        snap.broken[0].message()
    );
    let (name, line, error) = &broken[1];
    assert_eq!((name.as_str(), *line), ("multi-line-name", 3));
    assert_eq!(error, "`name` must be one line");
    let (name, line, error) = &broken[2];
    assert_eq!((name.as_str(), *line), ("no-description", 1));
    assert!(error.contains("missing `description`"), "{error}");
}

/// Files other agents load: no frontmatter, a byte-order mark
/// and a blank line before it, blank lines before it, `summary` for
/// `description`. Named by their folder or their `name`, described by
/// their first paragraph or their `summary`, gated and listed like any.
#[test]
fn what_peers_load_loads_with_its_name_and_description() {
    let snap = load_dir(&fixtures().join("edge"), &["sh"], &[]);
    let get = |name: &str| {
        snap.get(name)
            .unwrap_or_else(|| panic!("{name} loads: {:?}", snap.broken))
    };

    let plain = get("no-frontmatter");
    assert_eq!(
        plain.description,
        "Drafts release notes from the merged pull requests since the last tag, grouped by area."
    );
    assert!(plain.available() && plain.model_invocable && plain.user_invocable);
    assert!(plain.warning.is_none());
    let dir = std::fs::canonicalize(fixtures().join("edge/no-frontmatter")).unwrap();
    assert_eq!(plain.base_dir, dir);

    assert_eq!(
        get("bom-blank-line").description,
        "A byte-order mark, then a blank line, then the frontmatter."
    );
    let leading = get("leading-blank-line");
    assert_eq!(
        leading.description,
        "Two blank lines before the opening fence."
    );
    // Its frontmatter counts: the gate in it holds.
    assert_eq!(
        leading.unavailable.as_deref(),
        Some("environment variable not set: EGIRL_TEST_NO_SUCH_VARIABLE")
    );
    assert_eq!(
        get("summary").description,
        "Says what it does under `summary:`, as some collections write it."
    );

    // The prompt listing has them, with those descriptions.
    let block = &snap.prompt;
    for line in [
        "- no-frontmatter: Drafts release notes from the merged pull requests",
        "- bom-blank-line: A byte-order mark",
        "- summary: Says what it does",
    ] {
        assert!(block.contains(line), "{line} in {block}");
    }
    assert!(
        !block.contains("leading-blank-line"),
        "unavailable: not listed"
    );
    assert!(!block.contains("multi-line-name"), "broken: not listed");
}

#[test]
fn the_real_machine_gates_too() {
    // PATH and the environment as they are: a name nobody has is missing.
    let (_tmp, ws) = workspace();
    let registry = Registry::load(&config(&[&fixtures().join("edge")]), &ws);
    let snap = registry.snapshot();
    assert!(!snap.get("missing-bin").unwrap().available());
    assert!(!snap.get("missing-env").unwrap().available());
    let expected_mac = std::env::consts::OS == "macos";
    assert_eq!(snap.get("mac-only").unwrap().available(), expected_mac);
}

#[test]
fn precedence_workspace_then_dirs_in_order() {
    let user = fixtures().join("user");
    let (_tmp, ws) = workspace();
    let fake = host(&["gh", "curl"], &[]);

    let registry = Registry::load(&config(&[&user, &fixtures()]), &ws);
    let snap = registry.reload_with(&fake.host);
    let github = snap.get("github").unwrap();
    assert!(
        github.description.starts_with("The user's own"),
        "{}",
        github.description
    );
    assert_eq!(snap.skills.iter().filter(|s| s.name == "github").count(), 1);

    let registry = Registry::load(&config(&[&fixtures(), &user]), &ws);
    let snap = registry.reload_with(&fake.host);
    assert!(
        snap.get("github")
            .unwrap()
            .description
            .starts_with("Interact with GitHub")
    );

    // The workspace's own skills win over every configured directory.
    std::fs::create_dir_all(ws.join("skills/github")).unwrap();
    std::fs::write(
        ws.join("skills/github/SKILL.md"),
        "---\nname: github\ndescription: Workspace copy.\n---\n",
    )
    .unwrap();
    let snap = registry.reload_with(&fake.host);
    let github = snap.get("github").unwrap();
    assert_eq!(github.description, "Workspace copy.");
    assert_eq!(github.location, "skills/github/SKILL.md");
}

#[test]
fn symlinks_out_of_a_skills_dir_are_refused() {
    let (tmp, ws) = workspace();
    let outside = tmp.path().join("elsewhere/sneaky");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("SKILL.md"),
        "---\nname: sneaky\ndescription: d\n---\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("skills/sneaky")).unwrap();
    std::os::unix::fs::symlink(outside.join("SKILL.md"), ws.join("skills/alias.md")).unwrap();
    // A link that stays inside is fine.
    std::fs::create_dir_all(ws.join("skills/real")).unwrap();
    std::fs::write(
        ws.join("skills/real/SKILL.md"),
        "---\nname: real\ndescription: d\n---\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(ws.join("skills/real"), ws.join("skills/zz-alias")).unwrap();

    let snap = Registry::load(&config(&[]), &ws).snapshot();
    let names: Vec<&str> = snap.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["real"],
        "the alias of real is the same name, shadowed"
    );
    let refused: Vec<&str> = snap.broken.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(refused, ["alias", "sneaky"]);
    assert!(snap.broken.iter().all(|b| b.error.contains("outside")));
}

#[test]
fn the_prompt_block_keeps_to_its_budget_and_stays_byte_identical() {
    let (_tmp, ws) = workspace();
    let fake = host(&["gh", "curl", "tmux", "mutool", "codex"], &[]);
    let full = Registry::load(&config(&[&fixtures()]), &ws)
        .reload_with(&fake.host)
        .prompt
        .clone();

    let mut tight = config(&[&fixtures()]);
    tight.prompt_chars = full.chars().count() * 2 / 3;
    let registry = Registry::load(&tight, &ws);
    let first = registry.reload_with(&fake.host).prompt.clone();
    assert!(first.chars().count() <= tight.prompt_chars);
    assert!(first.contains('…'), "descriptions were shortened: {first}");
    for name in ["github", "weather", "tmux", "pdf", "coding-agent"] {
        assert!(
            first.contains(&format!("- {name}")),
            "no skill dropped: {first}"
        );
    }
    let again = registry.reload_with(&fake.host).prompt.clone();
    assert_eq!(first, again);

    tight.prompt_chars = 300;
    let small = Registry::load(&tight, &ws)
        .reload_with(&fake.host)
        .prompt
        .clone();
    assert!(small.chars().count() <= 300, "{small}");
    assert!(
        small.contains("more skills: list_skills shows them"),
        "{small}"
    );
}

#[test]
fn the_repo_config_documents_the_defaults() {
    let repo = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/egirl.toml"))
        .expect("repo egirl.toml");
    let parsed = egirl::config::parse(&repo, std::path::Path::new("egirl.toml"))
        .expect("repo config parses");
    let defaults = egirl::config::SkillsConfig::default();
    assert_eq!(parsed.skills.dirs, defaults.dirs);
    assert_eq!(parsed.skills.prompt_chars, defaults.prompt_chars);
    assert_eq!(parsed.skills.watch, defaults.watch);
    let bad = egirl::config::parse(
        "[skills]\nprompt_chars = 10\nnope = 1\n",
        std::path::Path::new("x.toml"),
    );
    assert!(bad.is_err(), "unknown keys are still refused");
}
