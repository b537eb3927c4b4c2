//! Attachments in the prompt, rule by rule (A1–A8).

use crate::prompt_support;

use portal_core::TurnStatus;
use portal_core::attachment::{
    Attachment, AttachmentConfig, AttachmentError, Document, DocumentBody, ReadingLimit,
    ReadingStatus, check_can_see, document_entry, file_size, reduced_size, text_from_bytes,
    upload_refusal,
};
use portal_core::memory::{CompactionHint, MemoryConfig, rebuild};
use portal_core::model::PictureLimit;
use portal_core::prompt::{Entry, Part};
use prompt_support::*;

fn new_message(attachments: Vec<Attachment>) -> Vec<Entry> {
    let t = transcript(vec![turn(
        TurnStatus::Running,
        vec![user_with("see attached", attachments)],
    )]);
    memory(&t).entries
}

fn pictures(entries: &[Entry]) -> Vec<(String, u32, u32)> {
    entries
        .iter()
        .flat_map(|e| &e.parts)
        .filter_map(|p| match p {
            Part::Picture { picture } => {
                Some((picture.attachment_id.clone(), picture.width, picture.height))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a1_an_attachment_keeps_the_kind_decided_at_upload() {
    let mut doc = document("scan", 10);
    if let Attachment::Document(d) = &mut doc {
        d.media_type = "image/png".into();
    }
    let Attachment::Picture(mut pic) = picture("report", 100, 100) else {
        unreachable!()
    };
    pic.media_type = "application/pdf".into();
    let entries = new_message(vec![doc, Attachment::Picture(pic)]);
    let text = all_text(&entries);
    assert!(text.contains("<document id=\"scan\" name=\"scan.pdf\" type=\"image/png\">"));
    assert_eq!(pictures(&entries), [("report".to_string(), 100, 100)]);
}

#[test]
fn a2_a_document_appears_as_its_manifest() {
    let doc = Document {
        id: "doc_7".into(),
        filename: "Q3 \"final\".pdf".into(),
        media_type: "application/pdf".into(),
        status: ReadingStatus::Reading,
        pages_read: 12,
        pages_total: 40,
        stopped_by: None,
        unreadable_pages: vec![9, 3, 4, 5, 12],
        headings: (1..=25).map(|i| format!("Heading {i}")).collect(),
        text: Some("partial".into()),
    };
    let entry = document_entry(&doc, DocumentBody::NoText, &AttachmentConfig::default());
    let sections: Vec<String> = (1..=20).map(|i| format!("Heading {i}")).collect();
    assert_eq!(
        entry,
        format!(
            "<document id=\"doc_7\" name=\"Q3 &quot;final&quot;.pdf\" type=\"application/pdf\">\n\
             Reading: in progress, 12 of 40 pages read; unreadable pages: 3–5, 9, 12\n\
             Sections: {}; …\n\
             Still being read: search what is read so far with search_attachments (id doc_7).\n\
             </document>",
            sections.join("; ")
        )
    );
}

#[test]
fn a2_a_text_documents_text_is_its_bytes_without_the_mark_crlf_and_surrounding_space() {
    let text = |bytes: &[u8]| text_from_bytes(bytes.to_vec());
    assert_eq!(
        text("\u{feff}# Notes\r\n\r\nHéllo 👋\r\n".as_bytes()).as_deref(),
        Some("# Notes\n\nHéllo 👋")
    );
    // Only a `\r` before a `\n` goes, once, as `str::replace("\r\n", "\n")` would take it.
    assert_eq!(text(b"a\r\r\nb\rc\r\n\n").as_deref(), Some("a\r\nb\rc"));
    // One mark is the file's; a second is text.
    assert_eq!(
        text("\u{feff}\u{feff}x".as_bytes()).as_deref(),
        Some("\u{feff}x")
    );
    assert_eq!(text("\u{feff} \r\n\t".as_bytes()), None);
    assert_eq!(text(b""), None);
    assert_eq!(text(b"  ok\xff ").as_deref(), Some("ok\u{fffd}"));
}

#[test]
fn a2_the_composer_shows_a_documents_progress_in_words() {
    let reading = Attachment::Document(Document {
        id: "doc_8".into(),
        filename: "survey.pdf".into(),
        media_type: "application/pdf".into(),
        status: ReadingStatus::Reading,
        pages_read: 2,
        pages_total: 5,
        stopped_by: None,
        unreadable_pages: vec![2],
        headings: Vec::new(),
        text: None,
    });
    assert_eq!(reading.filename(), "survey.pdf");
    assert!(reading.is_reading());
    assert_eq!(
        reading.progress_note(),
        "Reading… page 3 of 5; unreadable pages: 2"
    );
    let finished = document("notes", 10);
    assert!(!finished.is_reading());
    assert_eq!(finished.progress_note(), "Ready");
    let stopped = Attachment::Document(Document {
        id: "doc_9".into(),
        filename: "huge.pdf".into(),
        media_type: "application/pdf".into(),
        status: ReadingStatus::Finished,
        pages_read: 2000,
        pages_total: 100_000,
        stopped_by: None,
        unreadable_pages: Vec::new(),
        headings: Vec::new(),
        text: None,
    });
    assert_eq!(
        stopped.progress_note(),
        "Ready; stopped at the reading limit, 2000 of 100000 pages read",
        "a document the host stopped reading says so"
    );
    let photo = picture("photo", 10, 10);
    assert_eq!(photo.progress_note(), "Ready");
    assert!(!photo.is_reading());
}

#[test]
fn a2_a_document_stopped_by_a_limit_names_the_limit_in_its_progress() {
    let stopped = |limit, pages_read, pages_total| Document {
        id: "doc_9".into(),
        filename: "bomb.pdf".into(),
        media_type: "application/pdf".into(),
        status: ReadingStatus::Finished,
        pages_read,
        pages_total,
        stopped_by: Some(limit),
        unreadable_pages: Vec::new(),
        headings: Vec::new(),
        text: None,
    };
    let cases = [
        (
            ReadingLimit::Pages,
            2000,
            100_000,
            "stopped at the page limit, 2000 of 100000 pages read",
        ),
        (
            ReadingLimit::Time,
            7,
            9,
            "stopped at the time limit, 7 of 9 pages read",
        ),
        (
            ReadingLimit::Memory,
            0,
            1,
            "stopped at the memory limit, 0 of 1 pages read",
        ),
        // The last page's text passed the limit after it was read: every page was read but not
        // all of its text kept.
        (
            ReadingLimit::Memory,
            3,
            3,
            "stopped at the memory limit, 3 of 3 pages read",
        ),
        (
            ReadingLimit::Memory,
            0,
            0,
            "stopped at the memory limit before any page was read",
        ),
    ];
    for (limit, read, total, note) in cases {
        let document = stopped(limit, read, total);
        assert_eq!(
            document.progress_note(),
            format!("Reading: {note}"),
            "the manifest"
        );
        assert_eq!(
            Attachment::Document(document).progress_note(),
            format!("Ready; {note}"),
            "the composer"
        );
    }
}

#[test]
fn a3_a_short_finished_document_is_placed_whole_a_longer_one_is_read_with_tools() {
    let entries = new_message(vec![document("short", 6_000)]);
    assert!(all_text(&entries).contains(&format!("Text:\n{}\n</document>", "d".repeat(6_000))));
    let entries = new_message(vec![document("long", 6_001)]);
    let text = all_text(&entries);
    assert!(!text.contains("ddd"));
    assert!(text.contains("The text is longer than 6000 characters: read it with read_document and search it with search_attachments (id long)."));
    // Characters, not bytes: 6,000 emoji are 6,000 characters.
    let mut emoji = document("emoji", 0);
    if let Attachment::Document(d) = &mut emoji {
        d.text = Some("👩🏽‍💻".repeat(6_000));
    }
    assert!(all_text(&new_message(vec![emoji])).contains("Text:\n👩🏽‍💻"));
    // A document still being read is never inline.
    let mut reading = document("reading", 10);
    if let Attachment::Document(d) = &mut reading {
        d.status = ReadingStatus::Reading;
    }
    assert!(!all_text(&new_message(vec![reading])).contains("Text:"));
}

#[test]
fn a4_a_picture_is_reduced_to_what_the_provider_looks_at_and_the_size_named() {
    let entries = new_message(vec![picture("big", 4_032, 3_024)]);
    let [(_, w, h)] = pictures(&entries)[..] else {
        panic!("one picture");
    };
    assert!(w <= 1_568 && u64::from(w) * u64::from(h) <= 1_150_000);
    assert!(
        (f64::from(w) / f64::from(h) - 4.0 / 3.0).abs() < 0.01,
        "aspect kept"
    );
    assert!(all_text(&entries).contains(&format!(
        "<picture id=\"big\" name=\"big.jpg\" size=\"{w}×{h}\" reduced-from=\"4032×3024\"/>"
    )));
    let entries = new_message(vec![picture("small", 800, 600)]);
    assert_eq!(pictures(&entries), [("small".to_string(), 800, 600)]);
    assert!(all_text(&entries).contains("size=\"800×600\"/>"));

    let edge = Some(PictureLimit {
        long_edge: 2_048,
        pixels: None,
    });
    assert_eq!(reduced_size(4_096, 1_024, edge), (2_048, 512));
    assert_eq!(reduced_size(1_000, 30_000, edge), (68, 2_048));
    assert_eq!(reduced_size(100_000, 1, edge), (2_048, 1));
    assert_eq!(reduced_size(300, 200, None), (300, 200));
    let area = Some(PictureLimit {
        long_edge: 10_000,
        pixels: Some(1_000_000),
    });
    let (w, h) = reduced_size(2_000, 2_000, area);
    assert!(w * h <= 1_000_000 && w == h && w >= 999);
}

#[test]
fn a5_a_picture_needs_a_model_that_can_see() {
    let refused = check_can_see(&[document("d", 5), picture("cat", 10, 10)], &blind_model());
    assert_eq!(
        refused,
        Err(AttachmentError::PictureNeedsVision {
            model: "blind-model".into(),
            filename: "cat.jpg".into()
        })
    );
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("“blind-model” cannot see pictures")
    );
    assert_eq!(check_can_see(&[document("d", 5)], &blind_model()), Ok(()));
    assert_eq!(check_can_see(&[picture("cat", 10, 10)], &model()), Ok(()));
}

#[test]
fn a6_earlier_documents_replay_as_their_manifest_with_the_current_status() {
    // The document was still being read when sent; the host's transcript now says finished.
    let mut doc = document("spec", 9_000);
    if let Attachment::Document(d) = &mut doc {
        d.pages_read = 30;
        d.pages_total = 30;
    }
    let t = transcript(vec![
        turn(
            TurnStatus::Completed,
            vec![
                user_with("read this", vec![doc]),
                assistant(vec![text("Reading.")]),
            ],
        ),
        chat("and now?", "Done."),
    ]);
    let text = all_text(&memory(&t).entries);
    assert!(text.contains("<document id=\"spec\" name=\"spec.pdf\" type=\"application/pdf\">\nReading: finished, 30 pages\nSections: Introduction; Findings\nThe text is longer than 6000 characters"));
}

#[test]
fn a7_inline_text_replays_within_one_shared_budget_newest_first() {
    let turns: Vec<_> = (1..=5)
        .map(|i| {
            turn(
                TurnStatus::Completed,
                vec![
                    user_with(&format!("doc {i}"), vec![document(&format!("d{i}"), 6_000)]),
                    assistant(vec![text("Noted.")]),
                ],
            )
        })
        .collect();
    let entries = memory(&transcript(turns)).entries;
    let said = all_text(&entries);
    for i in 2..=5 {
        assert!(said.contains(&format!("d{i}.pdf\" type=\"application/pdf\">\nReading: finished, 2 pages\nSections: Introduction; Findings\nText:\n")), "d{i} inline");
    }
    assert!(said.contains("The text is not replayed here: read it with read_document and search it with search_attachments (id d1)."));
    let small = MemoryConfig {
        attachments: AttachmentConfig {
            inline_replay_budget: 6_000,
            ..AttachmentConfig::default()
        },
        ..MemoryConfig::default()
    };
    let t = transcript(
        (1..=2)
            .map(|i| {
                turn(
                    TurnStatus::Completed,
                    vec![
                        user_with("x", vec![document(&format!("d{i}"), 6_000)]),
                        assistant(vec![text("ok")]),
                    ],
                )
            })
            .collect(),
    );
    let text = all_text(&rebuild(&t, CompactionHint::Search, &model(), &small).entries);
    assert!(
        text.contains("(id d1)") && !text.contains("(id d2)"),
        "only the newest fits"
    );
}

#[test]
fn a8_only_the_most_recent_picture_messages_resend_older_ones_say_it_is_gone() {
    let turns: Vec<_> = (1..=5)
        .map(|i| {
            turn(
                TurnStatus::Completed,
                vec![
                    user_with(
                        &format!("photo {i}"),
                        vec![
                            picture(&format!("p{i}"), 640, 480),
                            picture(&format!("q{i}"), 10, 10),
                        ],
                    ),
                    assistant(vec![text("Nice.")]),
                ],
            )
        })
        .collect();
    let entries = memory(&transcript(turns)).entries;
    let ids: Vec<String> = pictures(&entries).into_iter().map(|p| p.0).collect();
    assert_eq!(ids, ["p3", "q3", "p4", "q4", "p5", "q5"]);
    let said = all_text(&entries);
    assert!(said.contains("<picture id=\"p1\" name=\"p1.jpg\">This picture was shown in an earlier turn and is no longer attached.</picture>"));
    assert!(said.contains("<picture id=\"q2\" name=\"q2.jpg\">This picture was shown"));
    // A later model that cannot see gets words for every earlier picture.
    let t = transcript(vec![turn(
        TurnStatus::Completed,
        vec![
            user_with("x", vec![picture("p", 5, 5)]),
            assistant(vec![text("ok")]),
        ],
    )]);
    let m = rebuild(
        &t,
        CompactionHint::Search,
        &blind_model(),
        &MemoryConfig::default(),
    );
    assert!(pictures(&m.entries).is_empty());
    assert!(
        all_text(&m.entries).contains("This picture is not shown: the model cannot see pictures.")
    );
}

#[test]
fn a3_documents_bring_their_tools_into_the_prompt() {
    use portal_core::effort::Effort;
    use portal_core::prompt::{PromptConfig, PromptInput, assemble};
    let t = transcript(vec![turn(
        TurnStatus::Running,
        vec![user_with("x", vec![document("d", 7_000)])],
    )]);
    let prompt = assemble(
        &PromptInput {
            transcript: &t,
            compaction_hint: CompactionHint::NoCompaction,
            model: &model(),
            instructions: "",
            project_instructions: "",
            selected_skills: &[],
            catalogue: &[],
            agent_tools: &[],
            effort: Effort::Medium,
        },
        &PromptConfig::default(),
    )
    .prompt;
    let names: Vec<&str> = prompt.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["read_document", "search_attachments"]);
}

#[test]
fn the_composer_says_where_reading_has_got_in_words() {
    let mut doc = Document {
        id: "doc_1".into(),
        filename: "survey.pdf".into(),
        media_type: "application/pdf".into(),
        status: ReadingStatus::Reading,
        pages_read: 0,
        pages_total: 0,
        stopped_by: None,
        unreadable_pages: Vec::new(),
        headings: Vec::new(),
        text: None,
    };
    let note = |doc: &Document| Attachment::Document(doc.clone()).progress_note();
    assert_eq!(note(&doc), "Reading…");
    (doc.pages_read, doc.pages_total) = (2, 12);
    assert_eq!(note(&doc), "Reading… page 3 of 12");
    doc.pages_read = 12;
    assert_eq!(note(&doc), "Reading… page 12 of 12");
    doc.status = ReadingStatus::Finished;
    assert_eq!(note(&doc), "Ready", "never \"Reading: finished\"");
    (doc.pages_read, doc.pages_total) = (0, 0);
    assert_eq!(note(&doc), "Ready", "a text file has no pages");
    doc.status = ReadingStatus::Failed;
    assert_eq!(note(&doc), "Could not be read");
    (doc.pages_read, doc.pages_total) = (4, 9);
    doc.unreadable_pages = vec![3, 2];
    assert_eq!(
        note(&doc),
        "Could not be read after 4 of 9 pages; unreadable pages: 2–3"
    );
}

#[test]
fn sizes_are_written_as_people_write_them() {
    assert_eq!(file_size(0), "0 bytes");
    assert_eq!(file_size(1), "1 byte");
    assert_eq!(file_size(1023), "1023 bytes");
    assert_eq!(file_size(1024), "1 KB");
    assert_eq!(file_size(1536), "1.5 KB");
    assert_eq!(file_size(20 * 1024 * 1024), "20 MB");
    assert_eq!(file_size(26_529_000), "25.3 MB");
    assert_eq!(
        file_size(1024 * 1024 - 1),
        "1 MB",
        "rounding up carries to the next unit"
    );
    assert_eq!(file_size(3 * 1024 * 1024 * 1024), "3 GB");
}

#[test]
fn a_refusal_names_its_file_once() {
    assert_eq!(
        upload_refusal("a.exe", "“a.exe” is not a kind of file the portal reads"),
        "“a.exe” is not a kind of file the portal reads"
    );
    assert_eq!(
        upload_refusal("a.txt", "you have 4 uploads in flight; send “a.txt” again"),
        "You have 4 uploads in flight; send “a.txt” again"
    );
    assert_eq!(
        upload_refusal("a.txt", "the portal cannot be reached"),
        "“a.txt” was not attached: the portal cannot be reached"
    );
}
