//! `egirl doctor`, `egirl init`, and the README and configuration reference
//! checked against what the binary does (defects 15, 16; the README part).
