//! What memory found odd in a transcript and worked around.

use serde::Serialize;

/// Something odd memory worked around. None of these stop the rebuild. Serialised tagged by
/// `kind`, in camelCase (`{ "kind": "hintMissed", "turn": 3 }`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Diagnostic {
    /// No hint was given and the newest compaction lay beyond the window: the rebuild read older
    /// turns to find it. Pass a [`CompactionHint`](crate::memory::CompactionHint) to keep the cost bounded.
    #[error(
        "the newest compaction lies beyond the replay window, so older turns were read to find it; pass a compaction hint to keep the rebuild cheap"
    )]
    SearchedBeyondWindow,
    /// The hint named a turn that holds no compaction beyond the window.
    #[error(
        "the compaction hint names turn {turn}, which holds no compaction; the hint was ignored"
    )]
    HintMissed { turn: u32 },
    /// A compaction keeps more messages than come before it.
    #[error(
        "a compaction keeps {kept_messages} messages but {missing} of them are not in the transcript; the kept tail is shorter"
    )]
    KeptTailShort { kept_messages: u32, missing: usize },
    /// Tool results without their calls before them (a kept tail that opens on results, rule
    /// C4); left out.
    #[error(
        "message {message} of turn {turn} holds tool results whose calls come before the kept tail; they were left out"
    )]
    OrphanResults { turn: u32, message: usize },
    /// A picture in the turn in progress for a model that cannot see; replaced by words. The
    /// turn should have been refused before it was recorded (rule A5).
    #[error(
        "picture {attachment_id} is in the turn in progress but the model cannot see; it was replaced by words"
    )]
    PictureForBlindModel { attachment_id: String },
}
