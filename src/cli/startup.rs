//! The start-up files one start reads (the config and the `.env` files),
//! each read once and checked against the trust store before any of it
//! takes effect: a file the model could have written loads only when the
//! user trusted that exact content (see `config::reach`, docs/security.md).

use std::path::{Path, PathBuf};

use super::{Cli, Exit};
use crate::config::reach::{self, Untrusted, WritableRoots};
use crate::config::trust::TrustStore;
use crate::config::{self, LoadedConfig};

/// One start-up file as read: where it was found or named, its content.
pub struct StartUpFile {
    pub shown: PathBuf,
    /// A config found by the working-directory search.
    pub searched: bool,
    pub content: Vec<u8>,
}

/// Asks the user about an untrusted file and, on yes, records it in the
/// store: whether it is trusted now.
pub type Ask = dyn Fn(&StartUpFile, &Untrusted, &mut TrustStore) -> Result<bool, Exit>;

/// What a start would read, before anything of it is applied.
pub struct StartUpPlan {
    pub loaded: LoadedConfig,
    pub config_file: Option<StartUpFile>,
    /// The `.env` files that exist, in the order they are read.
    pub env_files: Vec<StartUpFile>,
    /// The workspace as configured (`~` expanded; it may not exist yet).
    pub workspace: PathBuf,
    pub roots: WritableRoots,
}

impl StartUpPlan {
    /// Finds and reads the config and the `.env` files; parses the
    /// config (for its workspace and allowed paths) but applies nothing.
    pub fn read(cli: &Cli) -> Result<Self, Exit> {
        let found = config::find_config(cli.config.as_deref()).map_err(Exit::usage)?;
        let (loaded, config_file) = match found {
            Some(found) => {
                let text = config::read_config(&found.path).map_err(Exit::usage)?;
                let loaded = config::load_text(&text, &found.path).map_err(Exit::usage)?;
                let file = StartUpFile {
                    shown: found.path,
                    searched: found.searched,
                    content: text.into_bytes(),
                };
                (loaded, Some(file))
            }
            None => (
                LoadedConfig {
                    config: config::Config::default(),
                    path: None,
                },
                None,
            ),
        };
        let workspace = match &cli.workspace {
            Some(ws) => config::expand_home(&ws.display().to_string()),
            None => config::expand_home(&loaded.config.workspace.path),
        };
        let allowed: Vec<PathBuf> = loaded
            .config
            .tools
            .allowed_paths
            .iter()
            .map(|p| config::expand_home(p))
            .collect();
        // Every agent's workspace is the model's to write (its own agent's).
        let mut reachable = allowed;
        reachable.extend(other_agent_workspaces(&loaded.config, &workspace));
        let roots = WritableRoots::new(&workspace, &reachable, &reach::recorded_roots());
        let env_files = read_env_files(loaded.path.as_deref());
        Ok(Self {
            loaded,
            config_file,
            env_files,
            workspace,
            roots,
        })
    }

    /// Every file of this start the trust store does not vouch for.
    pub fn untrusted(&self, store: &TrustStore) -> Vec<(&StartUpFile, Box<Untrusted>)> {
        self.config_file
            .iter()
            .chain(&self.env_files)
            .filter_map(|file| {
                reach::check(
                    &file.shown,
                    file.searched,
                    &file.content,
                    &self.roots,
                    store,
                )
                .err()
                .map(|why| (file, why))
            })
            .collect()
    }

    /// Refuses the start (one line, exit 2) unless every file is trusted
    /// or out of the model's reach; with `ask` (the TUI, on a terminal)
    /// the user is asked about each instead: `ask` shows the file, and
    /// records it in the store when the answer is yes.
    pub fn enforce(&self, ask: Option<&Ask>) -> Result<(), Exit> {
        let mut store = TrustStore::open().map_err(Exit::usage)?;
        for (file, why) in self.untrusted(&store) {
            // A file trusted a moment ago in this loop (the same .env
            // twice) passes now.
            let roots = &self.roots;
            if reach::check(&file.shown, file.searched, &file.content, roots, &store).is_ok() {
                continue;
            }
            let trusted = match ask {
                Some(ask) if why.store_reachable.is_none() => ask(file, &why, &mut store)?,
                _ => false,
            };
            if !trusted {
                return Err(Exit::usage(why));
            }
        }
        Ok(())
    }

    /// Loads the `.env` files (after [`StartUpPlan::enforce`]); variables
    /// already set win. Returns the files read.
    pub fn load_env_files(&self) -> Vec<PathBuf> {
        let mut read = Vec::new();
        for file in &self.env_files {
            match dotenvy::from_read(file.content.as_slice()) {
                Ok(()) => read.push(file.shown.clone()),
                Err(e) => crate::print::err(format_args!(
                    "egirl: ignoring {}: {e}",
                    file.shown.display()
                )),
            }
        }
        read
    }
}

/// The workspaces of the agents other than `default` (whose is
/// `workspace`, as `--workspace` may have moved it), as configured.
pub fn other_agent_workspaces(config: &config::Config, workspace: &Path) -> Vec<PathBuf> {
    let mut config = config.clone();
    config.workspace.path = workspace.display().to_string();
    config
        .agent_names()
        .iter()
        .filter(|name| name.as_str() != config::DEFAULT_AGENT)
        .map(|name| config.agent_workspace(name))
        .collect()
}

/// The `.env` files that exist among [`dotenv_candidates`], read, each
/// file once.
fn read_env_files(config_path: Option<&Path>) -> Vec<StartUpFile> {
    let mut seen = Vec::new();
    let mut files = Vec::new();
    for path in dotenv_candidates(config_path) {
        if !path.is_file() {
            continue;
        }
        let canonical = reach::canonical_lossy(&path);
        if seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical);
        match std::fs::read(&path) {
            Ok(content) => files.push(StartUpFile {
                shown: path,
                searched: false,
                content,
            }),
            Err(e) => crate::print::err(format_args!("egirl: ignoring {}: {e}", path.display())),
        }
    }
    files
}

/// `.env` next to the config file, then in the working directory, then
/// `~/.egirl/.env`, existing or not.
pub fn dotenv_candidates(config_path: Option<&Path>) -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(dir) = config_path.and_then(Path::parent) {
        candidates.push(dir.join(".env"));
    }
    candidates.push(PathBuf::from(".env"));
    candidates.push(config::expand_home("~/.egirl/.env"));
    candidates
}

/// Adds this start's workspace and allowed paths to the roots later
/// starts treat as the model's (a file planted there by this run is
/// refused by a start with another config).
pub fn record_writable_roots(workspace: &Path, allowed: &[PathBuf]) {
    let roots: Vec<PathBuf> = std::iter::once(workspace.to_path_buf())
        .chain(allowed.iter().cloned())
        .collect();
    if let Err(e) = reach::record_roots(&roots) {
        crate::print::err(format_args!(
            "egirl: cannot record the workspace in {}: {e}",
            crate::config::trust::state_dir().display()
        ));
    }
}
