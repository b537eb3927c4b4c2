//! Planning one compaction: the turns covered, the kept tail and the summary request.

use thiserror::Error;

use super::language::language_sample;
use super::prompt::{PromptInput, SummaryRequest, render};
use super::tail::{choose, units};
use super::view::{Entry, MessagePosition, View, flat_len};
use super::{CompactionConfig, Detail};
use crate::block::{CompactionTrigger, TurnsCovered};
use crate::tokens::{TokenCounter, message_tokens, messages_tokens};
use crate::transcript::Transcript;

/// Why a compaction is planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The call's projected input reached the threshold (rule C1).
    Threshold { projected: u64 },
    /// The gateway reported a context overflow (rule C2).
    Overflow,
    /// The user sent `/compact` (rule C6).
    Command,
}

impl Cause {
    /// The trigger the compaction block records (rule B2).
    pub fn trigger(self) -> CompactionTrigger {
        match self {
            Cause::Threshold { .. } | Cause::Overflow => CompactionTrigger::Auto,
            Cause::Command => CompactionTrigger::Manual,
        }
    }
}

/// A planned compaction, waiting for its summary.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPlan {
    pub cause: Cause,
    /// The turns the summary covers: turn 1 to the newest turn with a summarised message (C9).
    pub covers: TurnsCovered,
    /// What the summary call reads.
    pub request: SummaryRequest,
    /// The messages kept verbatim after the summary.
    pub tail: Tail,
    pub diagnostics: Vec<Diagnostic>,
}

/// The kept tail: the messages from `start` to the end of the transcript (rules C3, C4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    /// The tail's first message; `None` when nothing is kept (`/compact`).
    pub start: Option<MessagePosition>,
    /// Conversation messages in the tail when planned.
    pub messages: usize,
    /// Their estimated tokens.
    pub tokens: usize,
    /// The tail's first message's place in the transcript's flat message sequence.
    pub(crate) flat_start: usize,
}

/// Something the planner did that the host may want to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Diagnostic {
    /// The tail would have opened on these calls' results; it starts at their calls instead.
    TailShiftedEarlier { call_ids: Vec<String> },
    /// These calls never returned; the tail starts after them and the summary records them.
    TailShiftedLater { call_ids: Vec<String> },
    /// The summary request shows less of the tool traffic, to fit its budget.
    DetailReduced { detail: Detail },
    /// Even at the least detail the request is estimated above its budget; the call may fail.
    RequestOverBudget { tokens: usize, budget: u64 },
}

/// Why no compaction could be planned.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    #[error(
        "there is nothing to summarise: every message since the last compaction is among the latest ones kept verbatim"
    )]
    NothingToSummarise,
}

/// Plans a compaction of `transcript` for a model whose window holds `window` tokens.
///
/// Auto compactions keep `config.kept_messages` messages (shifted by rule C4); `/compact` keeps
/// none. `instructions` are the `/compact` instructions, passed to the summary (rule C6).
pub fn plan(
    transcript: &Transcript,
    cause: Cause,
    instructions: Option<&str>,
    window: u64,
    config: &CompactionConfig,
    counter: &dyn TokenCounter,
) -> Result<CompactionPlan, PlanError> {
    let view = View::of(transcript);
    let entries = &view.entries;
    let all_units = units(entries);
    let kept = match cause {
        Cause::Command => 0,
        _ => config.kept_messages,
    };
    let choice = choose(entries, &all_units, kept);
    let summarised = &entries[..choice.start];
    let tail_entries = &entries[choice.start..];
    let Some(last) = summarised.last() else {
        return Err(PlanError::NothingToSummarise);
    };
    let covers = TurnsCovered {
        first: 1,
        last: view
            .earlier
            .map_or(0, |e| e.covers.last)
            .max(last.turn.index)
            .max(1),
    };

    let mut diagnostics = Vec::new();
    if !choice.shifted_earlier.is_empty() {
        diagnostics.push(Diagnostic::TailShiftedEarlier {
            call_ids: choice.shifted_earlier.clone(),
        });
    }
    if !choice.shifted_later.is_empty() {
        diagnostics.push(Diagnostic::TailShiftedLater {
            call_ids: choice.shifted_later.clone(),
        });
    }

    let summarised_units: Vec<_> = all_units
        .into_iter()
        .filter(|u| u.end <= choice.start)
        .collect();
    let sample = language_sample(transcript, config);
    let input = PromptInput {
        earlier: view.earlier.as_ref(),
        entries: summarised,
        units: &summarised_units,
        covers,
        sample: &sample,
        instructions,
    };
    let request = fitted_request(&input, window, config, counter, &mut diagnostics);

    let flat_start = tail_entries
        .first()
        .map_or_else(|| flat_len(transcript), |e| e.flat);
    Ok(CompactionPlan {
        cause,
        covers,
        request,
        tail: Tail {
            start: tail_entries.first().map(Entry::position),
            messages: tail_entries.len(),
            tokens: tail_entries
                .iter()
                .map(|e| message_tokens(counter, &e.live_message()))
                .sum(),
            flat_start,
        },
        diagnostics,
    })
}

/// The request at the most detailed level that fits the summary's share of the window.
fn fitted_request(
    input: &PromptInput<'_>,
    window: u64,
    config: &CompactionConfig,
    counter: &dyn TokenCounter,
    diagnostics: &mut Vec<Diagnostic>,
) -> SummaryRequest {
    let budget = u128::from(window) * u128::from(config.summary_input_percent) / 100;
    let budget = u64::try_from(budget).unwrap_or(u64::MAX);
    let fallback = Detail {
        result_chars: 0,
        argument_chars: 0,
    };
    let levels = if config.detail_levels.is_empty() {
        std::slice::from_ref(&fallback)
    } else {
        config.detail_levels.as_slice()
    };
    let mut last = None;
    for (i, detail) in levels.iter().enumerate() {
        let request = render(input, *detail);
        let tokens = counter.count(&request.system) + messages_tokens(counter, &request.messages);
        if window == 0 || tokens as u64 <= budget {
            if i > 0 {
                diagnostics.push(Diagnostic::DetailReduced { detail: *detail });
            }
            return request;
        }
        last = Some((request, tokens, *detail));
    }
    match last {
        Some((request, tokens, detail)) => {
            if levels.len() > 1 {
                diagnostics.push(Diagnostic::DetailReduced { detail });
            }
            diagnostics.push(Diagnostic::RequestOverBudget { tokens, budget });
            request
        }
        None => render(input, fallback),
    }
}
