//! Picture bytes are the host's: a prompt carries [`PictureRef`]s, and conversion asks a
//! [`PictureSource`] for each one's encoded bytes at the size the reference names.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::attachment::PictureRef;

/// A picture's bytes, encoded for a request body. Written `{ "mediaType": …, "base64": … }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EncodedPicture {
    /// The media type of the encoded bytes (the host may re-encode when it reduces).
    pub media_type: String,
    /// The bytes in standard base64.
    pub base64: String,
}

/// Where conversion gets a picture's bytes. The host reduces the stored picture to the
/// reference's size (rule A4) and encodes it, before conversion, so conversion stays pure.
pub trait PictureSource {
    /// The encoded picture, or `None` when the host has none; conversion then writes a line
    /// saying the picture could not be loaded, so the request stays valid.
    fn picture(&self, picture: &PictureRef) -> Option<EncodedPicture>;
}

/// A source without pictures: every picture becomes the "could not be loaded" line.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPictures;

impl PictureSource for NoPictures {
    fn picture(&self, _: &PictureRef) -> Option<EncodedPicture> {
        None
    }
}

/// Pictures the host encoded ahead of conversion, by attachment id.
impl PictureSource for HashMap<String, EncodedPicture> {
    fn picture(&self, picture: &PictureRef) -> Option<EncodedPicture> {
        self.get(&picture.attachment_id).cloned()
    }
}

/// The line written for a picture the source has no bytes for.
pub(crate) fn unavailable(picture: &PictureRef) -> String {
    format!(
        "[The picture {} could not be loaded.]",
        picture.attachment_id
    )
}
