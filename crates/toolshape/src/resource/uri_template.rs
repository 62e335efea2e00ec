//! RFC 6570 URI templates, as far as a server needs them: matching a URI
//! against a template to find its variables. Levels 1 to 3 are understood
//! (`{var}`, `{+var}`, `{#var}`, `{/var}`, `{.var}`, `{;var}`, `{?a,b}`,
//! `{&a}`); matching runs in linear time (the `regex` crate), and the
//! template and the URI are bounded in length.

use std::collections::BTreeMap;

use regex::Regex;

/// Longest template accepted, in bytes.
const MAX_TEMPLATE_BYTES: usize = 1024;
/// Longest URI matched, in bytes.
pub(crate) const MAX_URI_BYTES: usize = 8 * 1024;
/// Most expressions in one template.
const MAX_EXPRESSIONS: usize = 16;
/// Most variable names in one template, over all its expressions (each,
/// but a query expression's, is a capture group: hundreds would make
/// matching slow and large; a query's names are counted too, each read
/// from the query by name).
const MAX_VARIABLES: usize = 32;

/// Why a template cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UriTemplateError {
    /// Longer than the bound.
    #[error("the URI template is longer than {MAX_TEMPLATE_BYTES} bytes")]
    TooLong,
    /// More expressions than the bound.
    #[error("the URI template has more than {MAX_EXPRESSIONS} expressions")]
    TooManyExpressions,
    /// More variables than the bound, over all expressions.
    #[error("the URI template has more than {MAX_VARIABLES} variables")]
    TooManyVariables,
    /// A `{` without its `}`, an empty expression, or a bad variable name.
    #[error("the URI template is malformed: {0}")]
    Malformed(String),
}

/// A template, compiled for matching.
#[derive(Debug, Clone)]
pub(crate) struct UriTemplate {
    text: String,
    pattern: Regex,
    /// For each capture group: the variable, and whether it is a query
    /// expression's whole `name=value&...` part.
    captures: Vec<Capture>,
}

#[derive(Debug, Clone)]
enum Capture {
    Variable(String),
    Query(Vec<String>),
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'%')
}

impl UriTemplate {
    pub(crate) fn parse(text: &str) -> Result<UriTemplate, UriTemplateError> {
        if text.len() > MAX_TEMPLATE_BYTES {
            return Err(UriTemplateError::TooLong);
        }
        let mut pattern = String::from("^");
        let mut captures = Vec::new();
        let (mut expressions, mut variables) = (0, 0);
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            pattern.push_str(&regex::escape(&rest[..open]));
            let after = &rest[open + 1..];
            let close = after
                .find('}')
                .ok_or_else(|| UriTemplateError::Malformed("a `{` is not closed".into()))?;
            let expression = &after[..close];
            rest = &after[close + 1..];
            expressions += 1;
            if expressions > MAX_EXPRESSIONS {
                return Err(UriTemplateError::TooManyExpressions);
            }
            let (operator, names) = match expression.chars().next() {
                Some(op @ ('+' | '#' | '/' | '.' | ';' | '?' | '&')) => {
                    (Some(op), &expression[1..])
                }
                _ => (None, expression),
            };
            let names: Vec<String> = names
                .split(',')
                .map(|name| name.trim_end_matches('*').to_owned())
                .collect();
            variables += names.len();
            if variables > MAX_VARIABLES {
                return Err(UriTemplateError::TooManyVariables);
            }
            if let Some(bad) = names.iter().find(|name| !valid_name(name)) {
                return Err(UriTemplateError::Malformed(format!(
                    "bad variable name {:?}",
                    toolshape_protocol::text::excerpt(bad, 40)
                )));
            }
            match operator {
                Some('?' | '&') => {
                    let lead = if operator == Some('?') { r"\?" } else { "&" };
                    pattern.push_str(&format!("(?:{lead}([^#]*))?"));
                    captures.push(Capture::Query(names));
                }
                _ => {
                    let (lead, value, separator) = match operator {
                        Some('+') => ("", "[^?#]*", ","),
                        Some('#') => ("#", ".*", ","),
                        Some('/') => ("/", "[^/?#]*", "/"),
                        Some('.') => (r"\.", "[^/?#.]*", r"\."),
                        Some(';') => (";", "[^/?#;]*", ";"),
                        _ => ("", "[^/?#,]*", ","),
                    };
                    pattern.push_str(lead);
                    for (index, name) in names.iter().enumerate() {
                        if index > 0 {
                            pattern.push_str(separator);
                        }
                        if operator == Some(';') {
                            pattern.push_str(&regex::escape(name));
                            pattern.push_str("=?");
                        }
                        pattern.push_str(&format!("({value})"));
                        captures.push(Capture::Variable(name.clone()));
                    }
                }
            }
        }
        if rest.contains('}') {
            return Err(UriTemplateError::Malformed("a `}` without its `{`".into()));
        }
        pattern.push_str(&regex::escape(rest));
        pattern.push('$');
        let pattern =
            Regex::new(&pattern).map_err(|e| UriTemplateError::Malformed(e.to_string()))?;
        Ok(UriTemplate {
            text: text.to_owned(),
            pattern,
            captures,
        })
    }

    /// The names of its variables, in order.
    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.captures
            .iter()
            .flat_map(|capture| match capture {
                Capture::Variable(name) => std::slice::from_ref(name),
                Capture::Query(names) => names.as_slice(),
            })
            .map(String::as_str)
    }

    /// The template as written.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The variables of `uri`, when it matches (values percent-decoded).
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        if uri.len() > MAX_URI_BYTES {
            return None;
        }
        let found = self.pattern.captures(uri)?;
        let mut variables = BTreeMap::new();
        for (index, capture) in self.captures.iter().enumerate() {
            let Some(value) = found.get(index + 1) else {
                continue;
            };
            match capture {
                Capture::Variable(name) => {
                    variables.insert(name.clone(), percent_decode(value.as_str()));
                }
                Capture::Query(names) => {
                    for pair in value.as_str().split('&') {
                        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                        if names.iter().any(|name| name == key) {
                            variables.insert(key.to_owned(), percent_decode(value));
                        }
                    }
                }
            }
        }
        Some(variables)
    }
}

/// `text` with its `%XX` sequences decoded, as a template's variables are
/// when a URI matches it (invalid sequences kept as they are; invalid UTF-8
/// replaced): for a completer, say, to read a partial value written as the
/// URI writes it.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match decoded {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        let template = UriTemplate::parse(template).ok()?;
        template.matches(uri).map(|v| v.into_iter().collect())
    }

    #[test]
    fn matches_simple_reserved_and_path_expressions() {
        assert_eq!(
            vars("test://template/{id}/data", "test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(
            vars("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            vars("file:///{+path}", "file:///src/lib.rs"),
            Some(vec![("path".into(), "src/lib.rs".into())])
        );
        assert_eq!(
            vars("repo://{owner}{/name}", "repo://me/x%20y"),
            Some(vec![
                ("name".into(), "x y".into()),
                ("owner".into(), "me".into())
            ])
        );
        assert_eq!(
            vars(
                "search://q{?term,page}",
                "search://q?page=2&term=rust&other=1"
            ),
            Some(vec![
                ("page".into(), "2".into()),
                ("term".into(), "rust".into())
            ])
        );
        assert_eq!(vars("search://q{?term}", "search://q"), Some(vec![]));
    }

    #[test]
    fn bad_templates_are_refused() {
        assert!(UriTemplate::parse("x://{unclosed").is_err());
        assert!(UriTemplate::parse("x://}").is_err());
        assert!(UriTemplate::parse("x://{}").is_err());
        assert!(UriTemplate::parse(&"{a}".repeat(20)).is_err());
        // Variables are bounded over all expressions, not only expressions.
        let names = |n: usize| vec!["a"; n].join(",");
        assert!(UriTemplate::parse(&format!("x{{+{}}}", names(32))).is_ok());
        assert_eq!(
            UriTemplate::parse(&format!("x{{+{}}}", names(33))).err(),
            Some(UriTemplateError::TooManyVariables)
        );
        assert_eq!(
            UriTemplate::parse(&format!("x{{+{}}}", names(500))).err(),
            Some(UriTemplateError::TooManyVariables)
        );
        assert_eq!(
            UriTemplate::parse(&format!("{{a,b,c}}{}", "{d,e}".repeat(15))).err(),
            Some(UriTemplateError::TooManyVariables)
        );
        assert!(UriTemplate::parse(&"a".repeat(2000)).is_err());
        let template = UriTemplate::parse("x://{+rest}");
        assert!(template.is_ok_and(|t| t.matches(&"a".repeat(MAX_URI_BYTES + 1)).is_none()));
    }
}
