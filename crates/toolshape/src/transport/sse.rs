//! Server-sent events: reading an event stream incrementally, and writing events.

#[cfg(feature = "client-http")]
use crate::transport::lines::PREFIX_BYTES;

#[cfg(feature = "client-http")]
/// How much of a line is read when it runs past the limit: its field's
/// name and the first [`PREFIX_BYTES`] of its value.
const LINE_HEAD_BYTES: usize = PREFIX_BYTES + 64;

#[cfg(feature = "client-http")]
/// One event: its `event` name (if any), its `id` (if any) and its data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Event {
    pub(crate) event: Option<String>,
    pub(crate) id: Option<String>,
    pub(crate) data: String,
    /// Whether the event is over the reader's limit: `data` then holds only
    /// its first [`PREFIX_BYTES`] (enough to tell what kind of message it
    /// is), and the event is handed out as soon as they are known, whether
    /// or not it ever ends; the rest is skipped unread.
    pub(crate) cut: bool,
}

#[cfg(feature = "client-http")]
/// How the event being read stands against the limit.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
enum Over {
    /// Within it.
    #[default]
    No,
    /// Over it: `data` holds the event's first bytes, and is `full` when it
    /// can take no more of them.
    Cut { full: bool },
    /// Over it and handed out, with the id it had then: only a later id
    /// is handed out still (an event of that id and no data).
    Reported { id: Option<String> },
}

#[cfg(feature = "client-http")]
/// Splits an event stream into events as bytes arrive, with a size limit
/// per event: an event over it is cut to its first bytes and the stream
/// goes on, holding no more than the limit and about a chunk at any time.
/// However the stream is cut into chunks, the same events come out.
#[derive(Debug)]
pub(crate) struct EventReader {
    buffer: Vec<u8>,
    /// How much of `buffer` is known to hold no line end: each byte is
    /// searched once, however many chunks a long line comes in.
    scanned: usize,
    current: Event,
    has_data: bool,
    over: Over,
    /// Whether the line being read ran past the limit: its head was read
    /// as a line of its own, and the rest up to its end is skipped.
    skipping_line: bool,
    max_event_bytes: usize,
    /// The last `retry:` field: how long to wait before reconnecting, in ms.
    retry: Option<u64>,
}

#[cfg(feature = "client-http")]
impl EventReader {
    pub(crate) fn new(max_event_bytes: usize) -> Self {
        EventReader {
            buffer: Vec::new(),
            scanned: 0,
            current: Event::default(),
            has_data: false,
            over: Over::No,
            skipping_line: false,
            max_event_bytes,
            retry: None,
        }
    }

    /// The reconnection delay the stream last set (`retry:`), in milliseconds.
    pub(crate) fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Feeds bytes; returns the events they complete, and an over-long
    /// event ([`cut`](Event::cut)) as soon as its first bytes are known.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(end) = memchr::memchr(b'\n', &self.buffer[from..]) {
            let line_end = from + end;
            // The end of a line whose head was read already.
            let skipped = std::mem::replace(&mut self.skipping_line, false);
            if !skipped {
                let mut line = &self.buffer[start..line_end];
                if line.last() == Some(&b'\r') {
                    line = &line[..line.len() - 1];
                }
                let line = String::from_utf8_lossy(line).into_owned();
                self.line(&line, &mut events);
            }
            start = line_end + 1;
            from = start;
        }
        self.buffer.drain(..start);
        if self.skipping_line {
            self.buffer.clear();
        }
        self.scanned = self.buffer.len();
        // The line still coming: a `data` line that takes the event over
        // the limit cuts it; a line longer than its head is worth, of a cut
        // event or of another field, has its head read now and the rest
        // skipped up to its end (what the whole line would have given).
        let data_so_far = partial_data_bytes(&self.buffer);
        if let Some(value) = data_so_far
            && self.over == Over::No
            && self.current.data.len() + usize::from(self.has_data) + value > self.max_event_bytes
        {
            self.cut();
            self.report(&mut events, false);
        }
        if self.buffer.len() > LINE_HEAD_BYTES && (self.over != Over::No || data_so_far.is_none()) {
            let head = head_text(&self.buffer[..LINE_HEAD_BYTES]);
            // Not `clear`: the buffer may have grown to the limit.
            self.buffer = Vec::new();
            self.scanned = 0;
            self.skipping_line = true;
            self.line(&head, &mut events);
        }
        events
    }

    /// Marks the current event as over the limit, keeping its first bytes.
    fn cut(&mut self) {
        self.current.cut = true;
        let data = &mut self.current.data;
        let full = data.len() > PREFIX_BYTES;
        let mut keep = PREFIX_BYTES.min(data.len());
        while !data.is_char_boundary(keep) {
            keep -= 1;
        }
        data.truncate(keep);
        data.shrink_to_fit();
        self.over = Over::Cut { full };
    }

    /// Hands out the cut event once its first bytes are all known: when
    /// they are `full`, or `line_done` (the line that cut it was read).
    fn report(&mut self, events: &mut Vec<Event>, line_done: bool) {
        if let Over::Cut { full } = self.over
            && (full || line_done)
        {
            let id = self.current.id.clone();
            events.push(Event {
                event: self.current.event.clone(),
                id: id.clone(),
                data: std::mem::take(&mut self.current.data),
                cut: true,
            });
            self.over = Over::Reported { id };
        }
    }

    /// Adds a `data:` line's value to the current event, up to the limit.
    fn push_data(&mut self, value: &str) {
        let had_data = std::mem::replace(&mut self.has_data, true);
        let data = &mut self.current.data;
        match self.over {
            Over::No => {
                if had_data {
                    data.push('\n');
                }
                data.push_str(value);
                if data.len() > self.max_event_bytes {
                    self.cut();
                }
            }
            Over::Cut { full: false } => {
                let mut room = PREFIX_BYTES.saturating_sub(data.len());
                let mut fits = true;
                if had_data {
                    match room {
                        0 => fits = false,
                        _ => {
                            data.push('\n');
                            room -= 1;
                        }
                    }
                }
                if fits {
                    let mut take = room.min(value.len());
                    while !value.is_char_boundary(take) {
                        take -= 1;
                    }
                    data.push_str(&value[..take]);
                    fits = take == value.len();
                }
                if !fits {
                    self.over = Over::Cut { full: true };
                }
            }
            Over::Cut { full: true } | Over::Reported { .. } => {}
        }
    }

    fn line(&mut self, line: &str, events: &mut Vec<Event>) {
        if line.is_empty() {
            let event = std::mem::take(&mut self.current);
            let had_data = std::mem::replace(&mut self.has_data, false);
            match std::mem::take(&mut self.over) {
                // Handed out already: only an id that came later.
                Over::Reported { id } if event.id != id => events.push(Event {
                    id: event.id,
                    ..Event::default()
                }),
                Over::Reported { .. } => {}
                Over::No | Over::Cut { .. } if had_data => events.push(event),
                Over::No | Over::Cut { .. } => {}
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        // Values over the kept prefix are not kept but data (an id cut
        // short would resume the wrong stream).
        let kept = value.len() <= PREFIX_BYTES;
        match field {
            "data" => {
                self.push_data(value);
                self.report(events, true);
            }
            "event" if kept => self.current.event = Some(value.to_owned()),
            "id" if kept => self.current.id = Some(value.to_owned()),
            "retry" if kept => {
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
    }
}

#[cfg(feature = "client-http")]
/// The bytes of value a `data` line not yet ended holds so far, if it is
/// one (a `\r` at its end may be the start of the line's end).
fn partial_data_bytes(line: &[u8]) -> Option<usize> {
    let value = line.strip_prefix(b"data:")?;
    let value = value.strip_prefix(b" ").unwrap_or(value);
    Some(value.strip_suffix(b"\r").unwrap_or(value).len())
}

#[cfg(feature = "client-http")]
/// The text of a line's first bytes, without a character cut at their end.
fn head_text(bytes: &[u8]) -> String {
    let whole = match std::str::from_utf8(bytes) {
        Err(error) if error.error_len().is_none() => &bytes[..error.valid_up_to()],
        _ => bytes,
    };
    String::from_utf8_lossy(whole).into_owned()
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
        let mut events = reader.feed(b": comment\nevent: message\nid: 1\ndata: {\"a\"");
        assert!(events.is_empty());
        events.extend(reader.feed(b":1}\r\n\r\ndata: x\ndata: y\n\nid: only-id\n\n"));
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].data, "{\"a\":1}");
        assert_eq!(events[0].id.as_deref(), Some("1"));
        assert_eq!(events[1].data, "x\ny");
    }

    /// Feeds `stream` in chunks of `chunk` bytes, checking that the reader
    /// never holds much more than its limit.
    fn feed_in_chunks(reader: &mut EventReader, stream: &[u8], chunk: usize) -> Vec<Event> {
        let mut events = Vec::new();
        for piece in stream.chunks(chunk) {
            events.extend(reader.feed(piece));
            let held = reader.buffer.len() + reader.current.data.len();
            assert!(
                held <= reader.max_event_bytes + LINE_HEAD_BYTES + chunk,
                "{held}"
            );
        }
        events
    }

    #[test]
    fn cuts_an_over_long_event_and_reads_on() {
        let mut stream = br#"event: message
id: 3
data: {"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":""#
            .to_vec();
        stream.extend(std::iter::repeat_n(b'a', 100_000));
        stream.extend_from_slice(b"\"}}\r\n\r\ndata: {\"after\":1}\n\n");
        for chunk in [1, 7, 100, 4096, stream.len()] {
            let events = feed_in_chunks(&mut EventReader::new(1024), &stream, chunk);
            assert_eq!(events.len(), 2, "chunks of {chunk}");
            assert!(events[0].cut);
            assert_eq!(events[0].id.as_deref(), Some("3"));
            assert!(events[0].data.len() <= PREFIX_BYTES);
            assert!(
                events[0]
                    .data
                    .starts_with(r#"{"jsonrpc":"2.0","id":7,"method":"elicitation/create""#),
                "{}",
                events[0].data
            );
            assert!(!events[1].cut);
            assert_eq!(events[1].data, r#"{"after":1}"#);
        }
    }

    #[test]
    fn an_event_over_the_limit_in_many_lines_is_cut_too() {
        let line = format!("data: {}\n", "b".repeat(300));
        let mut stream = line.repeat(10).into_bytes();
        stream.extend_from_slice(b"\ndata: next\n\n");
        let events = feed_in_chunks(&mut EventReader::new(1000), &stream, 64);
        assert_eq!(events.len(), 2);
        assert!(events[0].cut);
        assert!(events[0].data.len() <= PREFIX_BYTES);
        assert_eq!(events[1].data, "next");
    }

    #[test]
    fn cuts_between_characters_not_inside_one() {
        let mut stream = "data: ".as_bytes().to_vec();
        stream.extend("é".repeat(5_000).as_bytes());
        stream.extend_from_slice(b"\n\n");
        for chunk in [3, 1000, stream.len()] {
            let events = feed_in_chunks(&mut EventReader::new(100), &stream, chunk);
            assert_eq!(events.len(), 1);
            assert!(events[0].cut);
            assert!(
                events[0].data.chars().all(|c| c == 'é'),
                "{}",
                events[0].data
            );
        }
    }

    /// However the stream is cut into chunks, the same events come out.
    #[test]
    fn chunking_changes_nothing() {
        let mut stream = Vec::new();
        stream.extend_from_slice(b"retry: 700\nid: 1\ndata: {\"a\":1}\n\n");
        stream.extend_from_slice(b"id: 2\ndata: {\"id\":9,\"result\":\"");
        stream.extend(std::iter::repeat_n(b'r', 3_000));
        stream.extend_from_slice(b"\"}\ndata: second line\n\n: ");
        stream.extend(std::iter::repeat_n(b'c', 2_000));
        stream.extend_from_slice(b"\nid: ");
        stream.extend(std::iter::repeat_n(b'i', 600));
        stream.extend_from_slice(b"\ndata: ");
        stream.extend("é".repeat(400).as_bytes());
        stream.extend_from_slice(b"\r\n\r\nevent: message\ndata: x\ndata: ");
        stream.extend(std::iter::repeat_n(b'y', 1_100));
        stream.extend_from_slice(b"\n\ndata: last\n\n");
        // At the limit exactly, with `\r\n`: not cut, wherever the `\r` falls.
        stream.extend_from_slice(b"data: ");
        stream.extend(std::iter::repeat_n(b'z', 1024));
        stream.extend_from_slice(b"\r\n\r\n");
        // Cut, then a later id: handed out on its own.
        stream.extend_from_slice(b"data: ");
        stream.extend(std::iter::repeat_n(b'w', 2_000));
        stream.extend_from_slice(b"\nid: 7\ndata: more\n\n");
        let whole = EventReader::new(1024).feed(&stream);
        assert_eq!(whole.len(), 8, "{whole:?}");
        assert_eq!(
            whole.iter().map(|event| event.cut).collect::<Vec<_>>(),
            [false, true, false, true, false, false, true, false]
        );
        assert_eq!(whole[5].data.len(), 1024);
        assert_eq!(
            (whole[7].id.as_deref(), whole[7].data.as_str()),
            (Some("7"), "")
        );
        assert_eq!(whole[1].id.as_deref(), Some("2"));
        assert!(whole[1].data.starts_with(r#"{"id":9,"result":"rrr"#));
        assert_eq!(whole[1].data.len(), PREFIX_BYTES);
        assert_eq!(whole[2].id, None, "an over-long id is not kept");
        assert_eq!(whole[2].data.chars().count(), 400);
        assert!(whole[3].data.starts_with("x\nyyy"));
        for chunk in (1..=70).chain([100, 511, 512, 513, 577, 1000, 1025, 4096]) {
            let mut reader = EventReader::new(1024);
            assert_eq!(
                feed_in_chunks(&mut reader, &stream, chunk),
                whole,
                "{chunk}"
            );
            assert_eq!(reader.retry(), Some(700));
        }
        // Chunks of uneven sizes, from a fixed seed.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for round in 0..300 {
            let mut reader = EventReader::new(1024);
            let mut events = Vec::new();
            let mut rest = stream.as_slice();
            while !rest.is_empty() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let size = usize::try_from(seed % 700)
                    .unwrap_or(1)
                    .clamp(1, rest.len());
                let (piece, after) = rest.split_at(size);
                events.extend(reader.feed(piece));
                rest = after;
            }
            assert_eq!(events, whole, "round {round}");
        }
    }

    /// An over-long event that never ends is handed out once the limit is
    /// passed, and only once; the stream goes on after it.
    #[test]
    fn an_unended_over_long_event_is_handed_out_at_the_limit() {
        let mut reader = EventReader::new(1024);
        let mut events = reader.feed(br#"data: {"result":{"text":""#);
        let mut fed = 0;
        while events.is_empty() && fed < 2_000 {
            events.extend(reader.feed(&[b'x'; 100]));
            fed += 100;
        }
        assert!(fed <= 1_100, "{fed}");
        assert_eq!(events.len(), 1);
        assert!(events[0].cut);
        assert!(events[0].data.starts_with(r#"{"result":{"text":"xxx"#));
        for _ in 0..100 {
            assert!(reader.feed(&[b'x'; 10_000]).is_empty());
        }
        assert!(reader.feed(b"\"}}\n\n").is_empty());
        let next = reader.feed(b"data: next\n\n");
        assert_eq!((next.len(), next[0].data.as_str()), (1, "next"));
    }

    #[test]
    fn an_over_long_comment_is_skipped() {
        let mut stream = b": ".to_vec();
        stream.extend(std::iter::repeat_n(b'c', 10_000));
        stream.extend_from_slice(b"\ndata: x\n\n");
        let events = feed_in_chunks(&mut EventReader::new(100), &stream, 512);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "x");
    }

    #[test]
    fn writes_what_it_reads() {
        let written = message_event(Some("7"), b"{\"x\":1}");
        let events = EventReader::new(100).feed(&written);
        assert_eq!(events[0].data, "{\"x\":1}");
        assert_eq!(events[0].id.as_deref(), Some("7"));
    }
}
