//! Frames on a byte stream or a message stream, for both ends of the
//! socket protocol (`protocol::wire`): one JSON object per frame. On a
//! Unix socket (or any byte stream) a frame is one `\n`-terminated line
//! ([`lines`]); a WebSocket carries one frame per text message and
//! implements [`FrameReader`] / [`FrameWriter`] itself. The client
//! (`super::client`) and the server (`surfaces::gateway`) speak only
//! through these two traits, so a new transport plugs into both.

use std::io;

use futures_util::future::BoxFuture;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Reads whole frames (the JSON text, without its newline).
pub trait FrameReader: Send {
    /// The next frame; `Ok(None)` when the peer closed the stream.
    /// A frame longer than the reader's bound is an `InvalidData` error.
    /// Cancel-safe: a frame is taken only when it is returned.
    fn read_frame(&mut self) -> BoxFuture<'_, io::Result<Option<String>>>;
}

/// Writes frames; [`FrameWriter::flush`] sends what was written.
pub trait FrameWriter: Send {
    /// Queues one frame (`frame` holds no newline: it is serialized JSON).
    fn write_frame<'a>(&'a mut self, frame: &'a str) -> BoxFuture<'a, io::Result<()>>;
    fn flush(&mut self) -> BoxFuture<'_, io::Result<()>>;
}

/// One connection's two halves.
pub struct Framed {
    pub reader: Box<dyn FrameReader>,
    pub writer: Box<dyn FrameWriter>,
}

/// A byte stream's halves as newline-delimited frames; a line longer than
/// `max_frame` bytes is an error (a line without end must not grow the
/// reader).
pub fn lines<R, W>(read: R, write: W, max_frame: usize) -> Framed
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    Framed {
        reader: Box::new(LineReader {
            inner: BufReader::new(read),
            pending: Vec::new(),
            max_frame,
        }),
        writer: Box::new(LineWriter {
            inner: tokio::io::BufWriter::new(write),
        }),
    }
}

struct LineReader<R> {
    inner: BufReader<R>,
    /// The part of a line read before a cancelled call.
    pending: Vec<u8>,
    max_frame: usize,
}

impl<R: AsyncRead + Send + Unpin> LineReader<R> {
    async fn next_line(&mut self) -> io::Result<Option<String>> {
        loop {
            // One byte more than the bound: a line that reaches it is too long.
            let room = (self.max_frame + 1).saturating_sub(self.pending.len()) as u64;
            let read = (&mut self.inner)
                .take(room)
                .read_until(b'\n', &mut self.pending)
                .await?;
            if self.pending.last() == Some(&b'\n') {
                let mut line = std::mem::take(&mut self.pending);
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return String::from_utf8(line).map(Some).map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidData, "a frame is not UTF-8")
                });
            }
            if self.pending.len() > self.max_frame {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a frame is longer than {} bytes", self.max_frame),
                ));
            }
            if read == 0 {
                // End of stream; a last line without its newline is dropped
                // (a frame is complete only with it).
                return Ok(None);
            }
        }
    }
}

impl<R: AsyncRead + Send + Unpin> FrameReader for LineReader<R> {
    fn read_frame(&mut self) -> BoxFuture<'_, io::Result<Option<String>>> {
        Box::pin(self.next_line())
    }
}

struct LineWriter<W> {
    inner: tokio::io::BufWriter<W>,
}

impl<W: AsyncWrite + Send + Unpin> FrameWriter for LineWriter<W> {
    fn write_frame<'a>(&'a mut self, frame: &'a str) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            self.inner.write_all(frame.as_bytes()).await?;
            self.inner.write_all(b"\n").await
        })
    }

    fn flush(&mut self) -> BoxFuture<'_, io::Result<()>> {
        Box::pin(self.inner.flush())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_round_trip_and_a_long_line_is_an_error() {
        let (a, b) = tokio::io::duplex(1 << 16);
        let (ar, aw) = tokio::io::split(a);
        let (br, bw) = tokio::io::split(b);
        let mut left = lines(ar, aw, 16);
        let mut right = lines(br, bw, 16);
        left.writer.write_frame("{\"a\":1}").await.unwrap();
        left.writer.write_frame("").await.unwrap();
        left.writer.write_frame("{\"b\":2}").await.unwrap();
        left.writer.write_frame(&"x".repeat(17)).await.unwrap();
        left.writer.flush().await.unwrap();
        let r = &mut right.reader;
        assert_eq!(r.read_frame().await.unwrap().unwrap(), "{\"a\":1}");
        assert_eq!(r.read_frame().await.unwrap().unwrap(), "{\"b\":2}");
        let err = r.read_frame().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        drop(left);
        let _ = right.writer.flush().await;
    }

    #[tokio::test]
    async fn a_closed_stream_ends_the_frames() {
        let (a, b) = tokio::io::duplex(1024);
        let (br, bw) = tokio::io::split(b);
        let mut right = lines(br, bw, 1024);
        drop(a);
        assert!(right.reader.read_frame().await.unwrap().is_none());
    }
}
