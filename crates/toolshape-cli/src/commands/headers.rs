//! `--header 'Name: value'`: a header sent with every HTTP request to the
//! server (an API key, a static bearer token). `${NAME}` in the value is
//! replaced with the environment variable's value, so a secret need not
//! be on the command line (where other users can read it), as in a host's
//! config that sets the variable beside the command.

use axum::http::{HeaderMap, HeaderName, HeaderValue};

/// A `--header`, checked: its name, and its value with `${NAME}` expanded.
/// The value is never shown (it may be a secret).
#[derive(Clone)]
pub(crate) struct FixedHeader {
    name: HeaderName,
    value: HeaderValue,
}

impl std::fmt::Debug for FixedHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: (hidden)", self.name)
    }
}

impl FixedHeader {
    /// Whether it is an `Authorization` header: the credentials themselves
    /// (no OAuth then).
    pub(crate) fn is_authorization(&self) -> bool {
        self.name == axum::http::header::AUTHORIZATION
    }
}

/// The headers as one map (a name given twice is refused when connecting).
pub(crate) fn header_map(headers: &[FixedHeader]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for header in headers {
        map.append(header.name.clone(), header.value.clone());
    }
    map
}

/// Parses `Name: value`, expanding `${NAME}` from the environment.
pub(crate) fn parse_header(text: &str) -> Result<FixedHeader, String> {
    parse_with(text, |name| std::env::var(name).ok())
}

fn parse_with(text: &str, env: impl Fn(&str) -> Option<String>) -> Result<FixedHeader, String> {
    let Some((name, value)) = text.split_once(':') else {
        return Err("write Name: value".into());
    };
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("{:?} is not a header name", name.trim()))?;
    let value = expand(value.trim(), &env).map_err(|e| format!("{name}: {e}"))?;
    let mut value = HeaderValue::from_str(&value)
        .map_err(|_| format!("{name}: the value has characters a header cannot carry"))?;
    value.set_sensitive(true);
    Ok(FixedHeader { name, value })
}

/// `value` with each `${NAME}` replaced by the variable's value.
fn expand(value: &str, env: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut expanded = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        expanded.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err("a ${ without its }".into());
        };
        let variable = &after[..end];
        let well_formed = !variable.is_empty()
            && !variable.starts_with(|c: char| c.is_ascii_digit())
            && variable
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !well_formed {
            return Err(format!(
                "${{{variable}}} is not an environment variable's name"
            ));
        }
        let Some(found) = env(variable) else {
            return Err(format!("the environment variable {variable} is not set"));
        };
        expanded.push_str(&found);
        rest = &after[end + 1..];
    }
    expanded.push_str(rest);
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn a_header_is_a_name_and_a_value_with_variables_expanded() {
        let header = parse_with("Authorization: Bearer ${TOKEN}", env).map_err(|e| e.to_string());
        let header = header
            .as_ref()
            .map(|h| (h.name.as_str(), h.value.to_str().ok()));
        assert_eq!(header, Ok(("authorization", Some("Bearer s3cret"))));
        let plain = parse_with("X-Api-Key:k:1", env).map(|h| h.value);
        assert_eq!(
            plain.ok().as_ref().and_then(|v| v.to_str().ok()),
            Some("k:1")
        );
        for (bad, says) in [
            ("no colon", "Name: value"),
            ("Bad Name: x", "not a header name"),
            ("X: ${MISSING}", "MISSING is not set"),
            ("X: ${TOKEN", "without its }"),
            ("X: ${1A}", "not an environment variable's name"),
            ("X: a\u{7}b", "cannot carry"),
        ] {
            let error = parse_with(bad, env).err().unwrap_or_default();
            assert!(error.contains(says), "{bad}: {error}");
        }
        // The value is never shown.
        let shown = format!("{:?}", parse_with("X: ${TOKEN}", env));
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[test]
    fn only_an_authorization_header_carries_the_credentials() {
        let is_authorization = |text| parse_with(text, env).is_ok_and(|h| h.is_authorization());
        assert!(is_authorization("authorization: Bearer ${TOKEN}"));
        assert!(is_authorization("Authorization: Basic x"));
        assert!(!is_authorization("X-Api-Key: k"));
        assert!(!is_authorization("Proxy-Authorization: Basic x"));
    }
}
