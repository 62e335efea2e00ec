//! Turning the validator's errors into short, capped violation reports.

use jsonschema::ValidationError as RawError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::error::Violation;

/// `text` cut to at most `max_chars` characters, with `…` when cut.
pub(crate) fn excerpt(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let mut short = text[..cut].to_owned();
            short.push('…');
            short
        }
    }
}

/// Instances whose compact JSON is at most this long are quoted in messages.
const QUOTABLE_SCALAR_CHARS: usize = 40;

fn is_quotable(instance: &Value) -> bool {
    match instance {
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
        Value::String(s) => s.len() <= QUOTABLE_SCALAR_CHARS,
        Value::Array(_) | Value::Object(_) => false,
    }
}

/// One violation from one raw error. Only short scalars are ever quoted.
pub(crate) fn violation(error: &RawError<'_>, max_chars: usize) -> Violation {
    let message = if is_quotable(error.instance()) {
        error.to_string()
    } else {
        error.masked().to_string()
    };
    let missing_property = match error.kind() {
        ValidationErrorKind::Required { property } => {
            property.as_str().map(|name| excerpt(name, max_chars))
        }
        _ => None,
    };
    Violation {
        instance_path: excerpt(error.instance_path().as_str(), max_chars),
        keyword: error.kind().keyword().to_owned(),
        schema_path: excerpt(error.evaluation_path().as_str(), max_chars),
        message: excerpt(&message, max_chars),
        missing_property,
    }
}

/// Up to `max` violations from `errors`, and whether more were left out.
pub(crate) fn collect<'i>(
    errors: impl Iterator<Item = RawError<'i>>,
    max: usize,
    max_chars: usize,
) -> (Vec<Violation>, bool) {
    let mut violations = Vec::new();
    for error in errors {
        if violations.len() == max {
            return (violations, true);
        }
        violations.push(violation(&error, max_chars));
    }
    (violations, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_required_violation_names_the_missing_property() {
        let compiled = crate::SchemaEngine::default()
            .compile(&serde_json::json!({"properties": {"inner": {"type": "object", "required": ["a b/c"]}}}))
            .unwrap();
        let error = compiled
            .validate(&serde_json::json!({"inner": {}}))
            .unwrap_err();
        let violation = &error.violations()[0];
        assert_eq!(
            (violation.instance_path.as_str(), violation.keyword.as_str()),
            ("/inner", "required")
        );
        assert_eq!(violation.missing_property.as_deref(), Some("a b/c"));
        let typed = compiled
            .validate(&serde_json::json!({"inner": 1}))
            .err()
            .map(|error| error.violations()[0].missing_property.clone());
        assert_eq!(typed, Some(None));
    }

    #[test]
    fn excerpt_cuts_on_characters() {
        assert_eq!(excerpt("héllo", 2), "hé…");
        assert_eq!(excerpt("hi", 2), "hi");
    }
}
