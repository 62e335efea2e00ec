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

/// Whether `block` (one content block's JSON, known to be valid) is a text
/// block with no other member than `type` and `text`, whose text is exactly
/// `expected`.
pub(super) fn is_text_block_of(block: &str, expected: &str) -> bool {
    let mut reader = Reader {
        bytes: block.as_bytes(),
        at: 0,
    };
    reader.text_block_of(expected.as_bytes()).is_some()
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// `Some(())` when the block is the mirror; `None` as soon as it is not.
    fn text_block_of(&mut self, expected: &[u8]) -> Option<()> {
        let (mut has_type, mut has_text) = (false, false);
        self.skip_space();
        self.eat(b'{')?;
        loop {
            self.skip_space();
            let key = self.plain_string()?;
            self.skip_space();
            self.eat(b':')?;
            self.skip_space();
            match key {
                b"type" if !has_type => {
                    (self.plain_string()? == b"text").then_some(())?;
                    has_type = true;
                }
                b"text" if !has_text => {
                    self.eat(b'"')?;
                    self.string_equal_to(expected)?;
                    has_text = true;
                }
                _ => return None,
            }
            self.skip_space();
            match self.next()? {
                b',' => continue,
                b'}' => break,
                _ => return None,
            }
        }
        self.skip_space();
        (self.at == self.bytes.len() && has_type && has_text).then_some(())
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
                b'\\' => return None,
                _ => {}
            }
        }
    }

    /// After an opening quote: whether the string decodes to `expected`,
    /// reading up to and including its closing quote. Byte by byte: in the
    /// JSON text of a JSON value an escape comes every few bytes.
    fn string_equal_to(&mut self, expected: &[u8]) -> Option<()> {
        let mut matched = 0;
        loop {
            let rest = self.bytes.get(self.at..)?;
            let wanted = expected.get(matched..)?;
            // The run before the next quote or escape, equal to what is wanted.
            let mut run = 0;
            for (&byte, &want) in rest.iter().zip(wanted) {
                if byte == b'"' || byte == b'\\' || byte != want {
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
                return (matched == expected.len()).then_some(());
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
        let digits = std::str::from_utf8(digits).ok()?;
        u32::from_str_radix(digits, 16).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::is_text_block_of;
    use serde_json::json;

    /// The block as a server would write it: `{"type":"text","text":...}`.
    fn written(text: &str) -> String {
        serde_json::to_string(&json!({"type": "text", "text": text})).unwrap()
    }

    #[test]
    fn the_text_of_a_written_block_is_recognised_however_it_is_escaped() {
        let structured = r#"{"a":"x\"y","b":[1,2],"c":"\\ / é 𝄞 	"}"#;
        assert!(is_text_block_of(&written(structured), structured));
        // The same text with other legal escapes, member order and spacing.
        let escaped = r#" { "text" : "{\"a\":\"x\\\"y\",\"b\":[1,2],\"c\":\"\\\\ \/ \u00e9 \ud834\udd1e \t\"}" , "type":"text" } "#;
        assert!(is_text_block_of(escaped, structured));
    }

    #[test]
    fn any_other_block_is_left_to_the_parser() {
        let structured = r#"{"a":1}"#;
        // A different, longer or shorter text.
        assert!(!is_text_block_of(&written(r#"{"a":2}"#), structured));
        assert!(!is_text_block_of(&written(r#"{"a":1} "#), structured));
        assert!(!is_text_block_of(&written(r#"{"a":"#), structured));
        assert!(!is_text_block_of(&written(""), structured));
        // More members, another type, a repeated or missing member.
        let annotated = json!({"type": "text", "text": structured, "annotations": {}});
        assert!(!is_text_block_of(&annotated.to_string(), structured));
        let image = r#"{"type":"image","text":"{\"a\":1}"}"#;
        assert!(!is_text_block_of(image, structured));
        let twice = r#"{"type":"text","text":"{\"a\":1}","text":"{\"a\":1}"}"#;
        assert!(!is_text_block_of(twice, structured));
        assert!(!is_text_block_of(r#"{"text":"{\"a\":1}"}"#, structured));
        // An escaped member name, a lone surrogate, trailing data.
        let escaped_key = r#"{"typ\u0065":"text","text":"{\"a\":1}"}"#;
        assert!(!is_text_block_of(escaped_key, structured));
        assert!(!is_text_block_of(
            r#"{"type":"text","text":"\ud834"}"#,
            "\u{fffd}"
        ));
        let trailing = r#"{"type":"text","text":"{\"a\":1}"}x"#;
        assert!(!is_text_block_of(trailing, structured));
        assert!(!is_text_block_of("", structured));
    }
}
