//! Reading PDFs in reader processes: the portal's own program run as `portal read-pdf`, one
//! process a document, a few at once over the whole server (docs/security.md, "Limits").
//!
//! **Decision:** a PDF is parsed in a process of its own rather than on a thread of the server.
//! lopdf parses the whole object graph of a file before its first page is read, and that graph
//! can take twenty and more times the file's size (object streams, each decompressed within
//! its bound, may be many); nothing inside lopdf can bound it. A reader process's data segment is
//! capped by the system (`RLIMIT_DATA`), so an allocation past the cap fails there and ends that
//! process, not the server; its CPU time is capped too, and all of its memory goes back to the
//! system when it exits, whatever the allocator keeps. The server keeps what the reader reports
//! page by page, so a reader that ends early leaves the pages it read.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use portal_core::attachment::{Document, ReadingLimit};
use thiserror::Error;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::pdf::{PdfLimits, Progress, Reading, read_pages};

/// The reader processes of one server: the program to run, the limits each reads within, and
/// the places that bound how many read at once.
#[derive(Debug, Clone)]
pub struct PdfReaders {
    program: PathBuf,
    limits: PdfLimits,
    places: Arc<Semaphore>,
}

/// One of the server's places for reading a PDF, held while it reads.
#[derive(Debug)]
pub struct ReaderPlace {
    program: PathBuf,
    limits: PdfLimits,
    _place: OwnedSemaphorePermit,
}

/// The program this process runs: on Linux its executable as the system holds it open, so a
/// binary replaced on disk during a deploy still reads with the version that serves.
pub fn this_program() -> PathBuf {
    let proc_self = Path::new("/proc/self/exe");
    if proc_self.exists() {
        return proc_self.to_path_buf();
    }
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("portal"))
}

impl PdfReaders {
    /// Readers running `program` (the `portal` binary) within `limits`, `places` at once.
    pub fn new(program: PathBuf, limits: PdfLimits, places: usize) -> Self {
        PdfReaders {
            program,
            limits,
            places: Arc::new(Semaphore::new(places)),
        }
    }

    /// Waits for a place to read in.
    pub async fn place(&self) -> ReaderPlace {
        let place = Arc::clone(&self.places)
            .acquire_owned()
            .await
            .expect("the readers' semaphore is never closed");
        ReaderPlace {
            program: self.program.clone(),
            limits: self.limits,
            _place: place,
        }
    }
}

/// Why the server stopped listening to a reader process.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// Its reports are taken: reading is finished, stopped at a limit or failed.
    Decided,
    /// It closed its output: it exited, well or not.
    Exited,
    /// Its time ran out.
    OutOfTime,
    /// It sent a report past the text limit or not in the protocol.
    Overran,
}

impl ReaderPlace {
    /// Reads the PDF `bytes` of `document` in a reader process and returns it finished (or
    /// failed), handing its progress to `progress` as [`Progress`] says. Blocking: run it off the
    /// async threads.
    pub fn read(
        &self,
        document: &Document,
        bytes: &[u8],
        progress: impl FnMut(&Document),
    ) -> Document {
        self.read_folded(document, bytes, progress).finish()
    }

    /// Reads as [`ReaderPlace::read`] does, and answers each page's text too, page 1 first
    /// (empty for a page without text).
    pub fn read_pages(&self, document: &Document, bytes: &[u8]) -> (Document, Vec<String>) {
        self.read_folded(document, bytes, |_| {})
            .finish_with_pages()
    }

    fn read_folded(
        &self,
        document: &Document,
        bytes: &[u8],
        mut progress: impl FnMut(&Document),
    ) -> Progress {
        let mut folded = Progress::new(document, &self.limits);
        let limits = serde_json::to_string(&self.limits).expect("limits serialise");
        let child = Command::new(&self.program)
            .arg0("portal")
            .args(["read-pdf", "--limits", &limits])
            // A reader parses untrusted files; it gets no database password.
            .env_remove(portal_store::PASSWORD_VARIABLE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(error) => {
                tracing::warn!(
                    "document {}: the PDF reader {} could not start: {error}",
                    document.id,
                    self.program.display()
                );
                folded.fail();
                return folded;
            }
        };
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            unreachable!("both pipes were asked for");
        };
        // Parsing may take as long as reading: the reader stops itself `time` after parsing, and
        // is stopped here if it has not ended a few seconds after that.
        let allowed = (self.limits.time.saturating_mul(2) + Duration::from_secs(5))
            .min(Duration::from_secs(24 * 60 * 60));
        let deadline = Instant::now() + allowed;
        let line_limit = self.limits.text_bytes.saturating_mul(2) + 1024;
        let ended = std::thread::scope(|scope| {
            // The file goes in on a thread of its own, so a reader that stops early (or never
            // reads) cannot hold this one.
            scope.spawn(move || {
                let _ = stdin.write_all(bytes);
            });
            let (sent, reports) = mpsc::sync_channel::<Option<Reading>>(16);
            scope.spawn(move || {
                let mut stdout = BufReader::new(stdout);
                loop {
                    let mut line = Vec::new();
                    let read = (&mut stdout)
                        .take(line_limit as u64)
                        .read_until(b'\n', &mut line);
                    match read {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let report = serde_json::from_slice::<Reading>(&line).ok();
                            let broken = report.is_none();
                            if sent.send(report).is_err() || broken {
                                break;
                            }
                        }
                    }
                }
            });
            let ended = loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match reports.recv_timeout(left) {
                    Ok(Some(report)) => {
                        if !folded.take(report, &mut progress) {
                            break Ended::Decided;
                        }
                    }
                    Ok(None) => break Ended::Overran,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break Ended::Exited,
                    Err(mpsc::RecvTimeoutError::Timeout) => break Ended::OutOfTime,
                }
            };
            // A reader still running is stopped, so the threads above see their pipes close.
            if ended != Ended::Exited {
                let _ = child.kill();
            }
            ended
        });
        let status = child.wait();
        match ended {
            Ended::Decided => {}
            Ended::OutOfTime => folded.stop(ReadingLimit::Time),
            Ended::Overran => folded.stop(ReadingLimit::Memory),
            // A reader that closed its output without a last report died: of a limit, where its
            // exit says which, or of a fault, which fails the document after the pages read.
            Ended::Exited => match status {
                Ok(status) if status.success() => {}
                Ok(status) => match limit_of(status) {
                    Some(limit) => folded.stop(limit),
                    None => folded.fail(),
                },
                Err(_) => folded.fail(),
            },
        }
        folded
    }
}

/// Which limit a reader's exit status shows it reached: an allocation refused past its memory
/// aborts it, its CPU time past the limit sends it `SIGXCPU`.
fn limit_of(status: std::process::ExitStatus) -> Option<ReadingLimit> {
    const SIGABRT: i32 = 6;
    const SIGKILL: i32 = 9;
    const SIGXCPU: i32 = 24;
    match status.signal()? {
        SIGABRT | SIGKILL => Some(ReadingLimit::Memory),
        SIGXCPU => Some(ReadingLimit::Time),
        _ => None,
    }
}

/// Why `portal read-pdf` could not read.
#[derive(Debug, Error)]
pub enum ReaderError {
    #[error("`portal read-pdf` is run by `portal serve` with its limits, not by hand: {0}")]
    Limits(serde_json::Error),
    #[error("the reader's limits could not be set: {0}")]
    SetLimit(std::io::Error),
    #[error("the PDF could not be read from standard input: {0}")]
    Input(std::io::Error),
}

/// `portal read-pdf --limits JSON`: caps this process's memory and CPU time as `limits` say,
/// reads a PDF from standard input and writes one [`Reading`] a line to standard output.
pub fn run_reader(limits: &str) -> Result<(), ReaderError> {
    let limits: PdfLimits = serde_json::from_str(limits).map_err(ReaderError::Limits)?;
    rlimit::setrlimit(
        rlimit::Resource::DATA,
        limits.memory_bytes,
        limits.memory_bytes,
    )
    .map_err(ReaderError::SetLimit)?;
    let cpu = limits.time.as_secs().saturating_mul(2).saturating_add(5);
    rlimit::setrlimit(rlimit::Resource::CPU, cpu, cpu).map_err(ReaderError::SetLimit)?;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(ReaderError::Input)?;
    let mut out = std::io::stdout().lock();
    read_pages(&bytes, &limits, |reading| {
        let mut line = serde_json::to_vec(&reading).expect("a report serialises");
        line.push(b'\n');
        // The server gone, there is no one to read for.
        out.write_all(&line).and_then(|()| out.flush()).is_ok()
    });
    Ok(())
}
