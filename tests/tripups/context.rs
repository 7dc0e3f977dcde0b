//! The context window and the transcript: trimming notices, compaction that
//! cannot shrink, the context meter, resume/fork/rewind detail, an exec's
//! duration (defects 1, 2, 7, 9, 11, 17).
