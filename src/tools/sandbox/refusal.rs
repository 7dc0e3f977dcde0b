//! Does a failed command's output look like the sandbox said no? The one
//! place that guesses; a yes lets an attended user re-run the command
//! outside the sandbox (see `builtin::exec`), so a wrong yes costs one question and
//! a wrong no costs the user a manual re-run.

/// What denied writes and blocked sockets print, in the words of libc's
/// strerror and of the common tools (curl, git, pip, npm, cargo).
const MARKERS: &[&str] = &[
    "read-only file system",
    "permission denied",
    "operation not permitted",
    "eacces",
    "eperm",
    "erofs",
    "network is unreachable",
    "could not resolve host",
    "couldn't resolve host",
    "could not resolve",
    "temporary failure in name resolution",
    "name or service not known",
    "failed to connect",
    "couldn't connect to server",
    "network unreachable",
];

/// The lines that look like a sandbox refusal (at most a few), or None.
pub fn sandbox_refusal(output: &str) -> Option<String> {
    const MAX_LINES: usize = 4;
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            MARKERS.iter().any(|m| lower.contains(m))
        })
        .take(MAX_LINES)
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denied_writes_and_sockets_are_recognised() {
        let out =
            "exit code 1 (0.0s)\n[stderr]\ntouch: cannot touch '/etc/x': Read-only file system";
        assert_eq!(
            sandbox_refusal(out).as_deref(),
            Some("touch: cannot touch '/etc/x': Read-only file system")
        );
        let out = "exit code 1\n[stderr]\nbash: /usr/x: Permission denied";
        assert!(sandbox_refusal(out).is_some());
        let out = "exit code 6\n[stderr]\ncurl: (6) Could not resolve host: example.com";
        assert!(sandbox_refusal(out).is_some());
        let out = "exit code 1\n[stderr]\nsocket: Operation not permitted";
        assert!(sandbox_refusal(out).is_some());
    }

    #[test]
    fn ordinary_failures_are_not() {
        assert_eq!(
            sandbox_refusal("exit code 1 (0.0s)\n[stdout]\nFAILED: 3 tests"),
            None
        );
        assert_eq!(
            sandbox_refusal(
                "exit code 2\n[stderr]\nls: cannot access 'x': No such file or directory"
            ),
            None
        );
    }
}
