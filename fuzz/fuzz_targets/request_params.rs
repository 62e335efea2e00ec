//! Every request's and notification's params, decoded per revision.
//!
//! The first byte picks the method, the second the revision; the rest is
//! the params (JSON). Two properties:
//! - decoding round-trips: params that decode into their typed form,
//!   encoded again, decode to the same thing;
//! - served by a real server on that revision (a handshake first for the
//!   revisions that have one, `_meta` filled in for 2026-07-28), a request
//!   gets exactly one answer (a `subscriptions/listen` at most one, an
//!   error: an open stream is acknowledged by a notification), and a result has the revision's shape: a
//!   `tools/call` result carries `resultType` only on 2026-07-28,
//!   `structuredContent` never before 2025-06-18 and only as an object
//!   before 2026-07-28; a `tools/list` page carries `outputSchema`s only
//!   from 2025-06-18 on, object-rooted before 2026-07-28.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use toolshape_fuzz::server;
use toolshape_protocol::meta::keys;
use toolshape_protocol::{
    CallToolResult, KnownNotification, KnownRequest, ListToolsResult, Notification,
    ProtocolVersion, Request, RequestId, Response, methods,
};

const REQUESTS: [&str; 8] = [
    methods::INITIALIZE,
    methods::SERVER_DISCOVER,
    methods::PING,
    methods::TOOLS_LIST,
    methods::TOOLS_CALL,
    methods::LOGGING_SET_LEVEL,
    methods::SUBSCRIPTIONS_LISTEN,
    "unknown/method",
];

const NOTIFICATIONS: [&str; 9] = [
    methods::INITIALIZED,
    methods::CANCELLED,
    methods::PROGRESS,
    methods::TOOLS_LIST_CHANGED,
    methods::LOGGING_MESSAGE,
    methods::RESOURCES_UPDATED,
    methods::RESOURCES_LIST_CHANGED,
    methods::PROMPTS_LIST_CHANGED,
    methods::SUBSCRIPTIONS_ACKNOWLEDGED,
];

/// The typed params of a known request, encoded again.
fn encode_request(request: &KnownRequest) -> Option<String> {
    let encoded = match request {
        KnownRequest::Initialize(params) => serde_json::to_string(params.as_ref()),
        KnownRequest::Discover(params) | KnownRequest::Ping(params) => {
            serde_json::to_string(params)
        }
        KnownRequest::ListTools(params) => serde_json::to_string(params),
        KnownRequest::CallTool(params) => serde_json::to_string(params),
        KnownRequest::SetLoggingLevel(params) => serde_json::to_string(params),
        KnownRequest::Listen(params) => serde_json::to_string(params),
        _ => return None,
    };
    match encoded {
        Ok(text) => Some(text),
        Err(error) => panic!("decoded params do not encode: {error}"),
    }
}

fn encode_notification(notification: &KnownNotification) -> String {
    let encoded = match notification {
        KnownNotification::Initialized(params)
        | KnownNotification::ToolListChanged(params)
        | KnownNotification::ResourceListChanged(params)
        | KnownNotification::PromptListChanged(params) => serde_json::to_string(params),
        KnownNotification::ResourceUpdated(params) => serde_json::to_string(params),
        KnownNotification::SubscriptionsAcknowledged(params) => serde_json::to_string(params),
        KnownNotification::ElicitationComplete(params) => serde_json::to_string(params),
        KnownNotification::Cancelled(params) => serde_json::to_string(params),
        KnownNotification::Progress(params) => serde_json::to_string(params),
        KnownNotification::LoggingMessage(params) => serde_json::to_string(params),
    };
    match encoded {
        Ok(text) => text,
        Err(error) => panic!("decoded params do not encode: {error}"),
    }
}

fn raw(text: String) -> Box<RawValue> {
    match RawValue::from_string(text) {
        Ok(raw) => raw,
        Err(error) => panic!("encoded params are not JSON: {error}"),
    }
}

fn round_trip_request(method: &str, params: &Box<RawValue>) {
    let request = Request {
        id: RequestId::Number(1),
        method: method.to_owned(),
        params: Some(params.clone()),
    };
    let Ok(decoded) = KnownRequest::from_request(&request) else {
        return;
    };
    let Some(encoded) = encode_request(&decoded) else {
        return;
    };
    let again = Request {
        params: Some(raw(encoded)),
        ..request
    };
    match KnownRequest::from_request(&again) {
        Ok(twice) => assert_eq!(twice, decoded, "{method} params do not round-trip"),
        Err(error) => panic!("{method}: re-encoded params do not decode: {error}"),
    }
}

fn round_trip_notification(method: &str, params: &Box<RawValue>) {
    let notification = Notification {
        method: method.to_owned(),
        params: Some(params.clone()),
    };
    let Ok(decoded) = KnownNotification::from_notification(&notification) else {
        return;
    };
    let again = Notification {
        params: Some(raw(encode_notification(&decoded))),
        ..notification
    };
    match KnownNotification::from_notification(&again) {
        Ok(twice) => assert_eq!(twice, decoded, "{method} params do not round-trip"),
        Err(error) => panic!("{method}: re-encoded params do not decode: {error}"),
    }
}

/// The 2026-07-28 `_meta` keys a stateless request must carry, added where missing.
fn with_modern_meta(params: Value) -> Value {
    let Value::Object(mut object) = params else {
        return params;
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.entry(keys::PROTOCOL_VERSION)
            .or_insert_with(|| json!("2026-07-28"));
        meta.entry(keys::CLIENT_CAPABILITIES)
            .or_insert_with(|| json!({}));
    }
    Value::Object(object)
}

/// The revision a request is served under: a stateless one its `_meta`
/// names, else the connection's.
fn effective(version: ProtocolVersion, params: &Value) -> ProtocolVersion {
    let named = params
        .get("_meta")
        .and_then(|meta| meta.get(keys::PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .and_then(ProtocolVersion::parse);
    match named {
        Some(named) if named.is_stateless() => named,
        _ => version,
    }
}

fn line(message: &Value) -> String {
    let mut text = message.to_string();
    text.push('\n');
    text
}

/// The request served on `version`; its one answer.
fn serve(version: ProtocolVersion, method: &str, params: Value, notify: bool) -> Vec<Response> {
    let mut input = String::new();
    if version.uses_initialize_handshake() {
        input.push_str(&line(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": version.as_str(), "capabilities": {},
                       "clientInfo": {"name": "fuzz", "version": "0"}}}),
        ));
        input.push_str(&line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ));
    }
    let params = if version.is_stateless() {
        with_modern_meta(params)
    } else {
        params
    };
    if notify {
        input.push_str(&line(
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        ));
        // Still alive and answering afterwards.
        let ping = if version.is_stateless() {
            json!({"jsonrpc": "2.0", "id": "after", "method": "tools/list",
                   "params": with_modern_meta(json!({}))})
        } else {
            json!({"jsonrpc": "2.0", "id": "after", "method": "ping"})
        };
        input.push_str(&line(&ping));
    } else {
        input.push_str(&line(
            &json!({"jsonrpc": "2.0", "id": "fuzzed", "method": method, "params": params}),
        ));
    }
    let answers = server::responses(&server::serve(input.as_bytes()));
    answers
        .into_iter()
        .filter(|answer| answer.id() != Some(&RequestId::String("init".into())))
        .collect()
}

fn check_call_result(version: ProtocolVersion, result: &RawValue) {
    let result: CallToolResult = match serde_json::from_str(result.get()) {
        Ok(result) => result,
        Err(error) => panic!("a tools/call result does not decode: {error}"),
    };
    assert_eq!(
        result.result_type.is_some(),
        version.has_result_type(),
        "{version:?}: resultType"
    );
    match &result.structured_content {
        None => {}
        Some(_) if !version.supports_structured_output() => {
            panic!("{version:?}: structuredContent before 2025-06-18")
        }
        Some(value) if !version.allows_any_structured_content() => {
            assert!(value.is_object(), "{version:?}: structuredContent {value}")
        }
        Some(_) => {}
    }
}

fn check_list_result(version: ProtocolVersion, result: &RawValue) {
    let page: ListToolsResult = match serde_json::from_str(result.get()) {
        Ok(page) => page,
        Err(error) => panic!("a tools/list result does not decode: {error}"),
    };
    assert_eq!(page.result_type.is_some(), version.has_result_type());
    for tool in &page.tools {
        match &tool.output_schema {
            None => {}
            Some(_) if !version.supports_structured_output() => {
                panic!("{version:?}: outputSchema before 2025-06-18")
            }
            Some(schema) if !version.allows_any_structured_content() => {
                assert_eq!(schema.get("type"), Some(&json!("object")), "{version:?}")
            }
            Some(_) => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [selector, revision, rest @ ..] = data else {
        return;
    };
    // Lines over the server's size limit are stdio_frames' business: here
    // every message must be read.
    if rest.len() > server::MAX_MESSAGE_BYTES / 2 {
        return;
    }
    let Ok(params) = serde_json::from_slice::<Box<RawValue>>(rest) else {
        return;
    };
    let version = ProtocolVersion::ALL[usize::from(*revision) % ProtocolVersion::ALL.len()];
    let index = usize::from(*selector) % (REQUESTS.len() + NOTIFICATIONS.len());
    let Ok(value) = serde_json::from_str::<Value>(params.get()) else {
        return;
    };
    if let Some(method) = REQUESTS.get(index) {
        round_trip_request(method, &params);
        let served = effective(version, &value);
        let answers = serve(version, method, value, false);
        if *method == methods::SUBSCRIPTIONS_LISTEN {
            // An opened stream is acknowledged by a notification and
            // answered only when it ends: at most one answer, an error.
            assert!(answers.len() <= 1, "{version:?} {method}: {answers:?}");
            assert!(answers.iter().all(Response::is_error), "{answers:?}");
            return;
        }
        assert_eq!(answers.len(), 1, "{version:?} {method}: {answers:?}");
        let Response::Success { id, result } = &answers[0] else {
            return;
        };
        assert_eq!(id, &RequestId::String("fuzzed".into()));
        match *method {
            methods::TOOLS_CALL => check_call_result(served, result),
            methods::TOOLS_LIST => check_list_result(served, result),
            _ => {}
        }
    } else {
        let method = NOTIFICATIONS[index - REQUESTS.len()];
        round_trip_notification(method, &params);
        // Params that are neither object nor array make the notification
        // an invalid message: that gets an error without an id.
        let invalid = !(value.is_object() || value.is_array() || value.is_null());
        let answers = serve(version, method, value, true);
        let (after, others): (Vec<&Response>, Vec<&Response>) = answers
            .iter()
            .partition(|answer| answer.id() == Some(&RequestId::String("after".into())));
        assert_eq!(after.len(), 1, "{version:?} {method}: {answers:?}");
        assert_eq!(
            others.len(),
            usize::from(invalid),
            "{version:?} {method}: {answers:?}"
        );
        for other in others {
            assert!(other.is_error() && other.id().is_none(), "{other:?}");
        }
    }
});
