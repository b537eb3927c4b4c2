//! The portal's knowledge (docs/knowledge.md): collections of an organisation's documents that
//! an agent searches. A document arriving is sniffed and read ([`ingest`]), a web page first as
//! markdown-like text ([`html`]), and split into passages by its structure ([`chunk`]); storage
//! keeps and searches them (`portal_store::knowledge`), and `search_knowledge` ([`search_tool`])
//! answers an agent's query with passages quoted as data. A collection kept from a folder on the
//! server is synced by comparing the folder's files with its documents ([`folder`]).

pub mod chunk;
pub mod folder;
pub mod html;
pub mod ingest;
pub mod search_tool;

pub use search_tool::{KnowledgeTools, SEARCH_KNOWLEDGE};
