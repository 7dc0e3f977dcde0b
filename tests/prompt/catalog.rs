//! The tool catalog: rarely used tools by name, their schema on demand.
