//! `WWW-Authenticate` (RFC 9110 §11.6.1): reading the challenges a server
//! sends, and writing the `Bearer` ones a protected resource answers with
//! (RFC 6750 §3, RFC 9728 §5.1).
//!
//! The reader is tolerant (unknown schemes and parameters are kept, a
//! malformed tail is dropped) and bounded: it never looks past
//! [`MAX_HEADER_BYTES`] and keeps at most [`MAX_CHALLENGES`] challenges of
//! [`MAX_PARAMS`] parameters each.

/// Longest header text read.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Most challenges kept.
pub const MAX_CHALLENGES: usize = 16;
/// Most parameters kept per challenge.
pub const MAX_PARAMS: usize = 32;

/// One challenge: its scheme (`Bearer`, `DPoP`, `Basic`...) and parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Challenge {
    /// The auth scheme as sent.
    pub scheme: String,
    /// The `name=value` parameters in order; names as sent.
    pub params: Vec<(String, String)>,
    /// A `token68` instead of parameters, if the challenge had one.
    pub token68: Option<String>,
}

impl Challenge {
    /// Whether the scheme is `scheme` (ASCII case-insensitive).
    pub fn is(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The first parameter called `name` (ASCII case-insensitive).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// The challenges in every value of the header, in order.
pub fn parse<'a>(values: impl IntoIterator<Item = &'a str>) -> Vec<Challenge> {
    let mut out = Vec::new();
    let mut budget = MAX_HEADER_BYTES;
    for value in values {
        if budget == 0 || out.len() >= MAX_CHALLENGES {
            break;
        }
        let value = truncate(value, budget);
        budget -= value.len();
        Parser {
            text: value.as_bytes(),
            at: 0,
        }
        .challenges(&mut out);
    }
    out
}

/// The challenges of a response's `WWW-Authenticate` headers.
pub fn from_headers(headers: &http::HeaderMap) -> Vec<Challenge> {
    parse(
        headers
            .get_all(http::header::WWW_AUTHENTICATE)
            .iter()
            .filter_map(|value| value.to_str().ok()),
    )
}

/// The first `Bearer` or `DPoP` challenge (the ones OAuth resources send).
pub fn oauth_challenge(challenges: &[Challenge]) -> Option<&Challenge> {
    challenges
        .iter()
        .find(|c| c.is("Bearer"))
        .or_else(|| challenges.iter().find(|c| c.is("DPoP")))
}

/// Writes a challenge: `Scheme name="value", ...` (values quoted and escaped;
/// characters a header cannot carry are replaced by `?`).
pub fn format(scheme: &str, params: &[(&str, &str)]) -> String {
    let mut out = String::from(scheme);
    for (index, (name, value)) in params.iter().enumerate() {
        out.push_str(if index == 0 { " " } else { ", " });
        out.push_str(name);
        out.push_str("=\"");
        for c in value.chars() {
            match c {
                '"' | '\\' => {
                    out.push('\\');
                    out.push(c);
                }
                ' '..='~' | '\t' => out.push(c),
                _ => out.push('?'),
            }
        }
        out.push('"');
    }
    out
}

fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn challenges(&mut self, out: &mut Vec<Challenge>) {
        loop {
            self.skip_separators();
            let Some(scheme) = self.token() else { return };
            let mut challenge = Challenge {
                scheme,
                ..Challenge::default()
            };
            self.skip_spaces();
            if let Some(token68) = self.token68() {
                challenge.token68 = Some(token68);
            } else {
                self.params(&mut challenge);
            }
            if out.len() < MAX_CHALLENGES {
                out.push(challenge);
            } else {
                return;
            }
        }
    }

    /// `name=value` pairs until the next challenge starts (a token not
    /// followed by `=`) or the text ends.
    fn params(&mut self, challenge: &mut Challenge) {
        loop {
            self.skip_separators();
            let before = self.at;
            let Some(name) = self.token() else {
                // The end, or something no parameter starts with: drop the rest.
                self.at = self.text.len();
                return;
            };
            self.skip_spaces();
            if self.peek() != Some(b'=') {
                // The next challenge's scheme.
                self.at = before;
                return;
            }
            self.at += 1;
            self.skip_spaces();
            let value = if self.peek() == Some(b'"') {
                self.quoted()
            } else {
                self.token().unwrap_or_default()
            };
            if challenge.params.len() < MAX_PARAMS {
                challenge.params.push((name, value));
            }
        }
    }

    /// A token68 (`abc==`): a run of token68 characters and `=` padding
    /// that ends the challenge (`name=value` goes on past the `=`).
    fn token68(&mut self) -> Option<String> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
        {
            self.at += 1;
        }
        if self.at == start {
            return None;
        }
        while self.peek() == Some(b'=') {
            self.at += 1;
        }
        let end = self.at;
        self.skip_spaces();
        if matches!(self.peek(), None | Some(b',')) {
            return Some(String::from_utf8_lossy(&self.text[start..end]).into_owned());
        }
        self.at = start;
        None
    }

    fn quoted(&mut self) -> String {
        self.at += 1; // the opening quote
        let mut value = Vec::new();
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    if let Some(escaped) = self.peek() {
                        value.push(escaped);
                        self.at += 1;
                    }
                }
                _ => value.push(b),
            }
        }
        String::from_utf8_lossy(&value).into_owned()
    }

    fn token(&mut self) -> Option<String> {
        let start = self.at;
        while self.peek().is_some_and(is_tchar) {
            self.at += 1;
        }
        (self.at > start).then(|| String::from_utf8_lossy(&self.text[start..self.at]).into_owned())
    }

    fn skip_spaces(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    fn skip_separators(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_with_quoted_params() {
        let got = parse([
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#,
        ]);
        assert_eq!(got.len(), 1);
        assert!(got[0].is("bearer"));
        assert_eq!(got[0].param("error"), Some("insufficient_scope"));
        assert_eq!(got[0].param("SCOPE"), Some("files:read files:write"));
        assert_eq!(
            got[0].param("resource_metadata"),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
    }

    #[test]
    fn several_challenges_and_token68() {
        let got = parse([
            r#"Basic realm="a, b", DPoP algs="ES256 RS256", error=use_dpop_nonce"#,
            "Negotiate abc123==",
            "Bearer",
        ]);
        let schemes: Vec<_> = got.iter().map(|c| c.scheme.as_str()).collect();
        assert_eq!(schemes, ["Basic", "DPoP", "Negotiate", "Bearer"]);
        assert_eq!(got[0].param("realm"), Some("a, b"));
        assert_eq!(got[1].param("algs"), Some("ES256 RS256"));
        assert_eq!(got[1].param("error"), Some("use_dpop_nonce"));
        assert_eq!(got[2].token68.as_deref(), Some("abc123=="));
        assert!(got[3].params.is_empty());
        assert_eq!(
            oauth_challenge(&got).map(|c| c.scheme.as_str()),
            Some("Bearer")
        );
    }

    #[test]
    fn escapes_and_round_trip() {
        let text = format(
            "Bearer",
            &[
                ("error_description", r#"a "quoted" \ word"#),
                ("scope", "x"),
            ],
        );
        assert_eq!(
            text,
            r#"Bearer error_description="a \"quoted\" \\ word", scope="x""#
        );
        let back = parse([text.as_str()]);
        assert_eq!(
            back[0].param("error_description"),
            Some(r#"a "quoted" \ word"#)
        );
    }

    #[test]
    fn hostile_input_is_bounded() {
        let long = format!("Bearer {}", "a=\"b\", ".repeat(100_000));
        let got = parse([long.as_str()]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].params.len(), MAX_PARAMS);
        let many = "X, ".repeat(1000);
        assert_eq!(parse([many.as_str()]).len(), MAX_CHALLENGES);
        for garbage in [
            "",
            ",,,",
            "=",
            "\"",
            "Bearer =",
            "Bearer a=\"unterminated",
            "é",
        ] {
            let _ = parse([garbage]);
        }
    }
}
