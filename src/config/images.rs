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

impl ImagesConfig {
    /// A zero size would scale every picture to nothing or refuse them all.
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.max_side < 16 {
            return Err(("images.max_side".into(), "must be at least 16".into()));
        }
        if self.max_file_mb == 0 {
            return Err(("images.max_file_mb".into(), "must be more than 0".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_of_nothing_is_refused() {
        assert!(ImagesConfig::default().check().is_ok());
        let tiny = ImagesConfig {
            max_side: 0,
            ..Default::default()
        };
        assert_eq!(tiny.check().unwrap_err().0, "images.max_side");
        let none = ImagesConfig {
            max_file_mb: 0,
            ..Default::default()
        };
        assert_eq!(none.check().unwrap_err().0, "images.max_file_mb");
    }
}
