//! For any transcript that `validate` accepts, the rebuilt memory in each provider's format obeys
//! that provider's pairing rules. The input is transcript JSON; seed the corpus with
//! `tests/fixtures/transcripts/*.json` (see `docs/prompt.md`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use portal_core::attachment::AttachmentConfig;
use portal_core::effort::{Effort, EffortConfig};
use portal_core::memory::{CompactionHint, MemoryConfig};
use portal_core::model::{ModelCapabilities, PictureLimit, Provider};
use portal_core::prompt::{
    NoPictures, PromptConfig, PromptInput, anthropic, assemble, check_pairing, openai,
};

fuzz_target!(|data: &[u8]| {
    let Ok(json) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(transcript) = portal_core::parse_transcript(json) else {
        return;
    };
    let tight = MemoryConfig {
        max_turns: 2,
        max_calls_per_turn: 1,
        output_turns: 1,
        result_chars: 3,
        argument_chars: 2,
        attachments: AttachmentConfig {
            inline_document_chars: 10,
            inline_replay_budget: 10,
            picture_resend_messages: 1,
            ..AttachmentConfig::default()
        },
    };
    for memory in [MemoryConfig::default(), tight] {
        for (provider, can_see) in [(Provider::OpenAi, true), (Provider::Anthropic, false)] {
            let model = ModelCapabilities {
                id: "fuzz".into(),
                provider,
                context_window: 100_000,
                max_output_tokens: 8_000,
                can_reason: true,
                can_see,
                largest_picture: Some(PictureLimit {
                    long_edge: 1_000,
                    pixels: Some(500_000),
                }),
            };
            let config = PromptConfig {
                memory: memory.clone(),
                ..PromptConfig::default()
            };
            let assembled = assemble(
                &PromptInput {
                    transcript: &transcript,
                    compaction_hint: CompactionHint::Search,
                    model: &model,
                    instructions: "",
                    selected_skills: &[],
                    catalogue: &[],
                    agent_tools: &[],
                    effort: Effort::Medium,
                },
                &config,
            );
            let body = match provider {
                Provider::OpenAi => openai::request(&assembled.prompt, &model, &NoPictures),
                Provider::Anthropic => anthropic::request(
                    &assembled.prompt,
                    &model,
                    &EffortConfig::default(),
                    &NoPictures,
                ),
            };
            if let Err(e) = check_pairing(provider, &body) {
                panic!("{e}\n{body:#}");
            }
        }
    }
});
