//! The knowledge crate: documents split into passages, web pages read as text, and what an
//! arriving document is read as.

mod chunk;
mod html;
mod ingest;
