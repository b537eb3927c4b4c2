//! Editing a message of the person's: Edit takes it into the composer with its files, keeping
//! what the composer held; Cancel (or Esc in the message box) gives that back, and so does
//! sending the edit (web/src/session.rs). Files still uploading are not kept: their uploads have
//! no chip to land on while the edit holds the composer.

use leptos::prelude::*;

use crate::chip::Chip;
use crate::focus;
use crate::state::{Editing, Portal};
use crate::turn_view::TurnView;

/// Takes `turn`'s message into the composer to edit, with its files and the agent's effort.
pub fn begin(portal: Portal, turn: TurnView) {
    let again = portal.answerable_again(&turn);
    let editing = match portal.editing.get_untracked() {
        // Editing another message keeps what the composer held before the first edit.
        Some(editing) => Editing { again, ..editing },
        None => Editing {
            again,
            draft: portal.draft.get_untracked(),
            attachments: portal
                .attachments
                .get_untracked()
                .into_iter()
                .filter(|c| !c.is_uploading())
                .collect(),
            effort: portal.effort.get_untracked(),
        },
    };
    portal.editing.set(Some(editing));
    portal
        .draft
        .set(turn.state.with_untracked(|s| s.user_text.clone()));
    portal.attachments.set(
        turn.attachments
            .get_value()
            .into_iter()
            .map(Chip::attached)
            .collect(),
    );
    portal.effort.set(None);
    focus::composer();
}

/// Leaves the edit: the composer holds again what it held before.
pub fn end(portal: Portal) {
    if let Some(before) = portal.editing.get_untracked() {
        portal.editing.set(None);
        portal.draft.set(before.draft);
        portal.attachments.set(before.attachments);
        portal.effort.set(before.effort);
    }
}
