//! The memory text uploads take (issue 42): four 20 MB text files uploaded at once by one user,
//! the most that user may have in flight, against a real server and SQLite on loopback. The peak
//! is read from `/proc/self` (the server runs in this process) and reset first; this binary
//! measures alone, so nothing running beside it moves the peak. docs/security.md ("Limits")
//! names the bound.

#[path = "it/attack_support/mod.rs"]
mod attack_support;
#[path = "it/common/mod.rs"]
mod common;

use attack_support::{attachment, peak_growth};
use common::start;
use portal_core::attachment::{Attachment, ReadingStatus};
use portal_server::limits::Limits;

/// Lines of each file, each [`LINE_BYTES`] long with its `\r\n`: 20,000,000 bytes a file.
const LINES: usize = 250_000;
const LINE_BYTES: usize = 80;

/// Line `line` of file `file` as stored, without its line ending: numbered, with letters outside
/// ASCII, padded with dots to 78 bytes.
fn line(file: usize, line: usize) -> String {
    let mut text = format!("file {file}, line {line:06}: naïve café ");
    while text.len() < LINE_BYTES - 2 {
        text.push('.');
    }
    text
}

/// File `file`: a byte-order mark, then its lines, each ended by `\r\n`.
fn file(file: usize) -> bytes::Bytes {
    let mut bytes = Vec::with_capacity(3 + LINES * LINE_BYTES);
    bytes.extend_from_slice("\u{feff}".as_bytes());
    for n in 0..LINES {
        bytes.extend_from_slice(line(file, n).as_bytes());
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.into()
}

#[tokio::test]
async fn four_20_mb_texts_uploaded_at_once_raise_the_peak_under_64_mib() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let uploads = Limits::DEFAULT.uploads_in_flight;
    assert_eq!(uploads, 4, "one user's uploads in flight");
    let files: Vec<bytes::Bytes> = (0..uploads).map(file).collect();
    let size = files[0].len();
    assert_eq!(size, 3 + 20_000_000);
    let (answers, growth) = peak_growth(async {
        let sent = files.iter().enumerate().map(|(n, bytes)| {
            let (server, bytes) = (&server, bytes.clone());
            async move {
                let response = server
                    .client
                    .post(server.url("/api/attachments"))
                    .query(&[("filename", format!("notes{n}.txt"))])
                    .body(bytes)
                    .send()
                    .await
                    .expect("sent");
                let status = response.status().as_u16();
                let answer = response.bytes().await.expect("the answer");
                (status, answer)
            }
        });
        futures_util::future::join_all(sent).await
    })
    .await;
    eprintln!(
        "four texts of {size} bytes at once: the peak rose {growth:.1} MiB; answers of {:?} bytes",
        answers.iter().map(|(_, a)| a.len()).collect::<Vec<_>>()
    );
    for (n, (status, answer)) in answers.iter().enumerate() {
        assert_eq!(*status, 201, "{}", String::from_utf8_lossy(answer));
        // The answer names the document; its text is read with `GET /api/attachments/{id}`.
        assert!(answer.len() < 1024, "an answer of {} bytes", answer.len());
        let answer: serde_json::Value = serde_json::from_slice(answer).expect("json");
        assert_eq!(answer["filename"], format!("notes{n}.txt"));
        assert_eq!(answer["status"], "finished");
        let Attachment::Document(document) =
            attachment(&server, answer["id"].as_str().expect("id")).await
        else {
            panic!("notes{n}.txt is a document");
        };
        assert_eq!(
            (document.status, document.media_type.as_str()),
            (ReadingStatus::Finished, "text/plain")
        );
        // The mark is left out, every `\r\n` is a `\n`, and the last line's ending is trimmed.
        let text = document.text.expect("its text");
        assert_eq!(text.len(), LINES * (LINE_BYTES - 1) - 1);
        assert_eq!(text.lines().next(), Some(line(n, 0).as_str()));
        assert_eq!(text.lines().last(), Some(line(n, LINES - 1).as_str()));
        assert!(!text.contains('\r') && !text.starts_with('\u{feff}'));
    }
    // Each file is received into a temporary file, read from there in pieces and stored in
    // pieces; its text is read from the stored bytes when it is loaded. Measured 7.6–8.7 MiB;
    // before, with each body, its text twice over, its metadata and its answer whole in memory,
    // 211–215 MiB, and each answer carried the whole text.
    assert!(growth < 64.0, "the peak rose {growth:.1} MiB");
}
