//! A file attached to the draft as its chip shows it: its name, where its upload has got to, and
//! a picture's preview. Plain data of the shared state; attaching and uploading are
//! web/src/attach.rs's.

use std::cell::Cell;
use std::sync::Arc;

use portal_core::attachment::Attachment;

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
    /// A chip for `file`, chosen to upload; a picture shows its preview at once.
    pub fn uploading(file: &web_sys::File) -> Self {
        Chip {
            key: next_key(),
            name: file.name(),
            state: ChipState::Uploading,
            thumbnail: ObjectUrl::for_picture(file),
        }
    }

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
