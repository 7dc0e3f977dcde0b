//! An image in a conversation, as every layer names it: by the hash of its
//! bytes, never inline. The bytes live in one file under the workspace's
//! `.egirl/images/` (see `crate::images`), so transcripts, events and the
//! wire stay small and a resumed, forked or rewound session still finds
//! them.

use serde::{Deserialize, Serialize};

/// One image part of a message (a user's paste or upload, a `read_file`
/// of a picture, a browser screenshot).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImagePart {
    /// Lower-case hex SHA-256 of the stored bytes (after any downscale):
    /// the file is `.egirl/images/<sha256>.<extension of media_type>`.
    pub sha256: String,
    /// `image/png`, `image/jpeg`, `image/webp` or `image/gif`.
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    /// Size of the stored file, in bytes.
    pub bytes: u64,
    /// Where it came from (a path, a URL, `screenshot`), for the chip a
    /// surface expands; never sent to a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}
