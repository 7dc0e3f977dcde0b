#!/usr/bin/env bash
# Installs the ACP agents the `delegate` tests run against, from the npm
# registry, pinned:
#   @zed-industries/claude-agent-acp  (Claude Code's ACP adapter; its Claude
#                                      Code is bundled; runs on node 20)
#   @agentclientprotocol/sdk          (the ACP SDK the adapter uses; the
#                                      tests' own agent script tests/acp/fs_agent.mjs
#                                      is written against it)
#
# They land in ${EGIRL_CACHE:-$HOME/.cache/egirl}/acp-agents/node_modules.
# Idempotent: a stamp names the pins, so a second run with the same pins
# does nothing and bumping a pin reinstalls.
#
# Usage: scripts/install-acp-agents.sh [--print-paths]
set -euo pipefail

CLAUDE_ACP_VERSION="0.23.1"
# The version the adapter itself depends on.
SDK_VERSION="0.17.0"

CACHE="${EGIRL_CACHE:-$HOME/.cache/egirl}"
DIR="$CACHE/acp-agents"
STAMP="$DIR/.installed"
WANT="claude-agent-acp=$CLAUDE_ACP_VERSION sdk=$SDK_VERSION"
CLAUDE_ACP="$DIR/node_modules/@zed-industries/claude-agent-acp/dist/index.js"
SDK="$DIR/node_modules/@agentclientprotocol/sdk/package.json"

print_paths() {
  echo "ACP_CLAUDE_AGENT=$CLAUDE_ACP"
  echo "ACP_NODE_MODULES=$DIR/node_modules"
}

if [[ "${1:-}" == "--print-paths" ]]; then
  print_paths
  exit 0
fi

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -f "$CLAUDE_ACP" && -f "$SDK" ]]; then
  print_paths
  exit 0
fi

command -v npm >/dev/null || { echo "install-acp-agents: npm is not installed (node 20+ with npm is needed)" >&2; exit 1; }
mkdir -p "$DIR"
cd "$DIR"
[[ -f package.json ]] || echo '{"name":"egirl-acp-agents","private":true}' > package.json
npm install --no-audit --no-fund --loglevel=error --save-exact \
  "@zed-industries/claude-agent-acp@$CLAUDE_ACP_VERSION" \
  "@agentclientprotocol/sdk@$SDK_VERSION" >&2
for f in "$CLAUDE_ACP" "$SDK"; do
  [[ -f "$f" ]] || { echo "install-acp-agents: $f is missing after npm install" >&2; exit 1; }
done
echo "$WANT" > "$STAMP"
print_paths
