//! The Landlock ruleset: read and execute everywhere, write only under the
//! writable roots and a few character devices; device nodes nowhere (one
//! for the disk would read and write any file).
//!
//! Built in the parent with the `landlock` crate (best effort: rights the
//! kernel does not know are left out); the child only passes the ruleset's
//! fd to `landlock_restrict_self`. The handled rights are those of ABI 5
//! (through device ioctls): later ABIs add no filesystem write rights, and
//! ABI 9's Unix-socket rule would cut commands off from local daemons,
//! which is the network filter's business, not this one's.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
};

/// Devices a command may write even in read-only mode: `> /dev/null` and
/// friends are not writes anyone wants to stop.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

const HANDLED: ABI = ABI::V5;

/// Everything inside a writable root but making block or character devices.
fn writes() -> landlock::BitFlags<AccessFs> {
    AccessFs::from_all(HANDLED) & !(AccessFs::MakeBlock | AccessFs::MakeChar)
}

/// The ruleset's fd, or None when the kernel has no Landlock.
pub fn ruleset(writable: &[PathBuf]) -> Result<Option<OwnedFd>, String> {
    let fail = |e: &dyn std::fmt::Display| format!("cannot build the Landlock ruleset: {e}");
    let mut created = Ruleset::default()
        .handle_access(AccessFs::from_all(HANDLED))
        .map_err(|e| fail(&e))?
        .create()
        .map_err(|e| fail(&e))?;
    let root = PathFd::new("/").map_err(|e| fail(&e))?;
    created = created
        .add_rule(PathBeneath::new(root, AccessFs::from_read(HANDLED)))
        .map_err(|e| fail(&e))?;
    for dir in writable {
        // A root that does not exist (yet) has nothing to write into.
        let Ok(fd) = PathFd::new(dir) else { continue };
        created = created
            .add_rule(PathBeneath::new(fd, writes()))
            .map_err(|e| fail(&e))?;
    }
    for device in DEVICES.iter().map(Path::new) {
        let Ok(fd) = PathFd::new(device) else {
            continue;
        };
        created = created
            .add_rule(PathBeneath::new(fd, AccessFs::from_file(HANDLED)))
            .map_err(|e| fail(&e))?;
    }
    Ok(created.into())
}
