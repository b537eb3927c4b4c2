//! Files attached to the draft, whichever way they come (the Attach button, a drop on the page, a
//! paste into the message box): each becomes a chip, is uploaded one at a time, and is then
//! followed while a document is read. A refused file keeps its chip with the reason until the
//! person dismisses it, so several refused files each say what was wrong with them.

use std::cell::Cell;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use portal_core::attachment::{Attachment, upload_refusal};

use crate::api;
use crate::state::Portal;
use crate::wait::sleep;

/// How long to wait before asking again how far a document's reading has got.
const PROGRESS_POLL_MS: i32 = 1000;

/// A file attached to the draft.
#[derive(Debug, Clone, PartialEq)]
pub struct Chip {
    /// Tells chips of files with the same name apart.
    pub key: u32,
    pub name: String,
    pub state: ChipState,
    /// A picture's preview from the person's own file, while the chip is attached.
    pub thumbnail: Option<Arc<ObjectUrl>>,
}

/// Where a chip's file has got to.
#[derive(Debug, Clone, PartialEq)]
pub enum ChipState {
    Uploading,
    /// The server's attachment, with a document's reading progress.
    Uploaded(Attachment),
    /// Why the file was not attached, in a sentence naming it.
    Refused(String),
}

impl Chip {
    /// A chip for a file already uploaded (a sent message's, taken back to edit).
    pub fn attached(attachment: Attachment) -> Self {
        Chip {
            key: next_key(),
            name: attachment.filename().to_string(),
            state: ChipState::Uploaded(attachment),
            thumbnail: None,
        }
    }

    /// The server's attachment, once the file is uploaded.
    pub fn uploaded(&self) -> Option<&Attachment> {
        match &self.state {
            ChipState::Uploaded(attachment) => Some(attachment),
            _ => None,
        }
    }

    pub fn is_uploading(&self) -> bool {
        self.state == ChipState::Uploading
    }
}

/// A `blob:` address for a file of the page, revoked when the last chip holding it goes.
#[derive(Debug, PartialEq)]
pub struct ObjectUrl(pub String);

impl ObjectUrl {
    /// A preview address for `file` when it says it is a raster picture, which is all an
    /// `<img>` is asked to draw.
    fn for_picture(file: &web_sys::File) -> Option<Arc<ObjectUrl>> {
        let kind = file.type_();
        matches!(
            kind.as_str(),
            "image/png" | "image/jpeg" | "image/gif" | "image/webp"
        )
        .then(|| web_sys::Url::create_object_url_with_blob(file).ok())
        .flatten()
        .map(|url| Arc::new(ObjectUrl(url)))
    }
}

impl Drop for ObjectUrl {
    fn drop(&mut self) {
        let _ = web_sys::Url::revoke_object_url(&self.0);
    }
}

thread_local! {
    static NEXT_KEY: Cell<u32> = const { Cell::new(0) };
}

/// A key no other chip of this page has.
fn next_key() -> u32 {
    NEXT_KEY.with(|next| {
        let key = next.get();
        next.set(key.wrapping_add(1));
        key
    })
}

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
        let key = next_key();
        let chip = Chip {
            key,
            name: file.name(),
            state: ChipState::Uploading,
            thumbnail: ObjectUrl::for_picture(&file),
        };
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
