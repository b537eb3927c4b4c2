//! The knowledge crate's pure parts: documents split into passages, web pages read as text, and
//! ranked lists fused.

mod chunk;
mod fuse;
mod html;
