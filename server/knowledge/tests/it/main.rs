//! The knowledge crate's pure parts: ranked lists fused.

mod fuse;
