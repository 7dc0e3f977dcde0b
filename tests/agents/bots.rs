//! Agents through the real binary with the fake bots (agents-surfaces).
