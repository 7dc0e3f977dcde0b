#!/usr/bin/env bash
# Installs the ACP client the `egirl acp` tests drive the agent with, from
# the npm registry, pinned:
#   @agentclientprotocol/sdk   (the protocol's TypeScript SDK; its client side)
#
# It lands in ${EGIRL_CACHE:-$HOME/.cache/egirl}/acp/node_modules. Idempotent:
# a stamp names the pin, so a second run with the same pin does nothing and
# bumping the pin reinstalls.
#
# Usage: scripts/install-acp.sh [--print-paths]
set -euo pipefail

SDK_VERSION="2.4.0"

CACHE="${EGIRL_CACHE:-$HOME/.cache/egirl}"
DIR="$CACHE/acp"
STAMP="$DIR/.installed"
WANT="sdk=$SDK_VERSION"
SDK="$DIR/node_modules/@agentclientprotocol/sdk/package.json"

print_paths() {
  echo "ACP_NODE_MODULES=$DIR/node_modules"
}

if [[ "${1:-}" == "--print-paths" ]]; then
  print_paths
  exit 0
fi

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -f "$SDK" ]]; then
  print_paths
  exit 0
fi

command -v npm >/dev/null || { echo "install-acp: npm is not installed (node 20+ with npm is needed)" >&2; exit 1; }
mkdir -p "$DIR"
cd "$DIR"
[[ -f package.json ]] || echo '{"name":"egirl-acp-client","private":true}' > package.json
npm install --no-audit --no-fund --loglevel=error --save-exact \
  "@agentclientprotocol/sdk@$SDK_VERSION" >&2
[[ -f "$SDK" ]] || { echo "install-acp: $SDK is missing after npm install" >&2; exit 1; }
echo "$WANT" > "$STAMP"
print_paths
