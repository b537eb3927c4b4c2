//! The server's integration tests, one test binary so that a change links once: real servers on
//! loopback ports over a SQLite data folder or a throwaway PostgreSQL (`databases`), with the
//! support modules they share. The tests that measure the process's memory or CPU time are
//! binaries of their own (`attack_memory.rs`, `attack_limits.rs`, `attack_streams.rs`,
//! `mcp_memory.rs`, `upload_memory.rs`), so that no test running beside them moves their peaks.

mod attack_support;
mod common;
#[macro_use]
mod databases;
#[path = "../../../../tests/fixtures/transcripts.rs"]
mod fixtures;
mod mcp_support;
mod proxy_support;
mod replica_support;
mod sso_support;
mod stream_support;

mod agent_tools;
mod anthropic;
mod attack_http;
mod compaction;
mod compaction_http;
mod conversation_list;
mod conversations_api;
mod crash;
mod data_lock;
mod database_secrets;
mod exchange;
mod failed_writes;
mod http;
mod identity;
mod inspect;
mod knowledge;
mod knowledge_storage;
mod mcp;
mod memory_window;
mod openai;
mod openai_api;
mod overflow_mid_stream;
mod pictures;
mod projects;
mod prompt_cli;
mod proxy;
mod quotas;
mod recovery;
mod replica_sign_in;
mod replicas;
mod rolling_deploy;
mod schema_version;
mod share;
mod sign_in;
mod sso;
mod sso_replicas;
mod stopping;
mod storage;
mod tokens;
mod turns;
mod usage;
mod usage_report;
mod versions;
