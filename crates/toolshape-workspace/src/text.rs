//! Telling text from binary, counting lines and checking UTF-8 in one
//! streaming pass.

use std::io::{self, Read};

use crate::limits::SNIFF_BYTES;

/// What one pass over a file found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TextScan {
    /// Lines: newline characters, plus one for a last line without one.
    pub(crate) lines: u64,
    /// The whole file is valid UTF-8.
    pub(crate) utf8: bool,
    /// A NUL byte appears in the first [`SNIFF_BYTES`] bytes.
    pub(crate) binary: bool,
}

/// True when `prefix` (the start of a file) has a NUL byte in its first
/// [`SNIFF_BYTES`] bytes.
pub(crate) fn looks_binary(prefix: &[u8]) -> bool {
    let end = prefix
        .len()
        .min(usize::try_from(SNIFF_BYTES).unwrap_or(usize::MAX));
    prefix[..end].contains(&0)
}

/// Reads `reader` to the end, counting lines and checking UTF-8 as it goes.
pub(crate) fn scan(mut reader: impl Read) -> io::Result<TextScan> {
    let mut buf = vec![0_u8; 64 * 1024];
    let mut seen: u64 = 0;
    let mut newlines: u64 = 0;
    let mut last: Option<u8> = None;
    let mut binary = false;
    let mut utf8 = Utf8Check::default();
    loop {
        if crate::call_end::call_ended() {
            return Err(crate::call_end::ended_reading());
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let chunk = &buf[..n];
        if seen < SNIFF_BYTES {
            let room = usize::try_from(SNIFF_BYTES - seen).unwrap_or(usize::MAX);
            binary |= chunk[..chunk.len().min(room)].contains(&0);
        }
        newlines += count_newlines(chunk);
        last = chunk.last().copied().or(last);
        utf8.feed(chunk);
        seen = seen.saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
    }
    let unterminated = u64::from(matches!(last, Some(byte) if byte != b'\n'));
    Ok(TextScan {
        lines: newlines + unterminated,
        utf8: utf8.finish(),
        binary,
    })
}

fn count_newlines(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b == b'\n').fold(0, |n, _| n + 1)
}

/// Incremental UTF-8 validation across chunk boundaries.
#[derive(Debug, Default)]
struct Utf8Check {
    /// Bytes of a character cut by the previous chunk's end (at most 3).
    carry: Vec<u8>,
    invalid: bool,
}

impl Utf8Check {
    fn feed(&mut self, mut chunk: &[u8]) {
        if self.invalid {
            return;
        }
        // Complete a character left over from the previous chunk, byte by byte.
        while !self.carry.is_empty() {
            let Some((&first, rest)) = chunk.split_first() else {
                return;
            };
            self.carry.push(first);
            chunk = rest;
            match std::str::from_utf8(&self.carry) {
                Ok(_) => self.carry.clear(),
                Err(err) if err.error_len().is_some() => {
                    self.invalid = true;
                    return;
                }
                Err(_) if self.carry.len() >= 4 => {
                    self.invalid = true;
                    return;
                }
                Err(_) => {}
            }
        }
        match std::str::from_utf8(chunk) {
            Ok(_) => {}
            Err(err) if err.error_len().is_some() => self.invalid = true,
            Err(err) => self.carry.extend_from_slice(&chunk[err.valid_up_to()..]),
        }
    }

    fn finish(self) -> bool {
        !self.invalid && self.carry.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out one byte at a time, to split every character.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((&b, rest)), Some(slot)) => {
                    *slot = b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    fn scan_bytes(bytes: &[u8]) -> TextScan {
        scan(Trickle(bytes)).unwrap_or(TextScan {
            lines: u64::MAX,
            utf8: false,
            binary: false,
        })
    }

    #[test]
    fn lines_count_like_an_editor() {
        assert_eq!(scan_bytes(b"").lines, 0);
        assert_eq!(scan_bytes(b"a").lines, 1);
        assert_eq!(scan_bytes(b"a\n").lines, 1);
        assert_eq!(scan_bytes(b"a\nb").lines, 2);
        assert_eq!(scan_bytes(b"\n\n").lines, 2);
    }

    #[test]
    fn utf8_is_checked_across_chunks() {
        assert!(scan_bytes("héllo 😀 wörld".as_bytes()).utf8);
        assert!(!scan_bytes(b"abc\xff").utf8);
        assert!(!scan_bytes(b"abc\xe2\x82").utf8, "cut off at the end");
        assert!(!scan_bytes(b"\xe2\x82x").utf8, "bad continuation");
        assert!(scan(&"😀".repeat(50_000).into_bytes()[..]).is_ok_and(|s| s.utf8));
    }

    #[test]
    fn nul_only_counts_in_the_sniffed_prefix() {
        assert!(scan_bytes(b"a\0b").binary);
        let mut late = vec![b'a'; 9000];
        late.push(0);
        assert!(!scan(&late[..]).is_ok_and(|s| s.binary));
        assert!(looks_binary(b"\0"));
        assert!(!looks_binary(&late));
    }
}
