//! The names of the demo tools the demo model calls, which `portal-tools` implements: one that
//! runs at once, one that needs the user's approval, and one that asks the user a question.

/// Counts a text's characters, words and bytes.
pub const COUNT_CHARACTERS: &str = "count_characters";
/// Publishes a note; runs only once the user approves.
pub const PUBLISH_NOTE: &str = "publish_note";
/// Asks the user a question; the turn pauses until they answer.
pub const ASK_USER: &str = "ask_user";

/// The demo tools' names: what the demo agent (`assistant`, the agent of local mode and of an
/// organisation without agent files) is offered.
pub const NAMES: [&str; 3] = [COUNT_CHARACTERS, PUBLISH_NOTE, ASK_USER];
