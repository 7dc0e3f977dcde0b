//! Images as message content, end to end, through the real binary.
