//! One file attached to the draft: a picture's thumbnail, its name, where it has got to
//! ("Uploading…", "Reading… page 3 of 12", "Ready"), or why it was refused, and a button that
//! removes it (or dismisses the refusal).

use leptos::prelude::*;
use portal_core::attachment::Attachment;

use crate::api;
use crate::chip::{Chip, ChipState};
use crate::state::portal;

#[component]
pub fn AttachmentChip(chip: Chip) -> impl IntoView {
    let attachments = portal().attachments;
    let key = chip.key;
    let refused = matches!(chip.state, ChipState::Refused(_));
    let uploaded = chip.uploaded().is_some().to_string();
    let (note, button) = match &chip.state {
        ChipState::Uploading => ("Uploading…".to_string(), format!("Remove {}", chip.name)),
        ChipState::Uploaded(attachment) => {
            (attachment.progress_note(), format!("Remove {}", chip.name))
        }
        ChipState::Refused(reason) => (
            reason.clone(),
            format!("Dismiss the error about {}", chip.name),
        ),
    };
    // The person's own file while it is here; a sent picture taken back to edit, from the portal.
    let thumbnail = match (&chip.thumbnail, &chip.state) {
        (_, ChipState::Refused(_)) => None,
        (Some(url), _) => Some(url.0.clone()),
        (None, ChipState::Uploaded(Attachment::Picture(picture))) => {
            Some(api::content_url(&picture.id))
        }
        (None, _) => None,
    }
    .map(|src| view! { <img class="thumbnail" src=src alt="" width="32" height="32" /> });
    let note = if refused {
        view! { <span class="refusal" role="alert">{note}</span> }.into_any()
    } else {
        view! { <span class="progress">{note}</span> }.into_any()
    };
    view! {
        <li
            class="attachment-chip"
            class:refused=refused
            data-testid="attachment-chip"
            data-uploaded=uploaded
        >
            {thumbnail}
            {(!refused).then(|| view! { <span class="name">{chip.name}</span> })}
            {note}
            <button
                type="button"
                class="remove"
                aria-label=button
                on:click=move |_| attachments.update(|a| a.retain(|c| c.key != key))
            >
                "×"
            </button>
        </li>
    }
}
