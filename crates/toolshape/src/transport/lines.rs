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

/// How much of an over-long message is kept: enough for [`leading`].
pub(crate) const PREFIX_BYTES: usize = 512;

/// Reads lines of at most `max` bytes from a buffered reader, reusing one buffer.
pub(crate) struct LineReader<R> {
    reader: R,
    max: usize,
    line: Vec<u8>,
    /// The rest of an over-long line is still to be skipped.
    skipping: bool,
    /// `line` holds the start of a line a dropped read had taken: the next
    /// read goes on with it.
    partial: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        LineReader {
            reader,
            max,
            line: Vec::new(),
            skipping: false,
            partial: false,
        }
    }

    /// The next non-blank line. Cancel-safe: what a dropped read took of a
    /// line is kept, and the next read goes on from it (the only wait is for
    /// more input, after which everything is taken at once).
    pub(crate) async fn next(&mut self) -> io::Result<Line<'_>> {
        loop {
            if self.skipping && !self.skip_rest().await? {
                return Ok(Line::Eof);
            }
            if !self.partial {
                self.line.clear();
                self.partial = true;
            }
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
                    self.partial = false;
                    return Ok(Line::TooLong(&self.line));
                }
                self.line.extend_from_slice(chunk);
                self.reader.consume(consumed);
                if done {
                    break false;
                }
            };
            self.partial = false;
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

/// What the first bytes of an over-long JSON-RPC message tell of it: only
/// members of the top-level object count, never an `"id"` or `"method"`
/// nested in `params` or `result` (answering with that one would match the
/// wrong request).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Leading {
    /// Its `id`, when it comes whole within the first bytes.
    pub(crate) id: Option<toolshape_protocol::RequestId>,
    /// Whether it is a request or a response, by the members seen.
    pub(crate) kind: LeadingKind,
}

/// What an over-long message is, by its top-level members seen.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LeadingKind {
    /// Neither `method` nor `result` or `error` came early enough (or
    /// both did).
    #[default]
    Unknown,
    /// It has a `method`: a request (with an id) or a notification.
    Request,
    /// It has a `result` or an `error`: an answer to the reader's request.
    Response,
}

impl LeadingKind {
    /// The kind a top-level member named `key` tells, if any.
    fn told_by(key: &str) -> Option<LeadingKind> {
        match key {
            "method" => Some(LeadingKind::Request),
            "result" | "error" => Some(LeadingKind::Response),
            _ => None,
        }
    }
}

/// Reads what `prefix`, the first bytes of an over-long message, tells of it.
pub(crate) fn leading(prefix: &[u8]) -> Leading {
    let text = match std::str::from_utf8(prefix) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&prefix[..error.valid_up_to()]).unwrap_or_default(),
    };
    let mut leading = Leading::default();
    let mut seen_kind = LeadingKind::Unknown;
    let mut conflicting = false;
    let Some(mut rest) = text.trim_start().strip_prefix('{') else {
        return leading;
    };
    while let Some((key, after)) = next_value::<String>(rest) {
        // A member's name tells its kind even when its value is cut.
        if let Some(told) = LeadingKind::told_by(&key) {
            if seen_kind == LeadingKind::Unknown {
                seen_kind = told;
            }
            conflicting |= told != seen_kind;
        }
        let Some(after) = after.trim_start().strip_prefix(':') else {
            break;
        };
        let after = if key == "id" && leading.id.is_none() {
            match next_value::<toolshape_protocol::RequestId>(after) {
                // A value that runs to the end of the prefix may have been cut.
                Some((id, after)) if !after.trim_start().is_empty() => {
                    leading.id = Some(id);
                    after
                }
                _ => break,
            }
        } else {
            match next_value::<serde::de::IgnoredAny>(after) {
                Some((_, after)) => after,
                None => break,
            }
        };
        match after.trim_start().strip_prefix(',') {
            Some(next) => rest = next,
            None => break,
        }
    }
    if !conflicting {
        leading.kind = seen_kind;
    }
    leading
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

    /// A read dropped in the middle of a line (a stop raced it) loses
    /// nothing: the next read gives the whole line, not its tail.
    #[tokio::test]
    async fn a_dropped_read_keeps_what_it_took() {
        let (mut writer, reader) = tokio::io::duplex(64);
        let mut lines = LineReader::new(tokio::io::BufReader::new(reader), 100);
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"{\"id\":1,")
            .await
            .unwrap();
        let pending = tokio::time::timeout(std::time::Duration::from_millis(20), lines.next());
        assert!(pending.await.is_err(), "the line has not ended");
        tokio::io::AsyncWriteExt::write_all(&mut writer, b"\"m\":2}\n")
            .await
            .unwrap();
        assert_eq!(
            lines.next().await.ok(),
            Some(Line::Message(b"{\"id\":1,\"m\":2}".as_slice()))
        );
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

    fn leading_id(prefix: &[u8]) -> Option<toolshape_protocol::RequestId> {
        leading(prefix).id
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
    #[test]
    fn tells_a_request_from_a_response() {
        use toolshape_protocol::RequestId;
        let request = leading(
            br#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[{"#,
        );
        assert_eq!(request.id, Some(RequestId::Number(7)));
        assert_eq!(request.kind, LeadingKind::Request);
        // The member's name tells even when its value is cut.
        let response = leading(br#"{"id":"toolshape-3","jsonrpc":"2.0","result":{"con"#);
        assert_eq!(response.id, Some(RequestId::String("toolshape-3".into())));
        assert_eq!(response.kind, LeadingKind::Response);
        assert_eq!(
            leading(br#"{"jsonrpc":"2.0","error":{"code":-1,"data":"xx"#).kind,
            LeadingKind::Response
        );
        // A nested method tells nothing; nor do both kinds at once.
        let nested = leading(br#"{"jsonrpc":"2.0","id":1,"result":{"method":"x","text":"#);
        assert_eq!(nested.kind, LeadingKind::Response);
        assert_eq!(
            leading(br#"{"method":"x","id":2,"result":{"a"#).kind,
            LeadingKind::Unknown
        );
        assert_eq!(
            leading(br#"{"jsonrpc":"2.0","id":5,"x":"yyyy"#).kind,
            LeadingKind::Unknown
        );
        assert_eq!(leading(b"not json at all").kind, LeadingKind::Unknown);
        // The id may come after the member that tells the kind.
        let late = leading(br#"{"jsonrpc":"2.0","method":"ping","id":9,"params":{"a"#);
        assert_eq!(
            (late.id, late.kind),
            (Some(RequestId::Number(9)), LeadingKind::Request)
        );
    }
}
