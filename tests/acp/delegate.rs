//! The `delegate` tool driving a real ACP agent.
