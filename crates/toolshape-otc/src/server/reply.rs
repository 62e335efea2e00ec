//! Answers: JSON bodies with their status, and the error bodies of every
//! refusal (each a ServerErrorResponse, so every body the endpoint sends
//! has a declared schema).

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use toolshape::schema::Violation;
use toolshape::tool::MissingRequirements;

use crate::wire::{MissingRequirementsBody, ServerErrorBody, ValidationErrorBody};

/// A JSON body with a status.
pub(crate) fn json_bytes(status: StatusCode, body: impl Into<Bytes>) -> Response {
    let mut response = (status, body.into()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A value serialized as the JSON body.
pub(crate) fn json<T: Serialize>(status: StatusCode, body: &T) -> Response {
    json_bytes(status, serde_json::to_vec(body).unwrap_or_default())
}

/// A refusal: `{message}` with `status`.
pub(crate) fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    json(
        status,
        &ServerErrorBody {
            message: message.into(),
            ..ServerErrorBody::default()
        },
    )
}

/// 401 with the challenge.
pub(crate) fn unauthorized(message: &str) -> Response {
    let mut response = refuse(StatusCode::UNAUTHORIZED, message);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// 400: the call lacks what its tool requires; a missing provider's token
/// is a challenge when `urls` says where a user grants it.
pub(crate) fn missing_requirements(
    tool: &str,
    missing: &MissingRequirements,
    urls: &BTreeMap<String, String>,
) -> Response {
    let body = ServerErrorBody {
        message: format!("Tool {tool} cannot run: {missing}"),
        developer_message: None,
        missing_requirements: Some(MissingRequirementsBody {
            authorization: missing
                .authorization
                .iter()
                .filter_map(|id| Some(serde_json::json!({"id": id, "url": urls.get(id)?})))
                .collect(),
            secrets: missing
                .secrets
                .iter()
                .map(|id| serde_json::json!({"id": id}))
                .collect(),
            user_id: missing.user_id,
        }),
    };
    json(StatusCode::BAD_REQUEST, &body)
}

/// The parameter a violation is about: the first segment of its instance
/// path, or for a missing required property the property's name.
fn parameter_of(violation: &Violation) -> String {
    let segment = violation
        .instance_path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or("");
    if !segment.is_empty() {
        return segment.replace("~1", "/").replace("~0", "~");
    }
    if let Some(name) = &violation.missing_property {
        return name.clone();
    }
    "input".to_owned()
}

/// 422: the input does not match the tool's schema; each parameter with what is wrong.
pub(crate) fn invalid_input(tool: &str, violations: &[Violation]) -> Response {
    let mut parameter_errors: BTreeMap<String, String> = BTreeMap::new();
    for violation in violations {
        let entry = parameter_errors.entry(parameter_of(violation)).or_default();
        if !entry.is_empty() {
            entry.push_str("; ");
        }
        entry.push_str(&violation.message);
    }
    json(
        StatusCode::UNPROCESSABLE_ENTITY,
        &ValidationErrorBody {
            message: format!("Invalid input for tool {tool}"),
            parameter_errors,
        },
    )
}

/// 422 for input that could not be checked (too deep, over budget).
pub(crate) fn uncheckable_input(tool: &str, reason: &str) -> Response {
    let mut parameter_errors = BTreeMap::new();
    parameter_errors.insert("input".to_owned(), reason.to_owned());
    json(
        StatusCode::UNPROCESSABLE_ENTITY,
        &ValidationErrorBody {
            message: format!("Invalid input for tool {tool}"),
            parameter_errors,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn violation(path: &str, keyword: &str, message: &str) -> Violation {
        Violation::new(path, keyword, message)
    }

    #[test]
    fn violations_name_their_parameter() {
        assert_eq!(parameter_of(&violation("/a", "type", "x")), "a");
        assert_eq!(parameter_of(&violation("/a~1b/0", "type", "x")), "a/b");
        // A missing property by its name, never read from the message.
        let mut missing = violation("", "required", "\"c\" is a required property");
        missing.missing_property = Some("b".into());
        assert_eq!(parameter_of(&missing), "b");
        assert_eq!(
            parameter_of(&violation("", "type", "not an object")),
            "input"
        );
    }
}
