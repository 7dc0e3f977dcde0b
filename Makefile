# egirl: `make run` starts it, `make test` checks everything.
# Caches (cargo target dir, llama-server build, model) live under ~/.cache/egirl.

EGIRL_CACHE ?= $(HOME)/.cache/egirl
export EGIRL_CACHE
export CARGO_TARGET_DIR ?= $(EGIRL_CACHE)/target
# Every CI run builds a fresh clone at a new path, whose incremental state no
# later run can reuse: writing it only costs time and disk (16 GB had piled up
# under the shared target dir). Set CARGO_INCREMENTAL=1 to keep it.
export CARGO_INCREMENTAL ?= 0
CARGO ?= cargo

.PHONY: run test install build fmt lint unit e2e bench clean-cache

## Build (release), install what the run needs, start egirl on
## scripts/make-run.toml (the small model, started by egirl itself).
run: install build
	$(CARGO_TARGET_DIR)/release/egirl --config scripts/make-run.toml

## Everything CI runs: format, lints, unit + integration tests, the
## end-to-end suite against a real llama-server.
test: fmt lint unit e2e

install:
	@bash scripts/install-llama.sh
	@bash scripts/install-claude-code.sh
	@bash scripts/install-mcp-servers.sh >/dev/null
	@bash scripts/install-acp.sh >/dev/null
	@bash scripts/install-acp-agents.sh >/dev/null

build:
	$(CARGO) build --release --locked

fmt:
	$(CARGO) fmt --check

lint:
	$(CARGO) clippy --locked --all-targets -- -D warnings

unit:
	@bash scripts/install-claude-code.sh
	@bash scripts/install-mcp-servers.sh >/dev/null
	@bash scripts/install-acp.sh >/dev/null
	@bash scripts/install-acp-agents.sh >/dev/null
	@bash scripts/install-chromium.sh >/dev/null
	$(CARGO) test --locked --lib --bins --test all

e2e: install
	$(CARGO) test --locked --test e2e_llama -- --test-threads=1

bench:
	$(CARGO) bench --locked

clean-cache:
	rm -rf $(EGIRL_CACHE)
