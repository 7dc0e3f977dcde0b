//! The command line's help and docs/cli.md agree (written below).
