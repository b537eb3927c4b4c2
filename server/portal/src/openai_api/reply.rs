//! What a chat completion answers of a turn, folded from its events: the text of every text
//! block the agent wrote, joined by a blank line, as it grows (docs/api.md, "What the answer
//! holds"). Thinking, tool calls and their results stay in the portal.

use portal_core::stream::TurnEvent;
use portal_core::{BlockKind, Role, TurnStatus};

/// A turn's reply as a chat completion streams it.
#[derive(Debug, Default)]
pub struct Reply {
    /// Each message's role, by position.
    roles: Vec<Role>,
    /// The text blocks of the assistant's messages, by position, and their text so far.
    texts: Vec<((usize, usize), String)>,
    /// Whether any text has been handed out.
    sent: bool,
    ended: Option<(TurnStatus, Option<String>)>,
}

impl Reply {
    /// Folds one event, and returns the text it adds to the reply, if any. Text a withdrawn
    /// call wrote (rule C2) was handed out already and stays handed out; [`Reply::text`] drops
    /// it.
    pub fn handle(&mut self, event: &TurnEvent) -> Option<String> {
        match event {
            TurnEvent::MessageStart { message, role } => {
                if self.roles.len() <= *message {
                    self.roles.resize(*message + 1, Role::User);
                }
                self.roles[*message] = *role;
                None
            }
            TurnEvent::BlockStart {
                message,
                block,
                kind: BlockKind::Text,
                ..
            } if self.roles.get(*message) == Some(&Role::Assistant) => {
                self.texts.push(((*message, *block), String::new()));
                None
            }
            TurnEvent::Delta {
                message,
                block,
                text,
            } => {
                let (_, so_far) = self
                    .texts
                    .iter_mut()
                    .rev()
                    .find(|(at, _)| *at == (*message, *block))?;
                if text.is_empty() {
                    return None;
                }
                let first = so_far.is_empty();
                so_far.push_str(text);
                let added = if first && self.sent {
                    format!("\n\n{text}")
                } else {
                    text.clone()
                };
                self.sent = true;
                Some(added)
            }
            TurnEvent::Withdrawn { message, block } => {
                self.texts
                    .retain(|((m, b), _)| !(*m == *message && *b >= *block));
                None
            }
            TurnEvent::TurnEnd { status, reason } => {
                self.ended = Some((*status, reason.clone()));
                None
            }
            _ => None,
        }
    }

    /// The reply as it stands: its text blocks, withdrawn ones gone, joined by a blank line.
    pub fn text(&self) -> String {
        self.texts
            .iter()
            .map(|(_, text)| text.as_str())
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// How the turn ended, and why when it failed, once its `turn_end` came.
    pub fn ended(&self) -> Option<(TurnStatus, Option<&str>)> {
        self.ended
            .as_ref()
            .map(|(status, reason)| (*status, reason.as_deref()))
    }
}

#[cfg(test)]
mod tests;
