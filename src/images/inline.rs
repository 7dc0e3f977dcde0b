//! An image's bytes as a request carries them: base64, read from the
//! store only while the request is built and dropped with it, so no
//! transcript, event or log line ever holds them.

use std::fmt;

/// One image ready for the wire.
#[derive(Clone, PartialEq, Eq)]
pub struct Inline {
    pub media_type: String,
    /// Standard base64 of the stored bytes.
    pub data: String,
}

impl Inline {
    pub fn new(media_type: &str, bytes: &[u8]) -> Self {
        Self {
            media_type: media_type.to_string(),
            data: base64(bytes),
        }
    }

    /// `data:<media type>;base64,...` (OpenAI-style `image_url`).
    pub fn data_uri(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

// Never the data itself: a request's `Debug` may reach a log.
impl fmt::Debug for Inline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Inline({}, {} base64 chars)",
            self.media_type,
            self.data.len()
        )
    }
}

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

/// Standard alphabet, padding optional on decode (editors and browsers
/// differ).
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Standard base64, padding optional, whitespace ignored; `None` for
/// anything else.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let digits: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    LENIENT.decode(digits).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64("héllo".as_bytes()), "aMOpbGxv");
    }

    #[test]
    fn base64_decodes_the_standard_alphabet_padded_or_not() {
        assert_eq!(decode_base64("").unwrap(), b"");
        assert_eq!(decode_base64("Zg==").unwrap(), b"f");
        assert_eq!(decode_base64("Zm8=").unwrap(), b"fo");
        assert_eq!(decode_base64("Zm9v\nYmFy").unwrap(), b"foobar");
        assert_eq!(decode_base64("Zm9vYg").unwrap(), b"foob");
        assert_eq!(decode_base64("aMOpbGxv").unwrap(), "héllo".as_bytes());
        assert!(decode_base64("Zm9v!").is_none());
        assert!(decode_base64("Z!==").is_none());
        assert!(decode_base64("Z").is_none());
    }

    #[test]
    fn debug_never_shows_the_data() {
        let inline = Inline::new("image/png", b"secret-ish bytes");
        assert!(!format!("{inline:?}").contains(&inline.data));
        assert!(inline.data_uri().starts_with("data:image/png;base64,"));
    }
}
