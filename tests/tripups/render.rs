//! What the conversation draws: wide tables, wrapping, synchronized output,
//! why a tool failed, streaming markdown (defects 8, 12, 13 and the gaps).
