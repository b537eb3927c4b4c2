//! Core's tests, one test binary so that a change links once: each file is a module, with the
//! support modules they share declared once.

mod compaction_support;
#[path = "../../../tests/fixtures/transcripts.rs"]
mod fixtures;
mod markdown_support;
mod prompt_support;
mod turn_run_support;

mod attachments;
mod compaction;
mod compaction_loop;
mod compaction_prompt;
mod compaction_props;
mod effort;
mod formats;
mod hold;
mod markdown;
mod markdown_props;
mod memory;
mod new_turn;
mod pacing;
mod playout;
mod prompt;
mod prompt_golden;
mod prompt_props;
mod reveals;
mod skill_completion;
mod skills;
mod tool_card;
mod tool_pictures;
mod transcripts;
mod turn_run;
mod turn_run_props;
mod turn_state;
mod versions;
