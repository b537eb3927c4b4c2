//! What a document arriving in a collection is read as, from its bytes and name.

use portal_attachments::sniff_head;
use portal_knowledge::ingest::{IngestError, Kind, kind};

fn check(filename: &str, bytes: &[u8], expected: Result<Kind, ()>) {
    let sniffed = sniff_head(&mut std::io::Cursor::new(bytes)).expect("sniffed");
    let found = kind(filename, sniffed, bytes);
    match expected {
        Ok(expected) => assert_eq!(found, Ok(expected), "{filename}"),
        Err(()) => assert_eq!(
            found,
            Err(IngestError::Unsupported {
                filename: filename.into()
            }),
            "{filename}"
        ),
    }
}

#[test]
fn a_documents_kind_comes_from_its_bytes_and_its_name_only_names_text() {
    check("report.pdf", b"%PDF-1.7\n...", Ok(Kind::Pdf));
    check("report.txt", b"%PDF-1.7\n...", Ok(Kind::Pdf));
    check("notes.md", b"# Notes\n\ntext", Ok(Kind::Markdown));
    check("page.HTML", b"<p>hi</p>", Ok(Kind::Html));
    check(
        "page.txt",
        b"\xef\xbb\xbf  <!DOCTYPE html><p>hi</p>",
        Ok(Kind::Html),
    );
    check("plain.txt", b"just words", Ok(Kind::Plain));
    check("fake.md", b"\x89PNG\r\n\x1a\nrest", Err(()));
    check("fake.md", &[b'a', 0, b'b'], Err(()));
    check("latin1.txt", b"caf\xe9", Err(()));
}
