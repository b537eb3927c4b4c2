//! Files attached to the draft, whichever way they come (the Attach button, a drop on the page, a
//! paste into the message box): each becomes a chip, is uploaded one at a time, and is then
//! followed while a document is read. A refused file keeps its chip with the reason until the
//! person dismisses it, so several refused files each say what was wrong with them.

use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::attachment::{Attachment, upload_refusal};

use crate::api;
use crate::chip::{Chip, ChipState};
use crate::state::Portal;
use crate::wait::sleep;

/// How long to wait before asking again how far a document's reading has got.
const PROGRESS_POLL_MS: i32 = 1000;

/// The files of a file input, a drop or a paste.
pub fn files_of(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    list.map(|list| (0..list.length()).filter_map(|i| list.item(i)).collect())
        .unwrap_or_default()
}

/// Attaches `files` to the draft: a chip each at once, then uploads one at a time, so a handful
/// of files never meets the server's limit on a user's uploads in flight; each chip shows
/// "Uploading…" until its turn has come.
pub fn attach(portal: Portal, files: Vec<web_sys::File>) {
    if files.is_empty() {
        return;
    }
    let mut chosen = Vec::new();
    for file in files {
        let chip = Chip::uploading(&file);
        let key = chip.key;
        portal.attachments.update(|a| a.push(chip));
        chosen.push((file, key));
    }
    spawn_local(async move {
        for (file, key) in chosen {
            upload(portal, file, key).await;
        }
    });
}

/// Uploads `file` for chip `key`, then follows a document's reading until it ends, while the chip
/// is still attached.
async fn upload(portal: Portal, file: web_sys::File, key: u32) {
    if portal
        .attachments
        .with_untracked(|a| a.iter().any(|c| c.key == key))
    {
        let answer = api::upload(&file).await;
        if let Some(id) = show(portal, answer, key) {
            spawn_local(follow_reading(portal, id, key));
        }
    }
}

/// Asks how far a document's reading has got until it is read, showing it on its chip.
async fn follow_reading(portal: Portal, id: String, key: u32) {
    loop {
        sleep(PROGRESS_POLL_MS).await;
        if show(portal, api::attachment(&id).await, key).is_none() {
            return;
        }
    }
}

/// Shows an answer on chip `key`: the attachment, or why the file was refused; the attachment's
/// id while a document is still being read. A session that ended goes to the page.
fn show(portal: Portal, answer: Result<Attachment, api::Error>, key: u32) -> Option<String> {
    if !portal
        .attachments
        .with_untracked(|a| a.iter().any(|c| c.key == key))
    {
        return None;
    }
    let (state, reading) = match answer {
        Err(error) if error.signed_out() => {
            portal.report(error);
            return None;
        }
        Err(error) => {
            let name = portal.attachments.with_untracked(|a| {
                a.iter()
                    .find(|c| c.key == key)
                    .map(|c| c.name.clone())
                    .unwrap_or_default()
            });
            (
                ChipState::Refused(upload_refusal(&name, &error.message)),
                None,
            )
        }
        Ok(attachment) => {
            let reading = attachment.is_reading().then(|| attachment.id().to_string());
            (ChipState::Uploaded(attachment), reading)
        }
    };
    portal.attachments.update(|a| {
        if let Some(chip) = a.iter_mut().find(|c| c.key == key) {
            chip.state = state;
        }
    });
    reading
}
