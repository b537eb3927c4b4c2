//! The knowledge crate's pure parts: documents split into passages, and ranked lists fused.

mod chunk;
mod fuse;
