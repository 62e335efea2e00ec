//! The bytes of a CSV file as the parser sees them, bounded: the whole file
//! may not grow past [`DATASET_MAX_BYTES`] while it is read, no row may
//! pass [`DATASET_MAX_ROW_BYTES`] nor hold more than [`DATASET_MAX_COLUMNS`]
//! fields, so the parser's row buffer and its list of field ends (8 bytes
//! a field) stay small however the file is shaped (one quoted field can
//! span a whole file; a row of commas is a field a byte).

use std::cell::Cell;
use std::io::{self, Read};
use std::rc::Rc;

use thiserror::Error;

use crate::limits::{DATASET_MAX_BYTES, DATASET_MAX_COLUMNS, DATASET_MAX_ROW_BYTES};

/// Bytes the CSV parser buffers ahead of the row it is reading.
pub(crate) const PARSER_BUFFER_BYTES: usize = 64 * 1024;

/// Why [`Bounded`] stopped delivering bytes.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overrun {
    /// The file grew past [`DATASET_MAX_BYTES`] after it was measured.
    #[error("the file grew past {DATASET_MAX_BYTES} bytes while it was read")]
    File,
    /// One row is longer than [`DATASET_MAX_ROW_BYTES`].
    #[error("a row is longer than {DATASET_MAX_ROW_BYTES} bytes (the limit)")]
    Row,
    /// One row holds more than [`DATASET_MAX_COLUMNS`] fields.
    #[error("a row has more than {DATASET_MAX_COLUMNS} fields (the limit)")]
    Fields,
}

/// Where a row's reading is, as the CSV parser reads it (`,` between
/// fields, `"` quoting a field that starts with it, `""` a quote inside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    /// At the start of a field.
    Start,
    /// In a field that is not quoted.
    Plain,
    /// In a quoted field.
    Quoted,
    /// Just after a quote in a quoted field (its end, or half of `""`).
    QuoteInQuoted,
}

/// A UTF-8 byte order mark, which the parser drops at the start.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Counts the fields of the row being delivered.
#[derive(Debug)]
struct FieldCount {
    state: Field,
    fields: u64,
    /// How many bytes of a byte order mark the stream began with so far
    /// (`None` once the start is past).
    bom: Option<usize>,
}

impl FieldCount {
    fn new() -> Self {
        Self {
            state: Field::Start,
            fields: 1,
            bom: Some(0),
        }
    }

    /// Reads `bytes`; false once a row has more than [`DATASET_MAX_COLUMNS`] fields.
    fn read(&mut self, bytes: &[u8]) -> bool {
        for &byte in bytes {
            if let Some(matched) = self.bom {
                if BOM.get(matched) == Some(&byte) {
                    self.bom = (matched + 1 < BOM.len()).then_some(matched + 1);
                    continue;
                }
                self.bom = None;
                // The bytes taken for a mark that was none are a field's.
                if matched > 0 {
                    self.state = Field::Plain;
                }
            }
            self.state = match (self.state, byte) {
                (Field::Quoted, b'"') => Field::QuoteInQuoted,
                (Field::Quoted, _) => Field::Quoted,
                (Field::Start | Field::QuoteInQuoted, b'"') => Field::Quoted,
                (_, b',') => {
                    self.fields += 1;
                    if self.fields > DATASET_MAX_COLUMNS {
                        return false;
                    }
                    Field::Start
                }
                (_, b'\n' | b'\r') => {
                    self.fields = 1;
                    Field::Start
                }
                _ => Field::Plain,
            };
        }
        true
    }
}

impl Overrun {
    /// The overrun that ended a read, if that is what `err` is.
    pub(crate) fn of(err: &io::Error) -> Option<Self> {
        err.get_ref()
            .and_then(|inner| inner.downcast_ref::<Self>())
            .copied()
    }
}

/// Where the row being parsed starts, in bytes from the start of the
/// stream; the parsing loop moves it forward after each row.
#[derive(Debug, Clone, Default)]
pub(crate) struct RowStart(Rc<Cell<u64>>);

impl RowStart {
    /// Records that the next row starts at byte `offset`.
    pub(crate) fn set(&self, offset: u64) {
        self.0.set(offset);
    }
}

/// A reader that refuses to deliver more than the file or row bound allows.
#[derive(Debug)]
pub(crate) struct Bounded<R> {
    inner: R,
    delivered: u64,
    row_start: RowStart,
    fields: FieldCount,
}

impl<R: Read> Bounded<R> {
    /// Bounds `inner`; `row_start` is shared with the parsing loop.
    pub(crate) fn new(inner: R, row_start: RowStart) -> Self {
        Self {
            inner,
            delivered: 0,
            row_start,
            fields: FieldCount::new(),
        }
    }
}

fn overrun(kind: Overrun) -> io::Error {
    io::Error::other(kind)
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if crate::call_end::call_ended() {
            return Err(crate::call_end::ended_reading());
        }
        // The parser never holds more than its buffer beyond the row start.
        let row_end = self
            .row_start
            .0
            .get()
            .saturating_add(DATASET_MAX_ROW_BYTES as u64)
            .saturating_add(PARSER_BUFFER_BYTES as u64);
        let row_room = row_end.saturating_sub(self.delivered);
        if row_room == 0 {
            return Err(overrun(Overrun::Row));
        }
        let file_room = DATASET_MAX_BYTES.saturating_sub(self.delivered);
        if file_room == 0 {
            // At the limit: anything more means the file grew.
            let mut probe = [0_u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(overrun(Overrun::File)),
            };
        }
        let room = usize::try_from(row_room.min(file_room)).unwrap_or(usize::MAX);
        let end = buf.len().min(room);
        let n = self.inner.read(&mut buf[..end])?;
        if !self.fields.read(&buf[..n]) {
            return Err(overrun(Overrun::Fields));
        }
        self.delivered += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_longer_than_the_bound_are_cut_off() {
        let long = vec![b'x'; DATASET_MAX_ROW_BYTES + PARSER_BUFFER_BYTES + 10];
        let mut reader = Bounded::new(&long[..], RowStart::default());
        let mut sink = Vec::new();
        let err = reader.read_to_end(&mut sink).err();
        assert_eq!(err.as_ref().and_then(Overrun::of), Some(Overrun::Row));
        assert_eq!(sink.len(), DATASET_MAX_ROW_BYTES + PARSER_BUFFER_BYTES);
    }

    fn fields_within_bound(text: &str) -> bool {
        FieldCount::new().read(text.as_bytes())
    }

    #[test]
    fn rows_of_more_fields_than_columns_are_cut_off() {
        let limit = usize::try_from(DATASET_MAX_COLUMNS).unwrap_or(usize::MAX);
        let most = ",".repeat(limit - 1);
        assert!(fields_within_bound(&format!("{most}\n{most}\r\n{most}")));
        assert!(!fields_within_bound(&format!("{most},")));
        // Commas inside quotes are no fields; a quote inside a plain field
        // quotes nothing.
        let quoted = format!("\"{}\",a", ",".repeat(limit * 2));
        assert!(fields_within_bound(&quoted));
        assert!(fields_within_bound(&format!("\"a\"\"{most}\"")));
        assert!(!fields_within_bound(&format!("a\"b{most},")));
        // A byte order mark is no field's: the quote after it opens one.
        let marked = format!("\u{feff}\",\"{most},");
        assert!(!fields_within_bound(&marked));
        assert!(fields_within_bound(&format!(
            "\u{feff}\"{}\"",
            ",".repeat(limit * 2)
        )));
        let row = format!("{most},\n");
        let mut reader = Bounded::new(row.as_bytes(), RowStart::default());
        let err = reader.read_to_end(&mut Vec::new()).err();
        assert_eq!(err.as_ref().and_then(Overrun::of), Some(Overrun::Fields));
    }

    #[test]
    fn moving_the_row_start_lets_the_stream_go_on() {
        let data = vec![b'x'; 3 * DATASET_MAX_ROW_BYTES];
        let start = RowStart::default();
        let mut reader = Bounded::new(&data[..], start.clone());
        let mut buf = vec![0_u8; 4096];
        let mut total = 0_u64;
        loop {
            start.set(total);
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => total += n as u64,
                Err(err) => panic!("{err}"),
            }
        }
        assert_eq!(total, data.len() as u64);
    }
}
