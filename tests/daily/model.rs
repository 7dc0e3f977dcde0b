//! `/model`, `--model`: a session pinned to a model (see tests/daily/mod.rs).
