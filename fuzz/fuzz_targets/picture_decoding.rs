//! Any bytes as an upload, checked and decoded as the server does it: accepting never panics, a
//! picture accepted is within the pixel limits, and one sent to a model is encoded again within
//! the decode limits (rules A1, A4; docs/security.md, "Limits"). Seeded from
//! `tests/fixtures/fuzz/pictures`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use portal_core::attachment::{Attachment, PictureRef};
use portal_attachments::{UploadConfig, accept, encode_for_model};

fuzz_target!(|data: &[u8]| {
    let config = UploadConfig {
        max_picture_pixels: 4_000_000,
        max_decoded_bytes: 64 * 1024 * 1024,
        ..UploadConfig::DEFAULT
    };
    let Ok(Attachment::Picture(picture)) = accept("att_fuzz", "fuzz.png", data, &config) else {
        return;
    };
    assert!(u64::from(picture.width) * u64::from(picture.height) <= config.max_picture_pixels);
    let sent = PictureRef {
        attachment_id: picture.id.clone(),
        media_type: picture.media_type.clone(),
        width: picture.width.div_ceil(2),
        height: picture.height.div_ceil(2),
        reduced: true,
    };
    encode_for_model(&picture.media_type, data, &sent, &config).expect("a picture accepted encodes");
});
