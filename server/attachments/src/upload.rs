//! An upload from checking to storage: accepted (or refused, with nothing stored), stored with
//! its bytes under a fresh id within its owner's quota, and, for a PDF, read page by page with
//! its progress written back (rule A2).

use std::io::{BufRead, Seek};

use portal_core::attachment::{Attachment, Document};
use portal_core::block::ToolPicture;
use thiserror::Error;

use super::{UploadConfig, UploadError, accept, needs_reading, size_of};
use portal_store::{ConversationId, Owner, Storage, StorageError};

/// Why an upload was not stored.
#[derive(Debug, Error)]
pub enum UploadFailed {
    #[error(transparent)]
    Refused(#[from] UploadError),
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("no random id could be made for the attachment ({0}); try again")]
    Id(getrandom::Error),
}

/// A fresh attachment id: `att_` and 32 hexadecimal digits from the system's random source.
pub fn new_attachment_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("att_{hex}"))
}

/// Whether `text` is an id [`new_attachment_id`] could have made: `att_` and 32 lowercase
/// hexadecimal digits.
pub fn is_attachment_id(text: &str) -> bool {
    text.strip_prefix("att_").is_some_and(|hex| {
        hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Checks the upload in `file` and stores it for `owner`, within their `quota` of bytes, its
/// bytes copied from `file` in pieces: an upload is never held whole in memory, but for a
/// picture's decoded pixels. Nothing is stored when it is refused. A PDF is stored `Reading`;
/// finish it with [`read_stored`]. A text document is answered without its text, which storage
/// reads from its bytes.
pub fn store_upload<R: BufRead + Seek>(
    storage: &dyn Storage,
    owner: &Owner,
    filename: &str,
    file: &mut R,
    config: &UploadConfig,
    quota: u64,
) -> Result<Attachment, UploadFailed> {
    let id = new_attachment_id().map_err(UploadFailed::Id)?;
    let attachment = accept(&id, filename, file, config)?;
    let size = size_of(file).map_err(|source| UploadError::Unreadable {
        filename: attachment.filename().to_string(),
        source,
    })?;
    storage.put_attachment(owner, &attachment, file, size, quota)?;
    Ok(attachment)
}

/// Keeps the picture a tool answered with in `owner`'s `conversation` as a picture attachment of
/// theirs, named `filename`: checked as an upload is (sniffed from its bytes, so only a PNG,
/// JPEG, GIF or WebP picture is kept, decoded within the limits) and stored within their `quota`,
/// linked to the conversation, which it is deleted with.
pub fn keep_tool_picture(
    storage: &dyn Storage,
    owner: &Owner,
    conversation: &ConversationId,
    filename: &str,
    bytes: &[u8],
    config: &UploadConfig,
    quota: u64,
) -> Result<ToolPicture, UploadFailed> {
    let id = new_attachment_id().map_err(UploadFailed::Id)?;
    let mut file = std::io::Cursor::new(bytes);
    let Attachment::Picture(picture) = accept(&id, filename, &mut file, config)? else {
        return Err(UploadError::Unsupported {
            filename: filename.to_string(),
        }
        .into());
    };
    let size = bytes.len() as u64;
    let attachment = Attachment::Picture(picture.clone());
    storage.put_tool_picture(owner, conversation, &attachment, &mut file, size, quota)?;
    Ok(ToolPicture {
        attachment_id: picture.id,
        media_type: picture.media_type,
        width: picture.width,
        height: picture.height,
    })
}

/// Reads a stored document that is still `Reading` from its stored bytes with `read` (a reader
/// process, [`super::ReaderPlace::read`], in the server), writing its progress as `read` hands
/// it over and its end, and returns it finished (or failed). Others come back as they are. The
/// bytes are loaded only now, once the server holds a reader place for the document, so
/// documents waiting for one hold no memory. Blocking: run it off the async threads.
pub fn read_stored(
    storage: &dyn Storage,
    org_id: &str,
    document: &Document,
    read: impl FnOnce(&Document, &[u8], &mut dyn FnMut(&Document)) -> Document,
) -> Result<Document, StorageError> {
    if !needs_reading(document) {
        return Ok(document.clone());
    }
    let bytes = storage.attachment_bytes(org_id, &document.id)?;
    let mut failed = None;
    let finished = read(document, &bytes, &mut |progress| {
        if failed.is_none()
            && let Err(error) =
                storage.update_attachment(org_id, &Attachment::Document(progress.clone()))
        {
            failed = Some(error);
        }
    });
    drop(bytes);
    if let Some(error) = failed {
        return Err(error);
    }
    storage.update_attachment(org_id, &Attachment::Document(finished.clone()))?;
    Ok(finished)
}
