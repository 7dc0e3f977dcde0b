//! Agents kept apart: workspaces, memory, tools, sessions (agents-core).
