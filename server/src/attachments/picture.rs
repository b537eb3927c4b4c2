//! Pictures: decoded at upload to check them and learn their size, and reduced for a model that
//! looks at smaller ones, to the size core computed (rule A4).

use std::collections::HashMap;
use std::io::Cursor;

use base64::Engine;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use portal_core::attachment::{Picture, PictureRef};
use portal_core::prompt::{EncodedPicture, PictureSource};
use thiserror::Error;

use super::UploadConfig;

/// Why picture bytes could not be used.
#[derive(Debug, Error)]
pub enum PictureError {
    #[error("the picture cannot be decoded ({0}); send it again as PNG, JPEG, GIF or WebP")]
    Decode(#[from] image::ImageError),
    #[error("the picture cannot be read: {0}")]
    Io(#[from] std::io::Error),
    #[error(
        "the picture is {width} × {height} pixels, and a side may be {limit} pixels at most; send a smaller picture"
    )]
    TooWide { width: u32, height: u32, limit: u32 },
    #[error(
        "the picture is {width} × {height} pixels ({pixels} in all), past the limit of {limit} pixels a picture may have; send a smaller picture"
    )]
    TooManyPixels {
        width: u32,
        height: u32,
        pixels: u64,
        limit: u64,
    },
}

/// Checks the size a picture's header declares against the limits, before anything is decoded:
/// a small file may declare a picture that takes gigabytes decoded.
fn check_declared_size(bytes: &[u8], config: &UploadConfig) -> Result<(), PictureError> {
    let (width, height) = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()?
        .into_dimensions()?;
    if width.max(height) > config.max_picture_side {
        return Err(PictureError::TooWide {
            width,
            height,
            limit: config.max_picture_side,
        });
    }
    let pixels = u64::from(width) * u64::from(height);
    if pixels > config.max_picture_pixels {
        return Err(PictureError::TooManyPixels {
            width,
            height,
            pixels,
            limit: config.max_picture_pixels,
        });
    }
    Ok(())
}

fn decode(bytes: &[u8], config: &UploadConfig) -> Result<DynamicImage, PictureError> {
    check_declared_size(bytes, config)?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(config.max_picture_side);
    limits.max_image_height = Some(config.max_picture_side);
    limits.max_alloc = Some(config.max_decoded_bytes);
    let mut reader = ImageReader::new(Cursor::new(bytes)).with_guessed_format()?;
    reader.limits(limits);
    Ok(reader.decode()?)
}

/// Decodes the whole picture, so a broken or oversized one is refused at upload, and returns it
/// as stored: its original size.
pub fn read_picture(
    id: &str,
    filename: &str,
    media_type: &str,
    bytes: &[u8],
    config: &UploadConfig,
) -> Result<Picture, PictureError> {
    let image = decode(bytes, config)?;
    Ok(Picture {
        id: id.to_string(),
        filename: filename.to_string(),
        media_type: media_type.to_string(),
        width: image.width(),
        height: image.height(),
    })
}

/// The picture as sent: the stored bytes when `sent` is not reduced, else decoded, resized to
/// exactly `sent`'s size (core kept the aspect) and encoded again, JPEG as JPEG and others as PNG.
pub fn encode_for_model(
    media_type: &str,
    bytes: &[u8],
    sent: &PictureRef,
    config: &UploadConfig,
) -> Result<EncodedPicture, PictureError> {
    let engine = base64::engine::general_purpose::STANDARD;
    if !sent.reduced {
        return Ok(EncodedPicture {
            media_type: media_type.to_string(),
            base64: engine.encode(bytes),
        });
    }
    let image = decode(bytes, config)?;
    let reduced = image.resize_exact(
        sent.width,
        sent.height,
        image::imageops::FilterType::Triangle,
    );
    let mut out = Cursor::new(Vec::new());
    let media_type = if media_type == "image/jpeg" {
        DynamicImage::ImageRgb8(reduced.to_rgb8()).write_to(&mut out, ImageFormat::Jpeg)?;
        "image/jpeg"
    } else {
        reduced.write_to(&mut out, ImageFormat::Png)?;
        "image/png"
    };
    Ok(EncodedPicture {
        media_type: media_type.to_string(),
        base64: engine.encode(out.into_inner()),
    })
}

/// Stored pictures by attachment id, handed to core's request conversion.
#[derive(Debug, Default)]
pub struct PictureShelf {
    pictures: HashMap<String, (String, Vec<u8>)>,
    config: UploadConfig,
}

impl PictureShelf {
    pub fn new(config: UploadConfig) -> Self {
        PictureShelf {
            pictures: HashMap::new(),
            config,
        }
    }

    /// Puts a stored picture's bytes on the shelf.
    pub fn insert(&mut self, picture: &Picture, bytes: Vec<u8>) {
        self.pictures
            .insert(picture.id.clone(), (picture.media_type.clone(), bytes));
    }
}

impl PictureSource for PictureShelf {
    fn picture(&self, picture: &PictureRef) -> Option<EncodedPicture> {
        let (media_type, bytes) = self.pictures.get(&picture.attachment_id)?;
        encode_for_model(media_type, bytes, picture, &self.config)
            .inspect_err(|error| {
                tracing::warn!("picture {} not sent: {error}", picture.attachment_id)
            })
            .ok()
    }
}
