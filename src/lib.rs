//! egirl: a local-first personal AI agent.
//!
//! Surfaces (`surfaces/`) talk to the agent core (`agent/`) only through
//! `protocol`. Imports point one way, down the table below: a module uses
//! only modules of a lower rank, never one of its own rank or above, and
//! the surfaces never import `tools` or `providers`. `tests/layering/`
//! reads this table and every `crate::` and `super::` path under `src/`,
//! and fails on an import that points up, on a cycle among the children of
//! one module, and on a module missing from the table: a new module gets a
//! row here first.
//!
//! | rank | module | what it is |
//! |-----:|--------|------------|
//! | 1 | `protocol` | the seam: the ops surfaces send and the events they read |
//! | 1 | `fsutil` | atomic writes, opening only regular files, file locks |
//! | 1 | `print` | printing outside the TUI, escape sequences removed |
//! | 1 | `stop_signals` | the signals that stop `-m` and `serve` |
//! | 1 | `trim` | memory handed back after start-up and bursts: free heap, the binary's touched pages |
//! | 1 | `jsonrpc` | JSON-RPC 2.0 a line at a time over a pipe: requests and their answers by id (ACP both ways) |
//! | 2 | `bus` | fans every event out to each surface's own queue |
//! | 2 | `chat` | messages, tool calls, tool specs and token usage |
//! | 3 | `link` | a surface's connection to the core: in this process or over its socket |
//! | 3 | `images` | the image store: pictures in messages, by content hash |
//! | 3 | `config` | `egirl.toml`, the MCP servers' entries included |
//! | 4 | `workspace` | the personality and memory files |
//! | 5 | `cron` | cron jobs as data: the store, a job, its schedule |
//! | 6 | `mcp` | the MCP client: servers' lifecycle and tools |
//! | 7 | `providers` | the local server and the remote APIs |
//! | 8 | `redact` | secret values out of everything shown, stored or sent: the redactor, and where the core applies it |
//! | 9 | `logging` | the redacted log file |
//! | 10 | `usage` | what each request used and cost: the usage log, prices |
//! | 11 | `sessions` | session transcripts on disk |
//! | 12 | `memory` | memory files and their search index |
//! | 13 | `routing` | which model answers a turn |
//! | 14 | `skills` | SKILL.md folders |
//! | 15 | `tools` | the tools the model may call, and their approvals |
//! | 16 | `agent` | the core: sessions' turns, events out |
//! | 17 | `surfaces` | the windows onto the core: TUI, headless, bots, webhook, heartbeat, cron, editors (ACP) |
//! | 18 | `cli` | the command line and start-up; outcomes to exit codes |

pub mod agent;
pub mod bus;
pub mod chat;
pub mod cli;
pub mod config;
pub mod cron;
pub mod fsutil;
pub mod images;
pub mod jsonrpc;
pub mod link;
pub mod logging;
pub mod mcp;
pub mod memory;
pub mod print;
pub mod protocol;
pub mod providers;
pub mod redact;
pub mod routing;
pub mod sessions;
pub mod skills;
pub mod stop_signals;
pub mod surfaces;
pub mod tools;
pub mod trim;
pub mod usage;
pub mod workspace;
