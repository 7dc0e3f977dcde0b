//! Desktop notifications while the terminal is not focused (see tests/daily/mod.rs).
