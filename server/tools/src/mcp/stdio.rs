//! Starting a stdio server: its program with the configured arguments, in a cleared
//! environment plus the configured variables, its output read through [`CappedLines`] so that
//! no message larger than the cap is ever held.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The last line a server wrote on its standard error, kept to say why it failed.
pub type LastWords = Arc<Mutex<String>>;

/// The most of a stderr line kept in [`LastWords`], in bytes.
const LAST_WORDS_BYTES: usize = 500;

/// A started server: the process, its pipes, and its last words on standard error.
#[derive(Debug)]
pub struct Started {
    pub child: Child,
    pub stdout: CappedLines<ChildStdout>,
    pub stdin: ChildStdin,
    pub last_words: LastWords,
}

/// Starts `command` with `args` in `cwd`, with only `env` in its environment. The process is
/// killed when the returned child is dropped.
pub fn start(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
    max_line: usize,
) -> io::Result<Started> {
    let mut child = Command::new(command)
        .args(args)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("no stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no stdout"))?;
    let last_words = LastWords::default();
    if let Some(stderr) = child.stderr.take() {
        let last_words = Arc::clone(&last_words);
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr);
            let mut line = Vec::new();
            // Reads in pieces, so that a line without end is never held whole.
            while let Ok(read) = lines.read_until(b'\n', &mut line).await {
                if read == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&line[..line.len().min(LAST_WORDS_BYTES)]);
                let text = text.trim();
                if !text.is_empty() {
                    *last_words.lock().expect("last words") = text.to_string();
                }
                line.clear();
            }
        });
    }
    Ok(Started {
        child,
        stdout: CappedLines::new(stdout, max_line),
        stdin,
        last_words,
    })
}

/// A reader that fails once a line grows past `max` bytes: the connection's reader then ends,
/// the pending calls fail, and the portal never holds more of one message than `max`.
#[derive(Debug)]
pub struct CappedLines<R> {
    inner: R,
    max: usize,
    line: usize,
    /// Set once a line passed the cap, for saying why the connection ended.
    pub tripped: Arc<AtomicBool>,
}

impl<R> CappedLines<R> {
    pub fn new(inner: R, max: usize) -> Self {
        CappedLines {
            inner,
            max,
            line: 0,
            tripped: Arc::default(),
        }
    }
}

/// The error a [`CappedLines`] fails with; its text names the cap.
pub fn oversized(max: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the server sent a message larger than {max} bytes"),
    )
}

impl<R: AsyncRead + Unpin> AsyncRead for CappedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.line > self.max {
            return Poll::Ready(Err(oversized(self.max)));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let mut longest = this.line;
            for &byte in &buf.filled()[before..] {
                this.line = if byte == b'\n' { 0 } else { this.line + 1 };
                longest = longest.max(this.line);
            }
            if longest > this.max {
                // A failed read hands nothing over.
                buf.set_filled(before);
                this.line = longest;
                this.tripped.store(true, Ordering::Relaxed);
                return Poll::Ready(Err(oversized(this.max)));
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn a_line_past_the_cap_fails_and_shorter_lines_pass() {
        for (input, max, passes) in [
            (&b"{}\n{}\n"[..], 4, true),
            (&b"12345\n"[..], 5, true),
            (&b"123456\n"[..], 5, false),
            (&b"123\n456\n789\n"[..], 3, true),
        ] {
            let mut reader = CappedLines::new(input, max);
            let mut all = Vec::new();
            let read = reader.read_to_end(&mut all).await;
            assert_eq!(read.is_ok(), passes, "{input:?} under {max}");
        }
    }
}
