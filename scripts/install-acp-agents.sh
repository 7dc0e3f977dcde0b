#!/usr/bin/env bash
# Installs the ACP agent the `delegate` tests run against, from the npm
# registry, pinned:
#   @zed-industries/claude-agent-acp  (Claude Code's ACP adapter; its Claude
#                                      Code and its own ACP SDK come with it;
#                                      runs on node 20)
# The tests' own agent script tests/acp/fs_agent.mjs uses the ACP SDK that
# scripts/install-acp.sh installs (one version of the SDK for both sides).
#
# It lands in ${EGIRL_CACHE:-$HOME/.cache/egirl}/acp-agents/node_modules.
# Idempotent: a stamp names the pin, so a second run with the same pin does
# nothing and bumping the pin reinstalls.
#
# Usage: scripts/install-acp-agents.sh [--print-paths]
set -euo pipefail

CLAUDE_ACP_VERSION="0.23.1"

CACHE="${EGIRL_CACHE:-$HOME/.cache/egirl}"
DIR="$CACHE/acp-agents"
STAMP="$DIR/.installed"
WANT="claude-agent-acp=$CLAUDE_ACP_VERSION"
CLAUDE_ACP="$DIR/node_modules/@zed-industries/claude-agent-acp/dist/index.js"

print_paths() {
  echo "ACP_CLAUDE_AGENT=$CLAUDE_ACP"
  echo "ACP_NODE_MODULES=$DIR/node_modules"
}

if [[ "${1:-}" == "--print-paths" ]]; then
  print_paths
  exit 0
fi

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -f "$CLAUDE_ACP" ]]; then
  print_paths
  exit 0
fi

command -v npm >/dev/null || { echo "install-acp-agents: npm is not installed (node 20+ with npm is needed)" >&2; exit 1; }
mkdir -p "$DIR"
cd "$DIR"
# The manifest names the adapter alone (an earlier install also named the
# SDK: written anew, npm prunes what is no longer asked for).
cat > package.json <<JSON
{"name":"egirl-acp-agents","private":true,"dependencies":{"@zed-industries/claude-agent-acp":"$CLAUDE_ACP_VERSION"}}
JSON
npm install --no-audit --no-fund --loglevel=error >&2
[[ -f "$CLAUDE_ACP" ]] || { echo "install-acp-agents: $CLAUDE_ACP is missing after npm install" >&2; exit 1; }
echo "$WANT" > "$STAMP"
print_paths
