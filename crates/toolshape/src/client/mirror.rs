//! Telling, from its raw JSON, that a content block is the text block
//! repeating `structuredContent`, without parsing it into values.
//!
//! Servers put the JSON of their structured result in a text block for
//! older clients; that text is the costliest part of a result to read (every
//! quote in it is escaped). When a block is exactly `{"type": "text",
//! "text": T}` and `T` decodes to the very text of `structuredContent`, the
//! client builds the block from that text instead of decoding it again. Any
//! other block (more members, escaped member names, a different text) is
//! parsed as usual, so a `false` here is never wrong, only slower.
//!
//! For a relaying caller, [`read_mirrored`] reads a whole result laid out as
//! servers usually write it (that one block and `structuredContent`) in one
//! pass: `structuredContent` is read once, for validation, and the block's
//! text is compared with its text as the block is walked, never parsed.
//! A `_meta` holding only the server's name (2026-07-28 servers put one in
//! every result) is taken too, and marked to be cut out: a relaying server
//! writes its own.

use std::ops::Range;

use serde::Deserialize;
use serde::de::IgnoredAny;
use toolshape_protocol::ResultType;
use toolshape_schema::InstanceText;

/// Whether `block` (one content block's JSON, known to be valid) is a text
/// block with no other member than `type` and `text`, whose text is exactly
/// `expected`.
pub(super) fn is_text_block_of(block: &str, expected: &str) -> bool {
    let mut reader = Reader {
        bytes: block.as_bytes(),
        at: 0,
        member_at: 0,
    };
    reader.text_block(expected.as_bytes()) == Some(expected.len()) && reader.at_end()
}

/// A result read by [`read_mirrored`].
pub(super) struct Mirrored<'a> {
    /// `structuredContent`'s JSON text, as written.
    pub(super) structured_json: &'a str,
    /// `structuredContent`, read for validation.
    pub(super) structured: InstanceText<'a>,
    /// `isError` (absent is `false`).
    pub(super) is_error: bool,
    /// `resultType`: `"complete"` or absent.
    pub(super) result_type: Option<ResultType>,
    /// Where a `_meta` holding only `io.modelcontextprotocol/serverInfo`
    /// is, with the comma beside it: the result without these bytes is the
    /// same result without it.
    pub(super) identity: Option<Range<usize>>,
}

/// A `_meta` of the server's name alone.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IdentityOnly {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    _info: IgnoredAny,
}

/// A tool result (its JSON text, known to be UTF-8) read in one pass when it
/// is an object of exactly these members, each once and in any order, names
/// without escapes: `content` holding one block, the text block repeating
/// `structuredContent`; `structuredContent`; and optionally `isError`,
/// `resultType: "complete"` and a `_meta` holding only the server's name
/// (see [`Mirrored::identity`]); with nothing after it but whitespace. `None`
/// for anything else, which is then read as usual (and any fault in it
/// reported there): `None` is never wrong, only slower.
pub(super) fn read_mirrored(result: &str) -> Option<Mirrored<'_>> {
    // Where `structuredContent`'s value starts is found first, by its
    // name's bytes, so that the text block is compared with that value's
    // text as the block is walked, and never skipped on its own; nothing is
    // parsed until the block matched. An unescaped quote bounds a string,
    // so the bytes found are a member's name (perhaps of a nested object),
    // or end a string whose last letters follow an escaped quote: the walk
    // below takes the value only where the result's own member is; any
    // other place gives `None`, and the result is read as usual.
    let value_at = structured_content_at(result)?;
    let rest = result.get(value_at..)?;
    let mut reader = Reader {
        bytes: result.as_bytes(),
        at: 0,
        member_at: 0,
    };
    // The text's length once the block matched; the value once read.
    let (mut text_len, mut structured) = (None, None);
    let (mut is_error, mut result_type, mut identity) = (None, None, None);
    reader.members(|reader, name| {
        match name {
            b"content" if text_len.is_none() => {
                reader.eat(b'[')?;
                reader.skip_space();
                // Compared with the value's own text when it was read
                // (the member came first), else with what follows `value_at`.
                let expected = structured.as_ref().map_or(rest, |(json, _)| *json);
                let len = reader.text_block(expected.as_bytes())?;
                if structured.is_some() {
                    (len == expected.len()).then_some(())?;
                }
                text_len = Some(len);
                reader.skip_space();
                reader.eat(b']')?;
            }
            b"structuredContent" if structured.is_none() && reader.at == value_at => {
                let (value, len) = InstanceText::parse_prefix(rest).ok()?;
                // The block, if it came first, is exactly this value's text.
                text_len.is_none_or(|text| text == len).then_some(())?;
                structured = Some((rest.get(..len)?, value));
                reader.at += len;
            }
            b"isError" if is_error.is_none() => is_error = Some(reader.boolean()?),
            b"resultType" if result_type.is_none() => {
                (reader.plain_string()? == b"complete").then_some(())?;
                result_type = Some(ResultType::Complete);
            }
            b"_meta" if identity.is_none() => {
                let member_at = reader.member_at;
                let mut value =
                    serde_json::Deserializer::from_slice(reader.bytes.get(reader.at..)?)
                        .into_iter::<IdentityOnly>();
                value.next()?.ok()?;
                reader.at += value.byte_offset();
                identity = Some(member_at..reader.at);
            }
            _ => return None,
        }
        Some(())
    })?;
    reader.at_end().then_some(())?;
    text_len?;
    let (structured_json, structured) = structured?;
    let identity = match identity {
        Some(member) => Some(with_a_comma(result.as_bytes(), member)?),
        None => None,
    };
    Some(Mirrored {
        structured_json,
        structured,
        is_error: is_error.unwrap_or(false),
        result_type,
        identity,
    })
}

/// An object's `member` (from its name to its value's end) with the comma
/// that parts it from the next member, or else from the one before.
fn with_a_comma(object: &[u8], member: Range<usize>) -> Option<Range<usize>> {
    let space = |byte: &&u8| matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
    let after = object.get(member.end..)?;
    let next = after.iter().position(|byte| !space(&byte))?;
    if after.get(next) == Some(&b',') {
        return Some(member.start..member.end + next + 1);
    }
    let before = object.get(..member.start)?;
    let previous = before.iter().rposition(|byte| !space(&byte))?;
    (before.get(previous) == Some(&b',')).then_some(previous..member.end)
}

/// Where the value after the first `"structuredContent"` name in `result`
/// starts (after the colon and any whitespace).
fn structured_content_at(result: &str) -> Option<usize> {
    const NAME: &[u8] = b"\"structuredContent\"";
    let name_at = memchr::memmem::find(result.as_bytes(), NAME)?;
    let mut reader = Reader {
        bytes: result.as_bytes(),
        at: name_at + NAME.len(),
        member_at: name_at,
    };
    reader.skip_space();
    reader.eat(b':')?;
    reader.skip_space();
    Some(reader.at)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Where the member being read starts (its name's opening quote).
    member_at: usize,
}

impl<'a> Reader<'a> {
    /// Whether nothing but whitespace is left.
    fn at_end(&mut self) -> bool {
        self.skip_space();
        self.at == self.bytes.len()
    }

    /// An object (after whitespace): each member's name (without escapes)
    /// handed to `member` with the reader at its value, which `member`
    /// reads; `None` as soon as `member` or the object's syntax fails.
    fn members(&mut self, mut member: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.skip_space();
        self.eat(b'{')?;
        loop {
            self.skip_space();
            self.member_at = self.at;
            let name = self.plain_string()?;
            self.skip_space();
            self.eat(b':')?;
            self.skip_space();
            member(self, name)?;
            self.skip_space();
            match self.next()? {
                b',' => continue,
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// A block of only `"type": "text"` and `"text"`, its text decoding to
    /// the start of `expected` (compared as it is read): that text's length.
    fn text_block(&mut self, expected: &[u8]) -> Option<usize> {
        let (mut has_type, mut text) = (false, None);
        self.members(|reader, name| {
            match name {
                b"type" if !has_type => {
                    (reader.plain_string()? == b"text").then_some(())?;
                    has_type = true;
                }
                b"text" if text.is_none() => {
                    reader.eat(b'"')?;
                    text = Some(reader.string_prefix_of(expected)?);
                }
                _ => return None,
            }
            Some(())
        })?;
        has_type.then_some(())?;
        text
    }

    /// `true` or `false`.
    fn boolean(&mut self) -> Option<bool> {
        let rest = self.bytes.get(self.at..)?;
        let (value, len) = if rest.starts_with(b"true") {
            (true, 4)
        } else if rest.starts_with(b"false") {
            (false, 5)
        } else {
            return None;
        };
        self.at += len;
        Some(value)
    }

    fn next(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn eat(&mut self, expected: u8) -> Option<()> {
        (self.next()? == expected).then_some(())
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// A string without escapes, as its bytes (`None` for any escape).
    fn plain_string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.at;
        loop {
            match self.next()? {
                b'"' => return self.bytes.get(start..self.at - 1),
                b'\\' | 0..=0x1f => return None,
                _ => {}
            }
        }
    }

    /// After an opening quote: whether the string decodes to the start of
    /// `expected`, reading up to and including its closing quote; its
    /// decoded length. Byte by byte: in the JSON text of a JSON value an
    /// escape comes every few bytes.
    fn string_prefix_of(&mut self, expected: &[u8]) -> Option<usize> {
        let mut matched = 0;
        loop {
            let rest = self.bytes.get(self.at..)?;
            let wanted = expected.get(matched..)?;
            // The run before the next quote or escape, equal to what is wanted.
            let mut run = 0;
            for (&byte, &want) in rest.iter().zip(wanted) {
                if byte == b'"' || byte == b'\\' || byte < 0x20 || byte != want {
                    break;
                }
                run += 1;
            }
            let stop = *rest.get(run)?;
            if stop != b'"' && stop != b'\\' {
                return None;
            }
            matched += run;
            self.at += run + 1;
            if stop == b'"' {
                return Some(matched);
            }
            let decoded = self.escape()?;
            if decoded.is_ascii() {
                (expected.get(matched) == Some(&(decoded as u8))).then_some(())?;
                matched += 1;
            } else {
                let mut buffer = [0u8; 4];
                let encoded = decoded.encode_utf8(&mut buffer).as_bytes();
                let end = matched + encoded.len();
                (expected.get(matched..end)? == encoded).then_some(())?;
                matched = end;
            }
        }
    }

    /// The character of one escape, after its backslash. A lone surrogate
    /// is `None` (the block is then parsed as usual, which refuses it).
    fn escape(&mut self) -> Option<char> {
        Some(match self.next()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                match unit {
                    0xD800..=0xDBFF => {
                        self.eat(b'\\')?;
                        self.eat(b'u')?;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(code)?
                    }
                    _ => char::from_u32(unit)?,
                }
            }
            _ => return None,
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.bytes.get(self.at..self.at + 4)?;
        self.at += 4;
        digits.iter().try_fold(0, |unit, &digit| {
            Some(unit * 16 + char::from(digit).to_digit(16)?)
        })
    }
}

#[cfg(test)]
mod tests;
