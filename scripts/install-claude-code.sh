#!/usr/bin/env bash
# Installs Claude Code (the npm package @anthropic-ai/claude-code, pinned
# below) into ${EGIRL_CACHE:-$HOME/.cache/egirl}/claude-code, for the
# delegation tests (tests/delegate/). Its `claude` lands in
# claude-code/node_modules/.bin/claude.
#
# The pin: the newest version that runs on node 20. From 2.1.198 on the
# package declares node >= 22 ("engines"), and node 20 is what this project's
# machines and CI have; 2.1.197 declares node >= 18 and was run here on
# node 20 (`claude --version`, and the tests drive it end to end).
#
# Idempotent: skipped when the installed version is the pin.
#
# Usage: scripts/install-claude-code.sh [--print-path]
set -euo pipefail

CLAUDE_CODE_VERSION="2.1.197"

CACHE="${EGIRL_CACHE:-$HOME/.cache/egirl}"
DIR="$CACHE/claude-code"
BIN="$DIR/node_modules/.bin/claude"

if [[ "${1:-}" == "--print-path" ]]; then
    echo "$BIN"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install-claude-code: npm is not on PATH (node 20 or later is needed)" >&2
    exit 1
fi

installed=""
if [[ -f "$DIR/node_modules/@anthropic-ai/claude-code/package.json" ]]; then
    installed="$(node -p "require('$DIR/node_modules/@anthropic-ai/claude-code/package.json').version" 2>/dev/null || true)"
fi
if [[ "$installed" == "$CLAUDE_CODE_VERSION" && -x "$BIN" ]]; then
    echo "claude-code $CLAUDE_CODE_VERSION already in $DIR"
    exit 0
fi

mkdir -p "$DIR"
# A package.json of its own, so npm installs here and not in a parent project.
if [[ ! -f "$DIR/package.json" ]]; then
    echo '{"name": "egirl-claude-code", "private": true}' > "$DIR/package.json"
fi
npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"
"$BIN" --version
echo "claude-code $CLAUDE_CODE_VERSION installed in $DIR"
