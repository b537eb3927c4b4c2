//! Any bytes as an uploaded PDF, read as a reader process reads it: reading never panics, ends
//! finished or failed, keeps no more text than its limit, and a document stopped early names the
//! limit that stopped it (rule A2; docs/security.md, "Limits"). Seeded from `tests/fixtures/fuzz/pdf`.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use portal_core::attachment::ReadingStatus;
use portal_attachments::{PdfLimits, UploadConfig, pdf_reading, read_pdf};

fuzz_target!(|data: &[u8]| {
    let limits = PdfLimits {
        pages: 64,
        time: Duration::from_secs(2),
        text_bytes: 64 * 1024,
        ..UploadConfig::DEFAULT.pdf_limits()
    };
    let mut progress = 0u32;
    let document = read_pdf(&pdf_reading("att_fuzz", "fuzz.pdf"), data, &limits, |d| {
        assert!(d.pages_read > progress, "progress moves on");
        progress = d.pages_read;
    });
    assert_ne!(document.status, ReadingStatus::Reading);
    assert!(document.pages_read <= limits.pages);
    assert!(document.text.as_ref().map_or(0, String::len) <= limits.text_bytes);
    if document.status == ReadingStatus::Finished && document.pages_read < document.pages_total {
        assert!(document.stopped_by.is_some(), "{document:?}");
    }
});
