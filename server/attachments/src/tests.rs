use std::io::Cursor;

use base64::Engine;
use image::{ImageFormat, Rgb, RgbImage};
use lopdf::content::{Content, Operation};
use lopdf::{Bookmark, Object, Stream, dictionary};
use portal_core::Transcript;
use portal_core::attachment::{
    AttachmentConfig, AttachmentError, DocumentBody, Picture, ReadingStatus, check_can_see,
    document_entry, picture_caption, text_from_bytes,
};
use portal_core::effort::Effort;
use portal_core::model::{ModelCapabilities, PictureLimit, Provider};
use portal_core::new_turn::{NewMessage, NewTurnError, open_turn};
use serde_json::json;

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/attachments")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 256) as u8, (y % 256) as u8, 90])
    });
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).expect("png");
    out.into_inner()
}

fn jpeg(width: u32, height: u32) -> Vec<u8> {
    let image = RgbImage::from_pixel(width, height, Rgb([200, 120, 40]));
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Jpeg).expect("jpeg");
    out.into_inner()
}

/// A PDF whose pages hold `pages` (`None`: a page without text, as a scan has), with an outline
/// entry for each `(title, page)`.
fn pdf(pages: &[Option<&str>], outline: &[(&str, usize)]) -> Vec<u8> {
    let mut doc = lopdf::Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
    let mut kids = Vec::new();
    let mut page_ids = Vec::new();
    for text in pages {
        let operations = match text {
            Some(text) => vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 12.into()]),
                Operation::new("Td", vec![72.into(), 720.into()]),
                Operation::new("Tj", vec![Object::string_literal(*text)]),
                Operation::new("ET", vec![]),
            ],
            None => vec![
                Operation::new("re", vec![72.into(), 72.into(), 200.into(), 200.into()]),
                Operation::new("f", vec![]),
            ],
        };
        let content = Content { operations };
        let content_id = doc.add_object(Stream::new(
            dictionary! {},
            content.encode().expect("content"),
        ));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
        });
        kids.push(page_id.into());
        page_ids.push(page_id);
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => pages.len() as i64,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    for (title, page) in outline {
        doc.add_bookmark(
            Bookmark::new(title.to_string(), [0.0, 0.0, 0.0], 0, page_ids[page - 1]),
            None,
        );
    }
    if let Some(outline_id) = doc.build_outline()
        && let Ok(Object::Dictionary(catalog)) = doc.get_object_mut(catalog_id)
    {
        catalog.set("Outlines", Object::Reference(outline_id));
    }
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("pdf");
    out
}

fn model(can_see: bool, largest: Option<PictureLimit>) -> ModelCapabilities {
    ModelCapabilities {
        id: if can_see {
            "seeing-model"
        } else {
            "blind-model"
        }
        .into(),
        provider: Provider::OpenAi,
        context_window: 128_000,
        max_output_tokens: 4_096,
        can_reason: false,
        can_see,
        largest_picture: largest,
    }
}

fn config() -> UploadConfig {
    UploadConfig::default()
}

/// [`accept`] on an upload of `bytes`.
fn accept_bytes(
    id: &str,
    filename: &str,
    bytes: impl AsRef<[u8]>,
    config: &UploadConfig,
) -> Result<Attachment, UploadError> {
    accept(id, filename, &mut Cursor::new(bytes.as_ref()), config)
}

/// [`store_upload`] of an upload of `bytes`.
fn store_bytes(
    storage: &dyn portal_store::Storage,
    owner: &portal_store::Owner,
    filename: &str,
    bytes: impl AsRef<[u8]>,
    config: &UploadConfig,
    quota: u64,
) -> Result<Attachment, UploadFailed> {
    store_upload(
        storage,
        owner,
        filename,
        &mut Cursor::new(bytes.as_ref()),
        config,
        quota,
    )
}

/// The text document a file of `text` is, with its text as storage loads it.
fn text_document(id: &str, filename: &str, media_type: &str, text: &str) -> Document {
    let mut document = read_text(id, filename, media_type, &mut text.as_bytes())
        .expect("read")
        .expect("text");
    document.text = text_from_bytes(text.into());
    document
}

fn picture_of(attachment: Attachment) -> Picture {
    match attachment {
        Attachment::Picture(p) => p,
        other => panic!("expected a picture, got {other:?}"),
    }
}

fn document_of(attachment: Attachment) -> Document {
    match attachment {
        Attachment::Document(d) => d,
        other => panic!("expected a document, got {other:?}"),
    }
}

#[test]
fn a1_a_pdf_named_like_a_picture_is_a_document() {
    let bytes = pdf(&[Some("Hello")], &[]);
    let doc = document_of(accept_bytes("a1", "holiday.png", &bytes, &config()).expect("accepted"));
    assert_eq!(doc.media_type, "application/pdf");
    assert_eq!(doc.status, ReadingStatus::Reading);
    assert!(needs_reading(&doc));
}

#[test]
fn a1_a_picture_named_like_text_is_a_picture() {
    let picture =
        picture_of(accept_bytes("a1", "notes.txt", png(4, 3), &config()).expect("accepted"));
    assert_eq!(picture.media_type, "image/png");
    assert_eq!((picture.width, picture.height), (4, 3));
    assert_eq!(picture.filename, "notes.txt");
}

#[test]
fn a1_markdown_fixture_is_a_finished_document_with_headings() {
    let bytes = fixture("field-notes.md");
    let doc =
        document_of(accept_bytes("d1", "field-notes.md", &bytes, &config()).expect("accepted"));
    assert_eq!(doc.media_type, "text/markdown");
    assert_eq!(doc.status, ReadingStatus::Finished);
    assert_eq!(doc.headings, ["Field notes", "Birds", "Fish"]);
    let as_text =
        document_of(accept_bytes("d2", "field-notes.txt", &bytes, &config()).expect("ok"));
    assert_eq!(as_text.media_type, "text/plain");
    assert!(as_text.headings.is_empty());
}

#[test]
fn uploads_over_the_limit_empty_or_of_unknown_kind_are_refused() {
    let small = UploadConfig {
        max_bytes: 10,
        ..config()
    };
    let error = accept_bytes("a", "big.txt", b"eleven byte", &small).expect_err("too large");
    assert!(matches!(
        error,
        UploadError::TooLarge {
            size: 11,
            limit: 10,
            ..
        }
    ));
    assert!(error.to_string().contains("big.txt"));
    assert!(matches!(
        accept_bytes("a", "e.txt", b"", &config()),
        Err(UploadError::Empty { .. })
    ));
    assert!(matches!(
        accept_bytes("a", "tool.exe", b"MZ\x90\0\x03\0\0\0", &config()),
        Err(UploadError::Unsupported { .. })
    ));
}

#[test]
fn a_broken_or_oversized_picture_is_refused_at_upload() {
    let mut broken = png(8, 8);
    broken.truncate(40);
    let error = accept_bytes("p", "broken.png", &broken, &config()).expect_err("broken");
    assert!(matches!(error, UploadError::Picture { .. }), "{error}");
    let strict = UploadConfig {
        max_picture_side: 100,
        ..config()
    };
    let error = accept_bytes("p", "wide.png", png(101, 2), &strict).expect_err("too wide");
    assert!(
        matches!(
            error,
            UploadError::Picture {
                source: PictureError::TooWide { limit: 100, .. },
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_picture_declaring_no_width_is_refused_at_upload() {
    // Found by the picture_decoding fuzz target: a GIF whose screen is 0 × 3 pixels decoded to
    // an empty picture, which could not be sent to a model.
    let gif = include_bytes!("../../../tests/fixtures/fuzz/pictures/zero-width.gif");
    let error = accept_bytes("p", "empty.gif", gif, &config()).expect_err("no pixels");
    assert!(
        matches!(
            error,
            UploadError::Picture {
                source: PictureError::Empty {
                    width: 0,
                    height: 3
                },
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_picture_past_the_decoded_memory_limit_is_refused_while_decoding() {
    let small = UploadConfig {
        max_decoded_bytes: 299,
        ..config()
    };
    let error = accept_bytes("p", "rgb.png", png(10, 10), &small).expect_err("300 bytes decoded");
    assert!(
        matches!(
            error,
            UploadError::Picture {
                source: PictureError::Decode(image::ImageError::Limits(_)),
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_picture_past_the_pixel_budget_is_refused_from_its_header_before_decoding() {
    let budget = UploadConfig {
        max_picture_pixels: 100,
        ..config()
    };
    assert!(accept_bytes("p", "ten.png", png(10, 10), &budget).is_ok());
    let error = accept_bytes("p", "big.png", png(11, 10), &budget).expect_err("110 pixels");
    assert_eq!(
        error.to_string(),
        "“big.png” was refused: the picture is 11 × 10 pixels (110 in all), past the limit of 100 pixels a \
         picture may have; send a smaller picture"
    );
    // A header declaring 8000 × 8000 pixels over a few bytes of data: were it decoded, the
    // decoder would take 192 MB for it. It is refused by its header alone.
    let mut forged = png(1, 1);
    forged[16..20].copy_from_slice(&8000u32.to_be_bytes());
    forged[20..24].copy_from_slice(&8000u32.to_be_bytes());
    let crc = crc32fast::hash(&forged[12..29]);
    forged[29..33].copy_from_slice(&crc.to_be_bytes());
    let error = accept_bytes("p", "bomb.png", &forged, &config()).expect_err("64 million pixels");
    assert!(
        matches!(
            error,
            UploadError::Picture {
                source: PictureError::TooManyPixels {
                    width: 8000,
                    height: 8000,
                    pixels: 64_000_000,
                    limit: 40_000_000
                },
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn file_names_keep_only_their_last_part_without_control_characters() {
    let config = config();
    assert_eq!(clean_filename("../../etc/passwd", &config), "passwd");
    assert_eq!(
        clean_filename("C:\\Users\\a\\report.pdf", &config),
        "report.pdf"
    );
    assert_eq!(clean_filename("bad\u{7}name.txt", &config), "badname.txt");
    // U+202E would show "invoice_fdp.exe" as "invoice_exe.pdf".
    assert_eq!(
        clean_filename("invoice_\u{202E}fdp.exe", &config),
        "invoice_fdp.exe"
    );
    let every_bidi_control: String = [
        '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}',
    ]
    .iter()
    .flat_map(|c| [*c, 'x'])
    .collect();
    assert_eq!(clean_filename(&every_bidi_control, &config), "xxxxxxxxxxxx");
    assert_eq!(clean_filename("\u{202E}\u{200F}", &config), "attachment");
    assert_eq!(clean_filename("..", &config), "attachment");
    let short = UploadConfig {
        filename_chars: 3,
        ..config
    };
    assert_eq!(clean_filename("👍🏽👍🏽👍🏽👍🏽.png", &short), "👍🏽👍🏽👍🏽");
}

#[test]
fn a2_pdf_reading_progress_unreadable_pages_and_outline_headings() {
    let bytes = pdf(
        &[
            Some("Introduction to herons"),
            None,
            Some("Results of the count"),
        ],
        &[("Introduction", 1), ("Results", 3)],
    );
    let reading =
        document_of(accept_bytes("d7", "survey.pdf", &bytes, &config()).expect("accepted"));
    let mut seen = Vec::new();
    let doc = read_pdf(&reading, &bytes, &config().pdf_limits(), |d| {
        seen.push((
            d.status,
            d.pages_read,
            d.pages_total,
            d.unreadable_pages.clone(),
        ));
    });
    assert_eq!(
        seen,
        vec![
            (ReadingStatus::Reading, 1, 3, vec![]),
            (ReadingStatus::Reading, 2, 3, vec![2]),
        ],
        "progress after pages 1, 2, 4, …; the end is the finished document"
    );
    assert_eq!(doc.status, ReadingStatus::Finished);
    assert_eq!(doc.unreadable_pages, [2]);
    assert_eq!(doc.headings, ["Introduction (page 1)", "Results (page 3)"]);
    let text = doc.text.clone().expect("text");
    assert!(text.contains("Introduction to herons"), "{text}");
    assert!(text.contains("Results of the count"), "{text}");

    let entry = document_entry(&doc, DocumentBody::Inline, &AttachmentConfig::default());
    assert!(
        entry.contains("Reading: finished, 3 pages; unreadable pages: 2"),
        "{entry}"
    );
    assert!(
        entry.contains("Sections: Introduction (page 1); Results (page 3)"),
        "{entry}"
    );
}

#[test]
fn a4_a_large_picture_is_reduced_to_the_models_largest_and_the_size_named() {
    let picture =
        picture_of(accept_bytes("p1", "wide.png", png(1600, 800), &config()).expect("ok"));
    let model = model(
        true,
        Some(PictureLimit {
            long_edge: 1000,
            pixels: None,
        }),
    );
    let sent = picture.reference(&model);
    assert!(sent.reduced);
    assert_eq!((sent.width, sent.height), (1000, 500));
    let caption = picture_caption(&picture, &sent);
    assert!(caption.contains("size=\"1000×500\""), "{caption}");
    assert!(caption.contains("reduced-from=\"1600×800\""), "{caption}");

    let encoded =
        encode_for_model(&picture.media_type, &png(1600, 800), &sent, &config()).expect("encoded");
    assert_eq!(encoded.media_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&encoded.base64)
        .expect("base64");
    let decoded = image::load_from_memory(&bytes).expect("decodes");
    assert_eq!((decoded.width(), decoded.height()), (1000, 500));
}

#[test]
fn a4_a_reduced_jpeg_stays_jpeg_and_a_small_picture_is_sent_as_stored() {
    let bytes = jpeg(800, 600);
    let picture = picture_of(accept_bytes("p2", "photo.jpg", &bytes, &config()).expect("ok"));
    let limit = Some(PictureLimit {
        long_edge: 400,
        pixels: None,
    });
    let sent = picture.reference(&model(true, limit));
    let encoded = encode_for_model(&picture.media_type, &bytes, &sent, &config()).expect("ok");
    assert_eq!(encoded.media_type, "image/jpeg");
    let decoded = image::load_from_memory(
        &base64::engine::general_purpose::STANDARD
            .decode(&encoded.base64)
            .expect("base64"),
    )
    .expect("decodes");
    assert_eq!((decoded.width(), decoded.height()), (400, 300));

    let small = png(10, 10);
    let picture = picture_of(accept_bytes("p3", "dot.png", &small, &config()).expect("ok"));
    let sent = picture.reference(&model(true, limit));
    assert!(!sent.reduced);
    let encoded = encode_for_model(&picture.media_type, &small, &sent, &config()).expect("ok");
    assert_eq!(
        encoded.base64,
        base64::engine::general_purpose::STANDARD.encode(&small)
    );
}

#[test]
fn a5_a_picture_for_a_blind_model_is_refused_before_anything_is_recorded() {
    let picture = accept_bytes("p1", "cat.png", png(20, 20), &config()).expect("accepted");
    let blind = model(false, None);
    let error = check_can_see(std::slice::from_ref(&picture), &blind).expect_err("A5");
    assert!(error.to_string().contains("blind-model"), "{error}");

    let mut transcript = Transcript::new();
    let before = transcript.clone();
    let refused = open_turn(
        &mut transcript,
        NewMessage {
            text: "what is this?".into(),
            attachments: vec![picture],
            again: None,
        },
        Effort::Medium,
        &blind,
    );
    assert!(matches!(
        refused,
        Err(NewTurnError::Attachment(
            AttachmentError::PictureNeedsVision { .. }
        ))
    ));
    assert_eq!(transcript, before, "A5: nothing recorded");
}

/// A conversation with one message carrying `documents`.
fn conversation(documents: Vec<Document>) -> Transcript {
    let mut transcript = Transcript::new();
    open_turn(
        &mut transcript,
        NewMessage {
            text: "read these".into(),
            attachments: documents.into_iter().map(Attachment::Document).collect(),
            again: None,
        },
        Effort::Medium,
        &model(true, None),
    )
    .expect("opens");
    transcript
}

#[test]
fn a3_read_document_reads_in_pieces_and_says_how_to_read_on() {
    let text = "Ünïcödé 👍🏽 ".repeat(10);
    let doc = text_document("d1", "long.txt", "text/plain", &text);
    let transcript = conversation(vec![doc]);
    let tools = DocumentToolConfig::default();
    let first = read_document(
        &transcript,
        &json!({"document_id": "d1", "length": 10}),
        &tools,
    )
    .expect("reads");
    assert!(first.contains("characters=\"0–10 of 99\""), "{first}");
    assert!(first.contains("\nÜnïcödé 👍🏽 \n"), "{first}");
    assert!(first.contains("read on with offset 10"), "{first}");
    let last = read_document(
        &transcript,
        &json!({"document_id": "d1", "offset": 90}),
        &tools,
    )
    .expect("reads");
    assert!(last.contains("90–99 of 99"), "{last}");
    assert!(last.contains("end of the document"), "{last}");
    let error =
        read_document(&transcript, &json!({"document_id": "nope"}), &tools).expect_err("unknown");
    assert_eq!(error, ToolError::NoDocument { id: "nope".into() });
    assert!(read_document(&transcript, &json!({}), &tools).is_err());
}

#[test]
fn a3_search_attachments_finds_passages_best_first_with_their_offsets() {
    let notes = text_document(
        "d1",
        "field-notes.md",
        "text/markdown",
        &String::from_utf8(fixture("field-notes.md")).expect("utf-8"),
    );
    let other = text_document(
        "d2",
        "other.txt",
        "text/plain",
        "Nothing about birds here.\n\nOr fish.",
    );
    let transcript = conversation(vec![notes, other]);
    let tools = DocumentToolConfig::default();
    let found = search_attachments(&transcript, &json!({"query": "weir KINGFISHERS"}), &tools)
        .expect("searches");
    let first = found.split("</passage>").next().expect("a passage");
    assert!(first.contains("document=\"d1\""), "{found}");
    assert!(first.contains("kingfishers dive near the weir"), "{found}");
    let offset: usize = first
        .split("offset=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
        .expect("offset");
    let piece = read_document(
        &transcript,
        &json!({"document_id": "d1", "offset": offset, "length": 6}),
        &tools,
    )
    .expect("reads at the offset");
    assert!(piece.contains("\nHerons\n"), "{piece}");

    let only = search_attachments(
        &transcript,
        &json!({"query": "fish", "document_ids": ["d2"]}),
        &tools,
    )
    .expect("searches");
    assert!(!only.contains("document=\"d1\""), "{only}");
    assert!(only.contains("Or fish."), "{only}");
    let none = search_attachments(&transcript, &json!({"query": "volcano"}), &tools)
        .expect("no match is an answer");
    assert!(none.starts_with("No passage matches"), "{none}");
    assert!(
        search_attachments(
            &transcript,
            &json!({"query": "x", "document_ids": ["zz"]}),
            &tools
        )
        .is_err()
    );
}

#[test]
fn a3_a_document_still_being_read_is_read_as_far_as_it_is() {
    let bytes = pdf(&[Some("First page words"), Some("Second page words")], &[]);
    let reading = pdf_reading("d1", "slow.pdf");
    let mut snapshots = Vec::new();
    read_pdf(&reading, &bytes, &config().pdf_limits(), |d| {
        snapshots.push(d.clone())
    });
    let transcript = conversation(vec![snapshots[0].clone()]);
    let tools = DocumentToolConfig::default();
    let piece = read_document(&transcript, &json!({"document_id": "d1"}), &tools).expect("reads");
    assert!(piece.contains("First page words"), "{piece}");
    assert!(piece.contains("still being read"), "{piece}");
    assert!(piece.contains("1 of 2 pages"), "{piece}");
}

#[tokio::test]
async fn a3_registered_document_tools_read_the_calls_transcript() {
    use std::sync::Arc;

    use portal_store::{AsyncStorage, ConversationId};
    use portal_store_sqlite::SqliteStorage;
    use portal_tools::{ToolCall, ToolContext, ToolRegistry};

    let mut registry = ToolRegistry::default();
    register(&mut registry, DocumentToolConfig::default());
    let doc = text_document("d1", "a.txt", "text/plain", "Herons by the weir.");
    let context = ToolContext {
        storage: AsyncStorage::new(Arc::new(SqliteStorage::in_memory().expect("storage"))),
        org_id: "acme".into(),
        conversation: ConversationId::new("c1"),
        transcript: Arc::new(conversation(vec![doc])),
        pictures: Arc::new(KeepsNothing),
    };
    let arguments = json!({"document_id": "d1"});
    let call = ToolCall {
        id: "call_1",
        name: "read_document",
        arguments: &arguments,
    };
    let read = registry.get("read_document").expect("registered");
    let output = read.run(call, &context).await;
    assert!(!output.is_error);
    assert!(output.content.contains("Herons by the weir."));

    let arguments = json!({"query": "weir", "document_ids": ["d9"]});
    let call = ToolCall {
        id: "call_2",
        name: "search_attachments",
        arguments: &arguments,
    };
    let search = registry.get("search_attachments").expect("registered");
    let output = search.run(call, &context).await;
    assert!(output.is_error, "an unknown id is an error answer");
    assert!(output.content.contains("d9"));
}

#[test]
fn a2_a_stored_pdf_is_read_with_its_progress_written_back() {
    use portal_store::{Owner, Storage};
    use portal_store_sqlite::SqliteStorage;

    let data = tempfile::tempdir().expect("tempdir");
    let storage = SqliteStorage::open(data.path()).expect("storage");
    let owner = Owner::new("acme", "alice");
    let bytes = pdf(&[Some("One"), None], &[]);
    let stored =
        store_bytes(&storage, &owner, "scan.pdf", &bytes, &config(), u64::MAX).expect("stored");
    assert!(stored.id().starts_with("att_") && stored.id().len() == 36);
    let Attachment::Document(reading) = &stored else {
        panic!("a document")
    };
    assert_eq!(
        storage.attachment(&owner, stored.id()).expect("stored"),
        stored,
        "stored while reading"
    );
    let limits = config().pdf_limits();
    let finished = read_stored(&storage, "acme", reading, |document, bytes, progress| {
        read_pdf(document, bytes, &limits, progress)
    })
    .expect("read");
    assert_eq!(finished.status, ReadingStatus::Finished);
    assert_eq!(finished.unreadable_pages, [2]);
    assert_eq!(
        storage.attachment(&owner, stored.id()).expect("stored"),
        Attachment::Document(finished),
    );
    assert!(
        storage
            .attachment(&Owner::new("globex", "alice"), stored.id())
            .is_err(),
        "another organisation does not see it"
    );
    assert!(
        storage
            .attachment(&Owner::new("acme", "bob"), stored.id())
            .is_err(),
        "nor does another user of the organisation"
    );
}

#[test]
fn a2_a_text_upload_is_answered_without_its_text_and_loaded_with_it() {
    use portal_store::{Owner, Storage};
    use portal_store_sqlite::SqliteStorage;

    let storage = SqliteStorage::in_memory().expect("storage");
    let owner = Owner::new("acme", "alice");
    let bytes = "\u{feff}# Notes\r\n\r\nHerons by the weir.\r\n";
    let stored =
        store_bytes(&storage, &owner, "notes.md", bytes, &config(), u64::MAX).expect("stored");
    let answered = document_of(stored.clone());
    assert_eq!(
        answered.text, None,
        "the answer carries no copy of the text"
    );
    assert_eq!(answered.headings, ["Notes"]);
    let loaded = document_of(storage.attachment(&owner, stored.id()).expect("stored"));
    assert_eq!(
        loaded.text.as_deref(),
        Some("# Notes\n\nHerons by the weir.")
    );
    assert_eq!(
        storage
            .attachment_bytes("acme", stored.id())
            .expect("bytes"),
        bytes.as_bytes(),
        "stored as sent"
    );
}

#[test]
fn a_refused_upload_stores_nothing() {
    use portal_store::Owner;
    use portal_store_sqlite::SqliteStorage;

    let storage = SqliteStorage::in_memory().expect("storage");
    let owner = Owner::new("acme", "alice");
    let refused = store_bytes(
        &storage,
        &owner,
        "x.bin",
        b"\0\x01\x02",
        &config(),
        u64::MAX,
    );
    assert!(matches!(
        refused,
        Err(UploadFailed::Refused(UploadError::Unsupported { .. }))
    ));
}

#[test]
fn a2_a_pdf_is_read_up_to_its_page_limit_and_its_progress_says_so() {
    let pages: Vec<Option<&str>> = vec![Some("Page one"), Some("Page two"), Some("Page three")];
    let bytes = pdf(&pages, &[]);
    let limits = PdfLimits {
        pages: 2,
        ..config().pdf_limits()
    };
    let doc = read_pdf(&pdf_reading("d1", "long.pdf"), &bytes, &limits, |_| {});
    assert_eq!(doc.status, ReadingStatus::Finished);
    assert_eq!((doc.pages_read, doc.pages_total), (2, 3));
    assert_eq!(doc.text.as_deref(), Some("Page one\n\nPage two"));
    assert_eq!(
        Attachment::Document(doc).progress_note(),
        "Ready; stopped at the page limit, 2 of 3 pages read"
    );

    let no_time = PdfLimits {
        pages: 2,
        time: std::time::Duration::ZERO,
        ..config().pdf_limits()
    };
    let doc = read_pdf(&pdf_reading("d2", "long.pdf"), &bytes, &no_time, |_| {});
    assert_eq!(
        (doc.status, doc.pages_read, doc.pages_total),
        (ReadingStatus::Finished, 0, 3)
    );
    assert_eq!(doc.text, None);
    assert_eq!(
        Attachment::Document(doc).progress_note(),
        "Ready; stopped at the time limit, 0 of 3 pages read"
    );
}

#[test]
fn a2_a_pdfs_progress_is_handed_over_at_powers_of_two_in_work_linear_in_its_pages() {
    let texts: Vec<String> = (1..=100).map(|n| format!("Words of page {n}")).collect();
    let pages: Vec<Option<&str>> = texts.iter().map(|t| Some(t.as_str())).collect();
    let bytes = pdf(&pages, &[]);
    let mut handed = Vec::new();
    let mut text_handed = 0;
    let doc = read_pdf(
        &pdf_reading("d1", "hundred.pdf"),
        &bytes,
        &config().pdf_limits(),
        |d| {
            handed.push(d.pages_read);
            text_handed += d.text.as_deref().map_or(0, str::len);
        },
    );
    assert_eq!(handed, [1, 2, 4, 8, 16, 32, 64]);
    let text = doc.text.expect("text");
    assert!(
        text.starts_with("Words of page 1\n\nWords of page 2"),
        "{text}"
    );
    assert!(text.ends_with("Words of page 100"), "{text}");
    assert!(
        text_handed < 2 * text.len(),
        "{text_handed} bytes of progress for {} bytes of text",
        text.len()
    );
}

#[test]
fn an_upload_past_its_owners_quota_is_refused_and_nothing_is_stored() {
    use portal_store::{Owner, StorageError};
    use portal_store_sqlite::SqliteStorage;

    let storage = SqliteStorage::in_memory().expect("storage");
    let alice = Owner::new("acme", "alice");
    let text = b"twenty bytes of text";
    store_bytes(&storage, &alice, "a.txt", text, &config(), 30).expect("20 of 30 bytes");
    let refused = store_bytes(&storage, &alice, "b.txt", text, &config(), 30);
    let Err(UploadFailed::Storage(error)) = refused else {
        panic!("refused: {refused:?}");
    };
    assert!(
        matches!(
            error,
            StorageError::QuotaExceeded {
                used: 20,
                size: 20,
                quota: 30
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("quota of 30 bytes"), "{error}");
    let bob = Owner::new("acme", "bob");
    store_bytes(&storage, &bob, "b.txt", text, &config(), 30).expect("bob has his own quota");
}

/// A keeper for tools that answer with no picture, which these tests run.
#[derive(Debug)]
struct KeepsNothing;

impl portal_tools::PictureKeeper for KeepsNothing {
    fn keep(&self, _: String, _: Vec<u8>) -> portal_tools::KeepFuture<'_> {
        Box::pin(async { Err("these tests keep no picture".to_string()) })
    }
}
