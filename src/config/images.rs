//! `[images]`: how large a picture may be and how large it is sent.

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ImagesConfig {
    /// Pictures are scaled down to this many pixels on their longest side
    /// before they are stored and sent.
    pub max_side: u32,
    /// Larger files, downloads and pastes are refused (MB).
    pub max_file_mb: u64,
    /// Tokens one image is counted as in a local model's window (its
    /// projector's cost; the server cannot count it beforehand).
    pub local_tokens: u64,
}

impl Default for ImagesConfig {
    fn default() -> Self {
        Self {
            max_side: 1568,
            max_file_mb: 20,
            local_tokens: 768,
        }
    }
}
