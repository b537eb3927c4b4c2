//! The pure part of the portal's knowledge: collections of an organisation's documents that an
//! agent searches. A document's text is split into passages by its structure ([`chunk`]), a web
//! page is first read as markdown-like text ([`html`]), and the ranked lists of several searches
//! are fused into one ([`fuse`]). Nothing here reads files, the network or the clock; storage,
//! embedding and the tools are elsewhere.

pub mod chunk;
pub mod fuse;
pub mod html;
