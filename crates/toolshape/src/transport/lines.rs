//! Reading newline-delimited messages with a size limit.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// What the next line held.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    /// One message (without its line ending).
    Message(&'a [u8]),
    /// A line longer than the limit, told as soon as it passes the limit (a
    /// sender that never ends the line cannot hold its answer back); the
    /// next read skips the rest of it. Holds its first bytes, enough to find
    /// a JSON-RPC id.
    TooLong(&'a [u8]),
    /// The stream ended.
    Eof,
}

/// How much of an over-long line is kept.
const PREFIX_BYTES: usize = 512;

/// Reads lines of at most `max` bytes from a buffered reader, reusing one buffer.
pub(crate) struct LineReader<R> {
    reader: R,
    max: usize,
    line: Vec<u8>,
    /// The rest of an over-long line is still to be skipped.
    skipping: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        LineReader {
            reader,
            max,
            line: Vec::new(),
            skipping: false,
        }
    }

    /// The next non-blank line. Cancel-safe only between lines: do not race it.
    pub(crate) async fn next(&mut self) -> io::Result<Line<'_>> {
        loop {
            if self.skipping && !self.skip_rest().await? {
                return Ok(Line::Eof);
            }
            self.line.clear();
            let ended = loop {
                let available = self.reader.fill_buf().await?;
                if available.is_empty() {
                    break true;
                }
                let (chunk, consumed, done) = match memchr::memchr(b'\n', available) {
                    Some(end) => (&available[..end], end + 1, true),
                    None => (available, available.len(), false),
                };
                if self.line.len() + chunk.len() > self.max {
                    // The line's first bytes, however the input was chunked.
                    let cap = PREFIX_BYTES.min(self.max);
                    let keep = cap.saturating_sub(self.line.len()).min(chunk.len());
                    self.line.truncate(cap);
                    self.line.extend_from_slice(&chunk[..keep]);
                    self.reader.consume(consumed);
                    self.skipping = !done;
                    return Ok(Line::TooLong(&self.line));
                }
                self.line.extend_from_slice(chunk);
                self.reader.consume(consumed);
                if done {
                    break false;
                }
            };
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            if self.line.iter().all(u8::is_ascii_whitespace) {
                if ended {
                    return Ok(Line::Eof);
                }
                continue;
            }
            return Ok(Line::Message(&self.line));
        }
    }

    /// Skips input up to the end of the current line: false if the input
    /// ended first.
    async fn skip_rest(&mut self) -> io::Result<bool> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            match memchr::memchr(b'\n', available) {
                Some(end) => {
                    self.reader.consume(end + 1);
                    self.skipping = false;
                    return Ok(true);
                }
                None => {
                    let all = available.len();
                    self.reader.consume(all);
                }
            }
        }
    }
}

/// The `id` of a JSON-RPC message from its first bytes, when it comes early
/// enough: only a member of the top-level object counts, never an `"id"`
/// nested in `params` or `result` (answering with that one would match the
/// wrong request).
pub(crate) fn leading_id(prefix: &[u8]) -> Option<toolshape_protocol::RequestId> {
    let text = match std::str::from_utf8(prefix) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&prefix[..error.valid_up_to()]).ok()?,
    };
    let mut rest = text.trim_start().strip_prefix('{')?;
    loop {
        let (key, after) = next_value::<String>(rest)?;
        let after = after.trim_start().strip_prefix(':')?;
        if key == "id" {
            let (id, after) = next_value::<toolshape_protocol::RequestId>(after)?;
            // A value that runs to the end of the prefix may have been cut.
            return (!after.trim_start().is_empty()).then_some(id);
        }
        let (_, after) = next_value::<serde::de::IgnoredAny>(after)?;
        rest = after.trim_start().strip_prefix(',')?;
    }
}

/// The JSON value at the start of `text`, and what follows it.
fn next_value<T: serde::de::DeserializeOwned>(text: &str) -> Option<(T, &str)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, text.get(values.byte_offset()..)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn splits_lines_and_skips_long_ones() {
        let input: &[u8] = b"{\"a\":1}\r\n\n   \n0123456789012345\n{\"b\":2}\n{\"c\":3}";
        let mut lines = LineReader::new(tokio::io::BufReader::with_capacity(4, input), 10);
        assert_eq!(lines.next().await.ok(), Some(Line::Message(b"{\"a\":1}")));
        assert_eq!(lines.next().await.ok(), Some(Line::TooLong(b"0123456789")));
        assert_eq!(lines.next().await.ok(), Some(Line::Message(b"{\"b\":2}")));
        assert_eq!(lines.next().await.ok(), Some(Line::Message(b"{\"c\":3}")));
        assert_eq!(lines.next().await.ok(), Some(Line::Eof));
    }

    #[tokio::test]
    async fn tells_an_over_long_line_before_it_ends() {
        let (mut writer, reader) = tokio::io::duplex(64);
        let mut lines = LineReader::new(tokio::io::BufReader::new(reader), 10);
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"{\"id\":1,\"x\":\"")
            .await
            .unwrap();
        // The line has not ended, and may never: it is told at once.
        assert_eq!(
            lines.next().await.ok(),
            Some(Line::TooLong(b"{\"id\":1,\"x".as_slice()))
        );
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"yyyy\"}\n{\"b\":2}\n")
            .await
            .unwrap();
        assert_eq!(lines.next().await.ok(), Some(Line::Message(b"{\"b\":2}")));
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"0123456789abc")
            .await
            .unwrap();
        assert_eq!(lines.next().await.ok(), Some(Line::TooLong(b"0123456789")));
        drop(writer);
        assert_eq!(lines.next().await.ok(), Some(Line::Eof));
    }

    #[test]
    fn finds_the_leading_id() {
        use toolshape_protocol::RequestId;
        assert_eq!(
            leading_id(br#"{"jsonrpc":"2.0","id": 42,"result":{"content":[{"#),
            Some(RequestId::Number(42))
        );
        assert_eq!(
            leading_id(br#"{"id":"a-1","jsonrpc""#),
            Some(RequestId::String("a-1".into()))
        );
        assert_eq!(leading_id(br#"{"jsonrpc":"2.0","result":{"text":"#), None);
        // Only the top-level member counts.
        assert_eq!(
            leading_id(br#"{"jsonrpc":"2.0","method":"x","params":{"id":3,"a":"#),
            None
        );
        assert_eq!(
            leading_id(br#"{"params":{"id":3},"id":[1],"x":"#),
            None,
            "a malformed id is no id"
        );
        assert_eq!(
            leading_id(br#" { "params" : { "id" : 3 } , "id" : 8 , "x":"#),
            Some(RequestId::Number(8))
        );
        // A number that reaches the end of the prefix may be cut short.
        assert_eq!(leading_id(br#"{"id":12"#), None);
    }
}
