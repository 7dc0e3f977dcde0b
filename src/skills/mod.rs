//! Skills (docs/design.md §6, docs/skills.md): OpenClaw-style SKILL.md folders, found in
//! `<workspace>/skills` and `[skills] dirs`, gated at load, listed compactly
//! in the system prompt; the model reads a SKILL.md with `read_file` when
//! it needs one. The registry holds an immutable snapshot that readers
//! share (one `Arc` clone per turn); a reload builds a new one and swaps it
//! in, so a turn in flight keeps the skills it started with.

pub mod author;
pub mod discover;
pub mod frontmatter;
pub mod gating;
pub mod prompt;
pub mod skill;
pub mod watch;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

pub use skill::{BrokenSkill, Skill};

use crate::config::SkillsConfig;
use crate::routing::{SkillComplexity, SkillHint, SkillIndex};
use gating::Host;

/// The skills as loaded at one moment.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Available and unavailable ones, in name order; a name appears once
    /// (the highest-precedence directory wins).
    pub skills: Vec<Skill>,
    /// Files that could not be loaded, with file and line.
    pub broken: Vec<BrokenSkill>,
    /// The `<available_skills>` block for the system prompt (`""`: none).
    pub prompt: String,
    /// What the router knows: names, triggers, `egirl.complexity`.
    pub router: SkillIndex,
    /// Skills with `triggers`, for pre-selecting one for a message.
    triggers: SkillIndex,
    /// Existing skills directories, canonical: `read_file` may read there.
    pub roots: Vec<PathBuf>,
}

impl Snapshot {
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    pub fn available(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter(|s| s.available())
    }

    /// The skill whose file this is (canonical path).
    pub fn by_file(&self, path: &Path) -> Option<&Skill> {
        self.skills.iter().find(|s| s.path == path)
    }

    /// An available skill whose `triggers` (or name) the message contains:
    /// its location goes along with the message, so the model reads it.
    pub fn preselect(&self, message: &str) -> Option<&Skill> {
        let found = self.triggers.find_in_message(message)?;
        self.get(&found.name)
    }

    /// Available skills the user may run as `/name args`.
    pub fn commands(&self) -> impl Iterator<Item = &Skill> {
        self.available().filter(|s| s.user_invocable)
    }
}

pub struct Registry {
    workspace: PathBuf,
    dirs: Vec<PathBuf>,
    prompt_chars: usize,
    current: RwLock<Arc<Snapshot>>,
}

impl Registry {
    /// Loads the skills of `[skills]` and `<workspace>/skills`. Never fails:
    /// a bad file is listed as broken, a missing directory holds nothing.
    pub fn load(config: &SkillsConfig, workspace: &Path) -> Registry {
        let workspace =
            std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let registry = Registry {
            dirs: discover::dirs(&config.dirs, &workspace),
            workspace,
            prompt_chars: config.prompt_chars,
            current: RwLock::new(Arc::default()),
        };
        registry.reload();
        registry
    }

    /// The current skills; cheap (an `Arc` clone).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        match self.current.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Scans the directories again and swaps the new snapshot in.
    pub fn reload(&self) -> Arc<Snapshot> {
        self.reload_with(&Host::current())
    }

    pub fn reload_with(&self, host: &Host) -> Arc<Snapshot> {
        let fresh = Arc::new(self.scan(host));
        match self.current.write() {
            Ok(mut guard) => *guard = fresh.clone(),
            Err(poisoned) => *poisoned.into_inner() = fresh.clone(),
        }
        fresh
    }

    /// The skills directories in precedence order (they need not exist).
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// `<workspace>/skills`, where `create_skill` writes.
    pub fn workspace_dir(&self) -> PathBuf {
        self.workspace.join("skills")
    }

    fn scan(&self, host: &Host) -> Snapshot {
        let show = |p: &Path| discover::display(p, &self.workspace);
        let mut snapshot = Snapshot::default();
        let mut seen = HashSet::new();
        for dir in &self.dirs {
            if let Ok(root) = std::fs::canonicalize(dir) {
                snapshot.roots.push(root);
            }
            for found in discover::scan(dir, &show) {
                match found.and_then(|candidate| skill::load(&candidate, host)) {
                    // A name already loaded came from a directory that takes precedence.
                    Ok(skill) if !seen.insert(skill.name.clone()) => {
                        tracing::debug!("skill {} at {} is shadowed", skill.name, skill.location);
                    }
                    Ok(skill) => snapshot.skills.push(skill),
                    Err(broken) => snapshot.broken.push(broken),
                }
            }
        }
        snapshot.skills.sort_by(|a, b| a.name.cmp(&b.name));
        let offered: Vec<&Skill> = snapshot.available().filter(|s| s.model_invocable).collect();
        snapshot.prompt = prompt::block(&offered, self.prompt_chars);
        let hint = |s: &Skill, complexity| SkillHint {
            name: s.name.clone(),
            description: s.description.clone(),
            triggers: s.triggers.clone(),
            complexity,
        };
        let routed: Vec<SkillHint> = snapshot
            .available()
            .map(|s| hint(s, s.complexity))
            .collect();
        snapshot.router = SkillIndex::new(&routed);
        // The index skips `auto` skills; for pre-selection every skill with
        // triggers counts, so each is indexed as if it had a side.
        let triggered: Vec<SkillHint> = snapshot
            .available()
            .filter(|s| !s.triggers.is_empty())
            .map(|s| hint(s, SkillComplexity::Local))
            .collect();
        snapshot.triggers = SkillIndex::new(&triggered);
        for skill in snapshot.skills.iter().filter(|s| s.warning.is_some()) {
            tracing::warn!(
                "skill {}: frontmatter {}",
                skill.location,
                skill.warning.as_deref().unwrap_or_default()
            );
        }
        snapshot
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("dirs", &self.dirs)
            .finish_non_exhaustive()
    }
}
