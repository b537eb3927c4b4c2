//! Pictures: decoded at upload to check them and learn their size, and reduced for a model that
//! looks at smaller ones, to the size core computed (rule A4).

use std::collections::HashMap;
use std::io::{BufRead, Cursor, Seek};
use std::sync::Arc;

use base64::Engine;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};
use portal_core::attachment::{Picture, PictureRef};
use portal_core::block::ToolPicture;
use portal_core::prompt::{EncodedPicture, Prompt};
use thiserror::Error;
use tokio::sync::Semaphore;

use super::{UploadConfig, keep_tool_picture};
use portal_store::{AsyncStorage, ConversationId, Owner};

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
    #[error(
        "the picture is {width} × {height} pixels, so it has nothing to show; send a picture with pixels"
    )]
    Empty { width: u32, height: u32 },
}

/// The most a picture's metadata may take while its header is read, in bytes: a PNG's ICC
/// profile is decompressed as its header is read, and one of 1 MB can inflate to a gigabyte.
/// **Decision:** 16 MiB, far above real profiles (a few kilobytes to a few megabytes). PNG's
/// decoder leaves out a profile past it and decodes the pixels; the profile is not used anyway,
/// as pictures are sent to models without one.
const METADATA_BYTES: u64 = 16 * 1024 * 1024;

/// A reader of the picture in `source`, from its start, whose decoder, made from it, holds the
/// picture's metadata to [`METADATA_BYTES`].
fn reader<R: BufRead + Seek>(mut source: R) -> Result<ImageReader<R>, PictureError> {
    source.rewind()?;
    let mut reader = ImageReader::new(source).with_guessed_format()?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(METADATA_BYTES);
    reader.limits(limits);
    Ok(reader)
}

/// Checks the size the header of the picture in `source` declares against the limits, before
/// anything is decoded (and before the upload waits for a decode place): a small file may declare
/// a picture that takes gigabytes decoded. Only the header is read.
pub fn check_declared_size<R: BufRead + Seek>(
    source: &mut R,
    config: &UploadConfig,
) -> Result<(), PictureError> {
    let (width, height) = reader(source)?.into_dimensions()?;
    if width == 0 || height == 0 {
        return Err(PictureError::Empty { width, height });
    }
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

/// Decodes a picture upright: turned and flipped as its EXIF orientation says, so a phone photo
/// taken in portrait is portrait (rule A4).
fn decode<R: BufRead + Seek>(
    source: &mut R,
    config: &UploadConfig,
) -> Result<DynamicImage, PictureError> {
    check_declared_size(source, config)?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(config.max_picture_side);
    limits.max_image_height = Some(config.max_picture_side);
    limits.max_alloc = Some(config.max_decoded_bytes);
    let mut decoder = reader(source)?.into_decoder()?;
    let orientation = decoder.orientation()?;
    decoder.set_limits(limits.clone())?;
    // The decoded pixels count against the memory limit before they are allocated, as
    // `ImageReader::decode` would count them.
    limits.reserve(decoder.total_bytes())?;
    let mut image = DynamicImage::from_decoder(decoder)?;
    image.apply_orientation(orientation);
    Ok(image)
}

/// Whether the picture's pixels must be turned or flipped to stand upright.
fn needs_turning<R: BufRead + Seek>(source: &mut R) -> Result<bool, PictureError> {
    let mut decoder = reader(source)?.into_decoder()?;
    Ok(decoder.orientation()? != Orientation::NoTransforms)
}

/// Decodes the whole picture in `source`, so a broken or oversized one is refused at upload, and
/// returns it as stored: its original size, upright.
pub fn read_picture<R: BufRead + Seek>(
    id: &str,
    filename: &str,
    media_type: &str,
    source: &mut R,
    config: &UploadConfig,
) -> Result<Picture, PictureError> {
    let image = decode(source, config)?;
    Ok(Picture {
        id: id.to_string(),
        filename: filename.to_string(),
        media_type: media_type.to_string(),
        width: image.width(),
        height: image.height(),
    })
}

/// The picture as sent: the stored bytes when `sent` is not reduced and they stand upright, else
/// decoded upright, resized to exactly `sent`'s size (core kept the aspect) and encoded again,
/// JPEG as JPEG and others as PNG.
pub fn encode_for_model(
    media_type: &str,
    bytes: &[u8],
    sent: &PictureRef,
    config: &UploadConfig,
) -> Result<EncodedPicture, PictureError> {
    let engine = base64::engine::general_purpose::STANDARD;
    let mut source = Cursor::new(bytes);
    if !sent.reduced && !needs_turning(&mut source)? {
        return Ok(EncodedPicture {
            media_type: media_type.to_string(),
            base64: engine.encode(bytes),
        });
    }
    let image = decode(&mut source, config)?;
    let reduced = if (image.width(), image.height()) == (sent.width, sent.height) {
        image
    } else {
        image.resize_exact(
            sent.width,
            sent.height,
            image::imageops::FilterType::Triangle,
        )
    };
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

/// Encodes the pictures a prompt sends, for the model's request: read from storage, upright and
/// reduced to the size core chose (rules A4, A8). Decodes wait for one of the server's decode
/// places, the ones uploads use. A picture that cannot be read is left out, and the request says
/// in words that it could not be loaded. The pictures tools answer with are kept here too.
#[derive(Debug, Clone)]
pub struct ModelPictures {
    config: UploadConfig,
    decodes: Arc<Semaphore>,
    /// The bytes a person's attachments may take, tools' pictures among them.
    quota: u64,
}

impl Default for ModelPictures {
    fn default() -> Self {
        ModelPictures::new(UploadConfig::DEFAULT, 2, u64::MAX)
    }
}

impl ModelPictures {
    /// Pictures decoded with `config`'s limits, `decodes` at once, and tools' pictures kept
    /// within a person's `quota` of bytes.
    pub fn new(config: UploadConfig, decodes: usize, quota: u64) -> Self {
        ModelPictures {
            config,
            decodes: Arc::new(Semaphore::new(decodes)),
            quota,
        }
    }

    /// Keeps the picture a tool answered with in `owner`'s `conversation`
    /// ([`keep_tool_picture`]), decoded in one of the decode places uploads take too; the error
    /// says why it was not kept, in words for the result.
    pub async fn keep(
        &self,
        storage: &AsyncStorage,
        owner: Owner,
        conversation: ConversationId,
        filename: String,
        bytes: Vec<u8>,
    ) -> Result<ToolPicture, String> {
        let _place = Arc::clone(&self.decodes)
            .acquire_owned()
            .await
            .map_err(|e| e.to_string())?;
        let (storage, config, quota) = (
            Arc::clone(storage.blocking()),
            self.config.clone(),
            self.quota,
        );
        tokio::task::spawn_blocking(move || {
            keep_tool_picture(
                storage.as_ref(),
                &owner,
                &conversation,
                &filename,
                &bytes,
                &config,
                quota,
            )
            .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// The decode places, shared with uploads.
    pub fn decodes(&self) -> Arc<Semaphore> {
        Arc::clone(&self.decodes)
    }

    /// The pictures `prompt` sends, by attachment id.
    pub async fn encode(
        &self,
        storage: &AsyncStorage,
        org_id: &str,
        prompt: &Prompt,
    ) -> HashMap<String, EncodedPicture> {
        let mut encoded = HashMap::new();
        for picture in prompt.pictures() {
            if encoded.contains_key(&picture.attachment_id) {
                continue;
            }
            let Ok(_place) = Arc::clone(&self.decodes).acquire_owned().await else {
                break;
            };
            let (storage, org_id, picture, config) = (
                Arc::clone(storage.blocking()),
                org_id.to_string(),
                picture.clone(),
                self.config.clone(),
            );
            let id = picture.attachment_id.clone();
            let made = tokio::task::spawn_blocking(move || {
                let bytes = storage
                    .attachment_bytes(&org_id, &picture.attachment_id)
                    .map_err(|e| e.to_string())?;
                encode_for_model(&picture.media_type, &bytes, &picture, &config)
                    .map_err(|e| e.to_string())
            })
            .await;
            match made {
                Ok(Ok(picture)) => {
                    encoded.insert(id, picture);
                }
                Ok(Err(error)) => tracing::warn!("picture {id} not sent: {error}"),
                Err(error) => tracing::warn!("picture {id} not sent: {error}"),
            }
        }
        encoded
    }
}
