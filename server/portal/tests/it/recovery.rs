//! What a stopped process left half done is settled when the next server starts on the same data
//! folder: a document it was reading is marked failed, keeping the pages it had read, and is not
//! read again (the file may be what stopped the process).

use crate::common;

use portal_attachments::pdf_reading;
use portal_core::attachment::{Attachment, Document, ReadingStatus};
use portal_store::{AttachmentRef, Owner, Storage};
use portal_store_sqlite::SqliteStorage;

/// A PDF three pages into its ten, as the reader leaves it after each page.
fn reading(id: &str) -> Document {
    Document {
        pages_read: 3,
        pages_total: 10,
        stopped_by: None,
        text: Some("The first three pages.".into()),
        ..pdf_reading(id, "report.pdf")
    }
}

#[test]
fn a2_recovery_fails_the_documents_left_reading_and_nothing_else() {
    let data = tempfile::tempdir().expect("tempdir");
    let storage = SqliteStorage::open(data.path()).expect("opens");
    let owner = Owner::new("acme", "ana");
    let finished = Document {
        media_type: "text/plain".into(),
        status: ReadingStatus::Finished,
        pages_read: 0,
        pages_total: 0,
        text: Some("Herons.".into()),
        ..pdf_reading("att_done", "notes.txt")
    };
    for document in [reading("att_1"), finished.clone()] {
        storage
            .put_attachment(
                &owner,
                &Attachment::Document(document),
                &mut &b"%PDF-1.7"[..],
                8,
                u64::MAX,
            )
            .expect("stored");
    }
    assert_eq!(
        storage.recover_documents().expect("recovers"),
        [AttachmentRef {
            org_id: "acme".into(),
            attachment_id: "att_1".into(),
        }]
    );
    assert_eq!(
        storage.attachment(&owner, "att_1").expect("stored"),
        Attachment::Document(Document {
            status: ReadingStatus::Failed,
            ..reading("att_1")
        }),
        "failed, with the pages it had read"
    );
    assert_eq!(
        storage.attachment(&owner, "att_done").expect("stored"),
        Attachment::Document(finished)
    );
    assert!(storage.recover_documents().expect("again").is_empty());
}

#[tokio::test]
async fn a2_a_document_left_reading_is_failed_when_the_server_starts() {
    let data = tempfile::tempdir().expect("tempdir");
    SqliteStorage::open(data.path())
        .expect("opens")
        .put_attachment(
            &Owner::new("local", "local"),
            &Attachment::Document(reading("att_1")),
            &mut &b"%PDF-1.7"[..],
            8,
            u64::MAX,
        )
        .expect("stored");
    let server = common::start(data.path(), 0.0).await;
    let shown: serde_json::Value = server
        .client
        .get(server.url("/api/attachments/att_1"))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("json");
    assert_eq!(shown["status"], "failed", "{shown}");
    assert_eq!(
        (shown["pages_read"].as_u64(), shown["pages_total"].as_u64()),
        (Some(3), Some(10))
    );
}
