//! The header rules of 2026-07-28 Streamable HTTP: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` must match the body; a request
//! that breaks one gets `400` and `-32020` (HeaderMismatch).

// A refusal is an axum `Response`, returned by value as axum handlers do.
#![allow(clippy::result_large_err)]

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;
use toolshape_protocol::{ErrorObject, Request, methods};

use super::response;
use super::routes::{App, header};
use crate::transport::headers;

fn mismatch(request: &Request, what: String) -> Response {
    response::error(
        StatusCode::BAD_REQUEST,
        Some(&request.id),
        &ErrorObject::header_mismatch(format!("Header mismatch: {what}")),
    )
}

/// The checks 2026-07-28 puts on a request's headers.
pub(super) fn check_modern_headers(
    app: &App,
    headers: &HeaderMap,
    request: &Request,
    version: &str,
) -> Result<(), Response> {
    match header(headers, headers::PROTOCOL_VERSION) {
        None => {
            return Err(mismatch(
                request,
                "the MCP-Protocol-Version header is missing".into(),
            ));
        }
        Some(value) if value != version => {
            return Err(mismatch(
                request,
                format!("MCP-Protocol-Version {value:?} does not match the body's {version:?}"),
            ));
        }
        Some(_) => {}
    }
    match header(headers, headers::METHOD) {
        None => return Err(mismatch(request, "the Mcp-Method header is missing".into())),
        Some(value) if value != request.method => {
            let value = crate::text::excerpt(value, 100);
            return Err(mismatch(
                request,
                format!("Mcp-Method {value:?} does not match the body"),
            ));
        }
        Some(_) => {}
    }
    if request.method == methods::TOOLS_CALL {
        let params = request
            .params
            .as_deref()
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok());
        let name = params
            .as_ref()
            .and_then(|params| params.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let header_name = header(headers, headers::NAME).map(headers::decode_value);
        if let (Some(name), Some(params)) = (&name, &params)
            && let Some(tool) = app.shared.registry.get(name)
        {
            check_param_headers(headers, request, &tool.definition.input_schema, params)?;
        }
        match (name, header_name) {
            (Some(_), None) => {
                return Err(mismatch(request, "the Mcp-Name header is missing".into()));
            }
            (_, Some(None)) => {
                return Err(mismatch(request, "the Mcp-Name header is malformed".into()));
            }
            (Some(body), Some(Some(value))) if body != value => {
                return Err(mismatch(
                    request,
                    "Mcp-Name does not match the body's tool name".into(),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// SEP-2243: every argument whose input-schema property carries
/// `x-mcp-header: NAME` travels in an `Mcp-Param-NAME` header too (plain, or
/// `=?base64?…?=`); the server rejects a call whose header is missing,
/// malformed or differs from the argument, as a header mismatch.
fn check_param_headers(
    headers: &HeaderMap,
    request: &Request,
    input_schema: &Value,
    params: &Value,
) -> Result<(), Response> {
    let Some(properties) = input_schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    let arguments = params.get("arguments");
    for (property, schema) in properties {
        let Some(suffix) = schema.get("x-mcp-header").and_then(Value::as_str) else {
            continue;
        };
        let expected = match arguments.and_then(|arguments| arguments.get(property)) {
            Some(Value::String(text)) => Value::String(text.clone()),
            Some(value @ (Value::Number(_) | Value::Bool(_))) => value.clone(),
            // Absent or null: no header is expected.
            _ => continue,
        };
        let name = format!("mcp-param-{}", suffix.to_ascii_lowercase());
        let shown = crate::text::excerpt(suffix, 60);
        let Some(raw) = header(headers, &name) else {
            return Err(mismatch(
                request,
                format!("the Mcp-Param-{shown} header is missing"),
            ));
        };
        let Some(value) = headers::decode_value(raw) else {
            return Err(mismatch(
                request,
                format!("the Mcp-Param-{shown} header is malformed"),
            ));
        };
        let matches = match &expected {
            Value::String(text) => &value == text,
            Value::Bool(flag) => value == flag.to_string(),
            Value::Number(number) => value
                .parse::<f64>()
                .ok()
                .zip(number.as_f64())
                .is_some_and(|(got, want)| got == want),
            _ => false,
        };
        if !matches {
            return Err(mismatch(
                request,
                format!("Mcp-Param-{shown} does not match the argument {property:?}"),
            ));
        }
    }
    Ok(())
}
