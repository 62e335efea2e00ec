//! Server-sent events: reading an event stream incrementally, and writing events.

#[cfg(feature = "client-http")]
/// One event: its `event` name (if any), its `id` (if any) and its data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Event {
    pub(crate) event: Option<String>,
    pub(crate) id: Option<String>,
    pub(crate) data: String,
}

#[cfg(feature = "client-http")]
/// Splits an event stream into events as bytes arrive, with a size limit per event.
#[derive(Debug)]
pub(crate) struct EventReader {
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no line end: each byte is
    /// searched once, however many chunks a long line comes in.
    scanned: usize,
    current: Event,
    has_data: bool,
    max_event_bytes: usize,
    /// The last `retry:` field: how long to wait before reconnecting, in ms.
    retry: Option<u64>,
}

#[cfg(feature = "client-http")]
/// An event larger than the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge;

#[cfg(feature = "client-http")]
impl EventReader {
    pub(crate) fn new(max_event_bytes: usize) -> Self {
        EventReader {
            buffer: Vec::new(),
            scanned: 0,
            current: Event::default(),
            has_data: false,
            max_event_bytes,
            retry: None,
        }
    }

    /// The reconnection delay the stream last set (`retry:`), in milliseconds.
    pub(crate) fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Feeds bytes; returns the events they complete.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Event>, EventTooLarge> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(end) = memchr::memchr(b'\n', &self.buffer[from..]) {
            let mut line = &self.buffer[start..from + end];
            start = from + end + 1;
            from = start;
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let line = String::from_utf8_lossy(line).into_owned();
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
        }
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
        if self.buffer.len() + self.current.data.len() > self.max_event_bytes {
            return Err(EventTooLarge);
        }
        Ok(events)
    }

    fn line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            let event = std::mem::take(&mut self.current);
            let had_data = std::mem::replace(&mut self.has_data, false);
            return had_data.then_some(event);
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.current.event = Some(value.to_owned()),
            "id" => self.current.id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(feature = "server-http")]
/// One SSE event carrying a JSON-RPC message (which never holds a raw newline).
pub(crate) fn message_event(id: Option<&str>, json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len() + 32);
    out.extend_from_slice(b"event: message\n");
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    out
}

#[cfg(all(test, feature = "client-http", feature = "server-http"))]
mod tests {
    use super::*;

    #[test]
    fn reads_events_across_chunks() {
        let mut reader = EventReader::new(1024);
        let mut events = reader
            .feed(b": comment\nevent: message\nid: 1\ndata: {\"a\"")
            .unwrap_or_default();
        assert!(events.is_empty());
        events.extend(
            reader
                .feed(b":1}\r\n\r\ndata: x\ndata: y\n\nid: only-id\n\n")
                .unwrap_or_default(),
        );
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].data, "{\"a\":1}");
        assert_eq!(events[0].id.as_deref(), Some("1"));
        assert_eq!(events[1].data, "x\ny");
    }

    #[test]
    fn refuses_oversized_events() {
        let mut reader = EventReader::new(8);
        assert_eq!(reader.feed(b"data: 0123456789"), Err(EventTooLarge));
    }

    #[test]
    fn writes_what_it_reads() {
        let written = message_event(Some("7"), b"{\"x\":1}");
        let events = EventReader::new(100).feed(&written).unwrap_or_default();
        assert_eq!(events[0].data, "{\"x\":1}");
        assert_eq!(events[0].id.as_deref(), Some("7"));
    }
}
