//! What the attack tests share: the process's memory and CPU time read from `/proc/self`, uploads
//! and their records, and files made by hand (deflate streams, PDFs) in milliseconds.

#![allow(dead_code)]

use std::time::Duration;

use portal_core::attachment::Attachment;
use serde_json::Value;

use crate::common::Server;

/// The process's resident memory now and at its peak since the last [`reset_peak`], in MiB.
pub fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{name} in /proc/self/status"))
            / 1024.0
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Sets the peak resident memory back to what is resident now (Linux: `clear_refs` 5).
pub fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("the peak can be reset");
}

/// The CPU time the process has used so far, on every thread.
pub fn cpu_time() -> Duration {
    // utime and stime are the 14th and 15th fields of `/proc/self/stat`.
    stat_ticks(11)
}

/// The CPU time this process's reader processes have used, on every thread, once they ended.
pub fn children_cpu_time() -> Duration {
    // cutime and cstime are the 16th and 17th fields.
    stat_ticks(13)
}

/// The sum of the two fields from `first` on of `/proc/self/stat`, counted after the command's
/// closing parenthesis, in clock ticks of 1/100 s.
fn stat_ticks(first: usize) -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields[first].parse::<u64>().expect("ticks")
        + fields[first + 1].parse::<u64>().expect("ticks");
    Duration::from_millis(ticks * 10)
}

/// Runs `attack` with the peak reset before it and returns how far the peak rose above what was
/// resident before, in MiB.
pub async fn peak_growth<F: Future>(attack: F) -> (F::Output, f64) {
    reset_peak();
    let (before, _) = memory();
    let output = attack.await;
    let (_, peak) = memory();
    (output, peak - before)
}

pub async fn upload(
    server: &Server,
    filename: impl Into<String>,
    bytes: impl Into<reqwest::Body>,
) -> (u16, Value) {
    let response = server
        .client
        .post(server.url("/api/attachments"))
        .query(&[("filename", filename.into())])
        .body(bytes)
        .send()
        .await
        .expect("upload sent");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

pub async fn attachment(server: &Server, id: &str) -> Attachment {
    server
        .client
        .get(server.url(&format!("/api/attachments/{id}")))
        .send()
        .await
        .expect("read")
        .json()
        .await
        .expect("attachment")
}

/// Deflate's bit order: values from their lowest bit, Huffman codes from their highest.
#[derive(Default)]
pub struct Bits {
    out: Vec<u8>,
    pending: u32,
    count: u32,
}

impl Bits {
    pub fn put(&mut self, value: u32, count: u32) {
        for bit in 0..count {
            self.pending |= ((value >> bit) & 1) << self.count;
            self.count += 1;
            if self.count == 8 {
                self.out.push(self.pending as u8);
                (self.pending, self.count) = (0, 0);
            }
        }
    }

    pub fn code(&mut self, code: u32, length: u32) {
        let reversed = code.reverse_bits() >> (32 - length);
        self.put(reversed, length);
    }

    pub fn finish(mut self) -> Vec<u8> {
        if self.count > 0 {
            self.out.push(self.pending as u8);
        }
        self.out
    }
}

/// A PDF of `pages` pages in one flat page tree, each showing the same line of text from one
/// shared content stream, written by hand so it is made in milliseconds.
pub fn pdf_of_pages(pages: usize) -> Vec<u8> {
    pdf_of_pages_padded(pages, 0)
}

/// [`pdf_of_pages`] with `padding` bytes more in each page's object (a comment), to make a
/// larger file of the same pages.
pub fn pdf_of_pages_padded(pages: usize, padding: usize) -> Vec<u8> {
    let mut pdf = PdfWriter::default();
    let content = "BT /F1 12 Tf 72 720 Td (A page of a very long document) Tj ET";
    let first_page = 5;
    let kids: String = (first_page..first_page + pages)
        .map(|n| format!("{n} 0 R "))
        .collect();
    pdf.object(b"<< /Type /Catalog /Pages 2 0 R >>");
    pdf.object(
        format!(
            "<< /Type /Pages /Kids [{kids}] /Count {pages} /Resources << /Font << /F1 3 0 R >> >> >>"
        )
        .as_bytes(),
    );
    pdf.object(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    pdf.object(
        format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len() + 1
        )
        .as_bytes(),
    );
    let page = format!(
        "<< /Type /Page /Parent 2 0 R /Contents 4 0 R >>\n%{}",
        "p".repeat(padding)
    );
    for _ in 0..pages {
        pdf.object(page.as_bytes());
    }
    pdf.finish()
}

/// A PDF written object by object, numbered from 1, the first its catalog.
struct PdfWriter {
    out: Vec<u8>,
    offsets: Vec<usize>,
}

impl Default for PdfWriter {
    fn default() -> Self {
        PdfWriter {
            out: b"%PDF-1.4\n".to_vec(),
            offsets: Vec::new(),
        }
    }
}

impl PdfWriter {
    fn object(&mut self, body: &[u8]) {
        self.offsets.push(self.out.len());
        let number = self.offsets.len();
        self.out
            .extend_from_slice(format!("{number} 0 obj\n").as_bytes());
        self.out.extend_from_slice(body);
        self.out.extend_from_slice(b"\nendobj\n");
    }

    /// The file: its objects, their cross-reference table and the trailer.
    fn finish(mut self) -> Vec<u8> {
        let xref = self.out.len();
        let size = self.offsets.len() + 1;
        self.out
            .extend_from_slice(format!("xref\n0 {size}\n0000000000 65535 f \n").as_bytes());
        for offset in &self.offsets {
            self.out
                .extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
        }
        self.out.extend_from_slice(
            format!("trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n")
                .as_bytes(),
        );
        self.out
    }
}

/// A zlib stream of `start`, then `period` repeated to `total` bytes in all or a little more, in
/// about 4 bits for every 258 bytes after the first period (about 1 : 500): `start` and the period
/// as a stored block, then one block of dynamic codes holding only "copy 258 bytes from 16 back"
/// (the period's length: another would need other distance codes) and its end.
pub fn deflate_repeating(start: &[u8], period: &[u8; 16], total: u64) -> Vec<u8> {
    let stored = [start, period].concat();
    let stored_length = u16::try_from(stored.len()).expect("a short start");
    let copies = total.saturating_sub(stored.len() as u64).div_ceil(258);
    let mut bits = Bits::default();
    // The period, stored: not the last block, type 0, aligned, its length and the length's
    // complement, the bytes.
    bits.put(0, 1);
    bits.put(0, 2);
    let mut zlib = vec![0x78, 0x01];
    zlib.extend(std::mem::take(&mut bits).finish());
    zlib.extend_from_slice(&stored_length.to_le_bytes());
    zlib.extend_from_slice(&(!stored_length).to_le_bytes());
    zlib.extend_from_slice(&stored);
    // The copies: the last block, dynamic codes. Literal/length codes: 286 lengths (HLIT 29),
    // distance codes: 8 (HDIST 7), code-length codes: 18 in the format's order (HCLEN 14).
    bits.put(1, 1);
    bits.put(2, 2);
    bits.put(29, 5);
    bits.put(7, 5);
    bits.put(14, 4);
    // The code-length code: 18 (runs of zeros) in 1 bit, 1 and 17 (short runs of zeros) in 2,
    // given in the order 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1.
    for length in [0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2] {
        bits.put(length, 3);
    }
    let (one, short_zeros, zeros) = ((0b10, 2), (0b11, 2), (0, 1));
    // Literal/length lengths: 256 zeros, the end of block (256) in 1 bit, 28 zeros, length 258
    // (285) in 1 bit; distance lengths: code 0 in 1 bit, 6 zeros, code 7 in 1 bit.
    bits.code(zeros.0, zeros.1);
    bits.put(138 - 11, 7);
    bits.code(zeros.0, zeros.1);
    bits.put(118 - 11, 7);
    bits.code(one.0, one.1);
    bits.code(zeros.0, zeros.1);
    bits.put(28 - 11, 7);
    bits.code(one.0, one.1);
    bits.code(one.0, one.1);
    bits.code(short_zeros.0, short_zeros.1);
    bits.put(6 - 3, 3);
    bits.code(one.0, one.1);
    // Each copy: length 258 is code 1, distance code 7 is code 1, its extra bits 3 (16 = 13 + 3).
    for _ in 0..copies {
        bits.code(1, 1);
        bits.code(1, 1);
        bits.put(3, 2);
    }
    bits.code(0, 1);
    zlib.extend(bits.finish());
    // Adler-32, the repeats a period at a time: a period adds its byte sum to `a`, and to `b`
    // sixteen times `a` before it plus its bytes weighted by how many of its positions follow
    // each.
    let (mut a, mut b) = (1u64, 0u64);
    for &byte in start {
        a = (a + u64::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    let length = 16 + copies * 258;
    let sum: u64 = period.iter().map(|&byte| u64::from(byte)).sum();
    let weighted: u64 = (0u64..)
        .zip(period)
        .map(|(i, &byte)| (16 - i) * u64::from(byte))
        .sum();
    for _ in 0..length / 16 {
        b = (b + 16 * a + weighted) % 65_521;
        a = (a + sum) % 65_521;
    }
    for &byte in &period[..(length % 16) as usize] {
        a = (a + u64::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend_from_slice(&(((b << 16) | a) as u32).to_be_bytes());
    zlib
}

/// A one-page PDF whose page's content is the zlib stream `content`, with a Helvetica font.
pub fn pdf_of_one_page(content: &[u8]) -> Vec<u8> {
    let mut pdf = PdfWriter::default();
    pdf.object(b"<< /Type /Catalog /Pages 2 0 R >>");
    pdf.object(b"<< /Type /Pages /Kids [4 0 R] /Count 1 /Resources << /Font << /F1 3 0 R >> >> >>");
    pdf.object(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    pdf.object(b"<< /Type /Page /Parent 2 0 R /Contents 5 0 R >>");
    let mut stream = format!(
        "<< /Length {} /Filter /FlateDecode >>\nstream\n",
        content.len()
    )
    .into_bytes();
    stream.extend_from_slice(content);
    stream.extend_from_slice(b"\nendstream");
    pdf.object(&stream);
    pdf.finish()
}
