#!/usr/bin/env bash
# Installs the MCP servers the MCP tests and the prompt_size bench run
# against, from the npm registry, pinned:
#   @modelcontextprotocol/server-everything   (every MCP feature; stdio and streamable HTTP)
#   @modelcontextprotocol/server-filesystem   (a real server with read-only and writing tools)
#
# They land in ${EGIRL_CACHE:-$HOME/.cache/egirl}/mcp/node_modules. Idempotent:
# a stamp names the pins, so a second run with the same pins does nothing and
# bumping a pin reinstalls.
#
# Usage: scripts/install-mcp-servers.sh [--print-paths]
set -euo pipefail

EVERYTHING_VERSION="2026.8.31"
FILESYSTEM_VERSION="2026.8.31"

CACHE="${EGIRL_CACHE:-$HOME/.cache/egirl}"
DIR="$CACHE/mcp"
STAMP="$DIR/.installed"
WANT="everything=$EVERYTHING_VERSION filesystem=$FILESYSTEM_VERSION"
EVERYTHING="$DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
FILESYSTEM="$DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

print_paths() {
  echo "MCP_EVERYTHING=$EVERYTHING"
  echo "MCP_FILESYSTEM=$FILESYSTEM"
}

if [[ "${1:-}" == "--print-paths" ]]; then
  print_paths
  exit 0
fi

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -f "$EVERYTHING" && -f "$FILESYSTEM" ]]; then
  print_paths
  exit 0
fi

command -v npm >/dev/null || { echo "install-mcp-servers: npm is not installed (node 20+ with npm is needed)" >&2; exit 1; }
mkdir -p "$DIR"
cd "$DIR"
[[ -f package.json ]] || echo '{"name":"egirl-mcp-servers","private":true}' > package.json
npm install --no-audit --no-fund --loglevel=error --save-exact \
  "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
  "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" >&2
for f in "$EVERYTHING" "$FILESYSTEM"; do
  [[ -f "$f" ]] || { echo "install-mcp-servers: $f is missing after npm install" >&2; exit 1; }
done
echo "$WANT" > "$STAMP"
print_paths
