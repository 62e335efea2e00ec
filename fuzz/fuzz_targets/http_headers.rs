//! The header rules of Streamable HTTP (2026-07-28, SEP-2243).
//!
//! - Base64 sentinel values: any text encodes to a valid header value
//!   (visible ASCII, no surrounding space) that decodes back to it; a header
//!   that decodes, encoded and decoded again, gives the same text.
//! - `Mcp-Param-*` rules, from an input schema and arguments
//!   (`[schema, arguments]`): the headers a client writes always pass the
//!   server's check.
//! - The endpoint itself, for a request given as `[headers, body]` (the
//!   headers an object of strings, the body any JSON or raw text): never a
//!   5xx; every JSON body a JSON-RPC response; and a `tools/call` of the
//!   `header` tool answered with a result only when its headers match its
//!   body (checked here again, independently of the server).

#![no_main]

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Request, StatusCode};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use std::sync::OnceLock;
use toolshape::HttpOptions;
use toolshape_fuzz::{json_pair, runtime, server};
use toolshape_protocol::http::{ParamHeaders, decode_value, encode_value, names};
use toolshape_protocol::{Incoming, Response, classify};
use tower::ServiceExt;

fn check_sentinel(text: &str) {
    let encoded = encode_value(text);
    assert!(!encoded.is_empty(), "{text:?} encodes to nothing");
    assert!(
        encoded.bytes().all(|b| (0x20..=0x7e).contains(&b)),
        "{text:?} encodes to {encoded:?}, not visible ASCII"
    );
    assert_eq!(encoded.trim(), encoded, "{text:?}: surrounding space");
    assert!(HeaderValue::from_str(&encoded).is_ok(), "{encoded:?}");
    assert_eq!(decode_value(&encoded).as_deref(), Some(text), "{encoded:?}");
    if let Some(decoded) = decode_value(text) {
        assert_eq!(
            decode_value(&encode_value(&decoded)).as_deref(),
            Some(decoded.as_str())
        );
    }
}

fn check_param_rules(schema: &Value, arguments: &Value) {
    let Ok(rules) = ParamHeaders::from_input_schema(schema) else {
        return;
    };
    let arguments = arguments.as_object();
    let headers = rules.headers_for(arguments);
    for (name, value) in &headers {
        assert!(HeaderName::from_bytes(name.as_bytes()).is_ok(), "{name:?}");
        assert!(HeaderValue::from_str(value).is_ok(), "{value:?}");
    }
    let lookup = |name: &str| {
        headers
            .iter()
            .find(|(header, _)| *header == name)
            .map(|(_, value)| value.as_str())
    };
    if let Err(mismatch) = rules.check(arguments, lookup) {
        panic!("the headers written for {arguments:?} fail the check: {mismatch}");
    }
}

fn router() -> &'static axum::Router {
    static ROUTER: OnceLock<axum::Router> = OnceLock::new();
    ROUTER.get_or_init(|| {
        // Built inside the runtime: the router sweeps sessions on it.
        runtime().block_on(async { server::server().router(HttpOptions::default()) })
    })
}

/// The `header` tool's `Mcp-Param-*` rules.
fn header_rules() -> &'static ParamHeaders {
    static RULES: OnceLock<ParamHeaders> = OnceLock::new();
    RULES.get_or_init(|| {
        let schema = server::tools()
            .into_iter()
            .find(|tool| tool.name() == "header")
            .map(|tool| tool.input_schema().clone())
            .unwrap_or_default();
        match ParamHeaders::from_input_schema(&schema) {
            Ok(rules) => rules,
            Err(error) => panic!("the header tool's rules: {error}"),
        }
    })
}

/// What the server must have checked before running a `header` call: the
/// version, method and name headers, and each `Mcp-Param-*`.
fn headers_match(headers: &Map<String, Value>, body: &Value) -> bool {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .and_then(|(_, value)| value.as_str())
    };
    let params = &body["params"];
    let version = params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str();
    if header(names::PROTOCOL_VERSION) != version
        || header(names::METHOD) != Some("tools/call")
        || header(names::NAME).and_then(decode_value).as_deref() != params["name"].as_str()
    {
        return false;
    }
    header_rules()
        .check(params["arguments"].as_object(), header)
        .is_ok()
}

fn check_endpoint(headers: &Map<String, Value>, body: &Value) {
    let mut request = Request::post("/mcp");
    for (name, value) in headers {
        let Some(value) = value.as_str() else {
            continue;
        };
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) else {
            continue;
        };
        request = request.header(name, value);
    }
    let bytes = match body {
        Value::String(text) => text.clone().into_bytes(),
        other => other.to_string().into_bytes(),
    };
    let Ok(request) = request.body(Body::from(bytes)) else {
        return;
    };
    let router = router().clone();
    let (status, content_type, answer) = runtime().block_on(async {
        let response = match router.oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        // An event stream (a call with progress, a subscription) may never
        // end: only JSON bodies are read.
        if content_type != "application/json" {
            return (status, content_type, axum::body::Bytes::new());
        }
        let body = match axum::body::to_bytes(response.into_body(), 1 << 24).await {
            Ok(body) => body,
            Err(error) => panic!("the response body failed: {error}"),
        };
        (status, content_type, body)
    });
    assert!(
        !status.is_server_error() || status == StatusCode::SERVICE_UNAVAILABLE,
        "HTTP {status}: {}",
        String::from_utf8_lossy(&answer)
    );
    if content_type != "application/json" {
        return;
    }
    let response = match classify(&answer) {
        Incoming::Response(response) => response,
        other => panic!("a JSON body that is not a response: {other:?}"),
    };
    let is_header_call = body["method"] == "tools/call" && body["params"]["name"] == "header";
    if let (Response::Success { result, .. }, true) = (&response, is_header_call) {
        let ran = !result.get().contains("\"isError\":true");
        if ran {
            assert!(
                headers_match(headers, body),
                "a header call ran with headers that do not match its body: {headers:?}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check_sentinel(text);
    }
    let Some((first, second)) = json_pair(data) else {
        return;
    };
    check_param_rules(&first, &second);
    if let Value::Object(headers) = &first {
        check_endpoint(headers, &second);
    }
});
