//! The attacks on memory (issue 34): documents and pictures that inflate to gigabytes, and many
//! large documents at once, each against a real server and SQLite on loopback with the bound it
//! proves. Memory and CPU time are read from `/proc/self` (the server runs in this process, its
//! PDF readers are its children); the tests that measure run one at a time and reset the peak
//! first. docs/security.md ("Limits") lists each limit with the test here that proves it.

#[path = "it/attack_support/mod.rs"]
mod attack_support;
#[path = "it/common/mod.rs"]
mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use attack_support::{
    attachment, children_cpu_time, cpu_time, deflate_repeating, memory, pdf_of_one_page,
    pdf_of_pages, pdf_of_pages_padded, peak_growth, upload,
};
use common::{Server, start, start_config, start_limited};
use portal_attachments::{UploadConfig, pdf_reading, read_pdf};
use portal_core::attachment::{Attachment, Document, ReadingLimit, ReadingStatus};
use portal_identity::{Identity, TokenDigest};
use portal_server::limits::Limits;

/// Held by every test that measures memory or CPU time, so no other attack runs meanwhile.
static MEASURING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const MIB: u64 = 1024 * 1024;

/// A one-page PDF whose content stream inflates to `inflated` bytes of text shown line after
/// line in one font, at about 1 : 500.
fn text_bomb(inflated: u64) -> Vec<u8> {
    pdf_of_one_page(&deflate_repeating(
        b"BT /F1 12 Tf 72 720 Td\n",
        b"(AAAAAAAAAA) Tj\n",
        inflated,
    ))
}

/// The document `id` once it is no longer being read (at most 120 s).
async fn read_to_end(server: &Server, id: &str) -> Document {
    let started = Instant::now();
    loop {
        match attachment(server, id).await {
            Attachment::Document(d) if d.status != ReadingStatus::Reading => return d,
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
        assert!(started.elapsed() < Duration::from_secs(120), "reading ends");
    }
}

/// The process's CPU time and its ended readers'.
fn all_cpu_time() -> Duration {
    cpu_time() + children_cpu_time()
}

#[test]
fn a_text_bomb_below_the_stream_limit_is_an_ordinary_pdf() {
    // The same file at 1 MiB inflated, under the 4 MiB stream limit, reads whole: the stream is
    // sound, so the bombs below are stopped by the limit, not by a broken file.
    let limits = UploadConfig::DEFAULT.pdf_limits();
    let document = read_pdf(
        &pdf_reading("d1", "small.pdf"),
        &text_bomb(MIB),
        &limits,
        |_| {},
    );
    assert_eq!(
        (document.status, document.pages_read, document.stopped_by),
        (ReadingStatus::Finished, 1, None)
    );
    let text = document.text.expect("text");
    assert!(
        text.matches("AAAAAAAAAA").count() > 60_000,
        "{}",
        text.len()
    );
}

#[tokio::test]
async fn text_bomb_pdfs_inflating_to_256_and_32_mib_stop_at_the_memory_limit() {
    let _measuring = MEASURING.lock().await;
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    for inflated in [256 * MIB, 32 * MIB] {
        let pdf = text_bomb(inflated);
        let size = pdf.len();
        let cpu = all_cpu_time();
        let (document, growth) = peak_growth(async {
            let (status, body) = upload(&server, "bomb.pdf", pdf).await;
            assert_eq!(status, 201, "{body}");
            read_to_end(&server, body["id"].as_str().expect("id")).await
        })
        .await;
        let cpu = all_cpu_time() - cpu;
        assert_eq!(
            (document.status, document.pages_read, document.pages_total),
            (ReadingStatus::Finished, 0, 1)
        );
        assert_eq!(document.stopped_by, Some(ReadingLimit::Memory));
        assert_eq!(
            Attachment::Document(document).progress_note(),
            "Ready; stopped at the memory limit, 0 of 1 pages read"
        );
        // The reader stops at the 4 MiB stream limit, before the content is parsed: the issue
        // measured +1 GB for the 32 MiB one and 160 MB a second, without end, for the 256 MiB
        // one.
        eprintln!(
            "a {size}-byte PDF inflating to {} MiB: the peak rose {growth:.1} MiB, {cpu:?} of CPU",
            inflated / MIB
        );
        assert!(growth < 64.0, "the peak rose {growth:.1} MiB");
        assert!(cpu < Duration::from_secs(10), "CPU time {cpu:?}");
    }
}

#[tokio::test]
async fn a_reader_past_its_memory_ends_alone_and_the_document_says_so() {
    let _measuring = MEASURING.lock().await;
    let data = tempfile::tempdir().expect("tempdir");
    let mut limits = Limits::DEFAULT;
    // A reader of the 100,000-page file peaks at about 136 MiB; 64 MiB cannot hold it.
    limits.uploads.pdf_memory_bytes = 64 * MIB;
    let server = start_limited(data.path(), 0.0, None, limits).await;
    let (document, growth) = peak_growth(async {
        let (status, body) = upload(&server, "huge.pdf", pdf_of_pages(100_000)).await;
        assert_eq!(status, 201, "{body}");
        read_to_end(&server, body["id"].as_str().expect("id")).await
    })
    .await;
    assert_eq!(document.status, ReadingStatus::Finished);
    assert_eq!(document.stopped_by, Some(ReadingLimit::Memory));
    assert_eq!(
        Attachment::Document(document).progress_note(),
        "Ready; stopped at the memory limit before any page was read"
    );
    eprintln!("a reader capped at 64 MiB: the server's peak rose {growth:.1} MiB");
    assert!(growth < 64.0, "the peak rose {growth:.1} MiB");
}

/// Organisation `acme` with the users `u1`, `u2` and `u3`, each signing in with the token that is
/// their name.
fn three_users(root: &Path) -> Identity {
    let write = |path: &str, text: String| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        "organisations/acme/organisation.toml",
        "name = \"Acme\"\n".into(),
    );
    for user in ["u1", "u2", "u3"] {
        write(
            &format!("organisations/acme/users/{user}/user.toml"),
            format!(
                "name = \"{user}\"\ntoken_sha256 = \"{}\"\n",
                TokenDigest::of(user).to_hex()
            ),
        );
    }
    Identity::load(root).expect("identity")
}

#[tokio::test]
async fn twelve_16_mb_pdfs_of_100000_pages_from_three_users_are_read_two_at_a_time() {
    let _measuring = MEASURING.lock().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let server = start_config(portal_server::Config {
        identity: Some(three_users(&dir.path().join("config"))),
        ..common::config(&dir.path().join("data"), 0.0, None)
    })
    .await;
    // 100,000 pages of about 160 bytes each.
    let pdf = bytes::Bytes::from(pdf_of_pages_padded(100_000, 62));
    let size = pdf.len();
    assert!(size > 16_000_000, "{size} bytes");
    let (baseline, _) = memory();
    let cpu = all_cpu_time();
    let started = Instant::now();
    let (documents, growth) = peak_growth(async {
        let uploads = (0..12).map(|n| {
            let (server, pdf) = (&server, pdf.clone());
            async move {
                let user = ["u1", "u2", "u3"][n % 3];
                let response = server
                    .client
                    .post(server.url("/api/attachments"))
                    .bearer_auth(user)
                    .query(&[("filename", format!("book{n}.pdf"))])
                    .body(pdf)
                    .send()
                    .await
                    .expect("sent");
                assert_eq!(response.status(), 201);
                let body: serde_json::Value = response.json().await.expect("json");
                let id = body["id"].as_str().expect("id").to_string();
                loop {
                    let document: Attachment = server
                        .client
                        .get(server.url(&format!("/api/attachments/{id}")))
                        .bearer_auth(user)
                        .send()
                        .await
                        .expect("read")
                        .json()
                        .await
                        .expect("attachment");
                    match document {
                        Attachment::Document(d) if d.status != ReadingStatus::Reading => {
                            break d;
                        }
                        _ => tokio::time::sleep(Duration::from_millis(200)).await,
                    }
                }
            }
        });
        futures_util::future::join_all(uploads).await
    })
    .await;
    let (cpu, wall) = (all_cpu_time() - cpu, started.elapsed());
    for document in &documents {
        assert_eq!(
            (
                document.status,
                document.pages_read,
                document.pages_total,
                document.stopped_by
            ),
            (
                ReadingStatus::Finished,
                2_000,
                100_000,
                Some(ReadingLimit::Pages)
            )
        );
    }
    // The server holds the 12 bodies while they arrive and each stored file while it is read,
    // two at a time; the readers' own memory is theirs, each capped at 512 MiB, and gone when
    // they end. The issue measured 4.63 GB reading them in the server; with glibc's moving
    // mapping threshold (server/portal/src/allocator.rs) it was 352 or 552 MiB from run to run, fixed
    // it is 239 MiB.
    eprintln!(
        "12 PDFs of {size} bytes: the server's peak rose {growth:.1} MiB, {cpu:?} of CPU with \
         its readers, {wall:?} in all"
    );
    assert!(growth < 320.0, "the peak rose {growth:.1} MiB");
    let waited = Instant::now();
    let settled = loop {
        let (resident, _) = memory();
        if resident - baseline < 96.0 || waited.elapsed() > Duration::from_secs(60) {
            break resident - baseline;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    eprintln!(
        "after the reading: {settled:.1} MiB above the baseline after {:?}",
        waited.elapsed()
    );
    assert!(settled < 96.0, "{settled:.1} MiB above the baseline");
}

/// A 1 × 1 PNG carrying an ICC profile that inflates to `inflated` bytes of zeros.
fn png_with_icc_profile(inflated: u64) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(1, 1, image::Rgb([30, 120, 200]));
    let mut png = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut png, image::ImageFormat::Png)
        .expect("png");
    let png = png.into_inner();
    let mut chunk = b"ICC\0\0".to_vec();
    chunk.extend(deflate_repeating(b"", &[0; 16], inflated));
    // After the signature (8 bytes) and the header chunk (25).
    let mut out = png[..33].to_vec();
    out.extend_from_slice(&(chunk.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(b"iCCP");
    out.extend_from_slice(&chunk);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend_from_slice(&png[33..]);
    out
}

#[tokio::test]
async fn a_png_whose_icc_profile_inflates_to_1_gib_is_decoded_without_it() {
    let _measuring = MEASURING.lock().await;
    let data = tempfile::tempdir().expect("tempdir");
    let server = start(data.path(), 0.0).await;
    let png = png_with_icc_profile(1024 * MIB);
    let size = png.len();
    let cpu = cpu_time();
    let ((status, body), growth) = peak_growth(upload(&server, "profile.png", png)).await;
    let cpu = cpu_time() - cpu;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        (body["width"].as_u64(), body["height"].as_u64()),
        (Some(1), Some(1))
    );
    // The profile is read to 16 MiB and left out (each of the three reads of the header, to
    // check its size, its orientation and its pixels); the issue measured +511 MB and 9 s.
    eprintln!(
        "a {size}-byte PNG with a 1 GiB profile: the peak rose {growth:.1} MiB, {cpu:?} of CPU"
    );
    assert!(growth < 64.0, "the peak rose {growth:.1} MiB");
    assert!(cpu < Duration::from_secs(5), "CPU time {cpu:?}");
}
