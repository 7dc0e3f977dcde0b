//! `egirl --session ID --fork` and `egirl --session ID --rewind N`: the
//! TUI's `/fork` and `/rewind` from the shell, without starting the core.
//! (When a daemon owns the workspace they go through its core instead:
//! `remote`.)

use super::{EXIT_OK, Environment, Exit};
use crate::agent::rewind::{Bounds, fork_session, rewind_session};
use crate::print;
use crate::protocol::{EventKind, Rewound};
use crate::tools::checkpoints::Checkpoints;

/// Prints the new session's id.
pub fn fork(env: &Environment, session: &str) -> Result<u8, Exit> {
    let checkpoints = Checkpoints::new(&env.workspace, &env.config.checkpoints);
    let id = fork_session(&env.workspace, &checkpoints, session)
        .map_err(|e| Exit::failure(format!("{e:#}")))?;
    println!("{id}");
    Ok(EXIT_OK)
}

/// Prints what went back: the message, the files, what is not undone.
pub fn rewind(env: &Environment, session: &str, turn: usize) -> Result<u8, Exit> {
    let checkpoints = Checkpoints::new(&env.workspace, &env.config.checkpoints);
    let protected = env.protected_paths();
    let bounds = Bounds {
        workspace: &env.workspace,
        allowed_paths: &env.allowed_paths,
        protected: &protected,
    };
    let event = rewind_session(&bounds, &checkpoints, session, turn)
        .map_err(|e| Exit::failure(format!("{e:#}")))?;
    Ok(print_rewound(session, event))
}

/// What `rewound` says, one line each: the message gone back before, the
/// files, what is not undone.
pub(super) fn print_rewound(session: &str, event: EventKind) -> u8 {
    let EventKind::Rewound(Rewound {
        turn,
        text,
        dropped_messages,
        restored,
        removed,
        not_restored,
        untracked,
        not_kept,
    }) = event
    else {
        return EXIT_OK;
    };
    let mut out = vec![format!(
        "rewound {session} to before message {turn} ({dropped_messages} messages out; the transcript keeps them)"
    )];
    out.extend(restored.iter().map(|f| format!("restored {f}")));
    out.extend(removed.iter().map(|f| format!("removed {f}")));
    out.extend(not_restored.iter().map(|f| format!("not restored {f}")));
    // Files are said to be restored only when checkpoints kept them.
    let kept_nothing = not_kept.is_some();
    out.extend(not_kept);
    out.push(untracked.unwrap_or_else(|| {
        match kept_nothing {
        true => "commands' changes are not undone either".to_string(),
        false => {
            "files changed by write_file/edit_file are restored; commands' changes are not undone"
                .to_string()
        }
    }
    }));
    out.push(format!("message {turn} was: {text}"));
    let mut stdout = std::io::stdout().lock();
    let _ = print::write_clean(&mut stdout, &format!("{}\n", out.join("\n")));
    EXIT_OK
}
