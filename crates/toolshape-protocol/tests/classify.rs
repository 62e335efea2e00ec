//! The message classifier: JSON-RPC 2.0 semantics as MCP narrows them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;

use serde_json::{Value, json};
use toolshape_protocol::jsonrpc::{Notification, Request, Response};
use toolshape_protocol::{
    ErrorObject, Incoming, RequestId, classify, error_code, write_error, write_message,
    write_result,
};

/// Asserts `input` is invalid with `code` and the given id.
#[track_caller]
fn assert_invalid(input: &[u8], code: i64, id: Option<RequestId>) -> ErrorObject {
    match classify(input) {
        Incoming::Invalid { id: got_id, error } => {
            assert_eq!(
                error.code,
                code,
                "code for {}: {error}",
                String::from_utf8_lossy(input)
            );
            assert_eq!(got_id, id, "id for {}", String::from_utf8_lossy(input));
            error
        }
        other => panic!("{} classified as {other:?}", String::from_utf8_lossy(input)),
    }
}

#[track_caller]
fn request(input: &str) -> Request {
    match classify(input.as_bytes()) {
        Incoming::Request(request) => request,
        other => panic!("{input} classified as {other:?}"),
    }
}

#[track_caller]
fn notification(input: &str) -> Notification {
    match classify(input.as_bytes()) {
        Incoming::Notification(notification) => notification,
        other => panic!("{input} classified as {other:?}"),
    }
}

#[track_caller]
fn response(input: &str) -> Response {
    match classify(input.as_bytes()) {
        Incoming::Response(response) => response,
        other => panic!("{input} classified as {other:?}"),
    }
}

#[test]
fn bad_json_is_a_parse_error_without_id() {
    for input in [
        &b"{"[..],
        b"not json",
        b"",
        b"   \n",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"} trailing",
        b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}{\"jsonrpc\":\"2.0\",\"method\":\"y\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}",
        b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
        b"[1, 2",
        b"{'jsonrpc': '2.0'}",
    ] {
        let error = assert_invalid(input, error_code::PARSE_ERROR, None);
        assert!(
            error.message.starts_with("Parse error"),
            "{}",
            error.message
        );
    }
}

#[test]
fn non_objects_and_batches_are_invalid_requests() {
    for input in ["1", "\"text\"", "null", "true"] {
        assert_invalid(input.as_bytes(), error_code::INVALID_REQUEST, None);
    }
    for input in [
        "[]",
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        " [1,2,3] ",
    ] {
        let error = assert_invalid(input.as_bytes(), error_code::INVALID_REQUEST, None);
        assert!(error.message.contains("batch"), "{}", error.message);
    }
}

#[test]
fn wrong_jsonrpc_member_is_invalid_but_keeps_the_id() {
    let id = Some(RequestId::Number(5));
    assert_invalid(
        br#"{"id":5,"method":"ping"}"#,
        error_code::INVALID_REQUEST,
        id.clone(),
    );
    assert_invalid(
        br#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#,
        error_code::INVALID_REQUEST,
        id.clone(),
    );
    assert_invalid(
        br#"{"jsonrpc":2.0,"id":5,"method":"ping"}"#,
        error_code::INVALID_REQUEST,
        id,
    );
    assert_invalid(
        br#"{"jsonrpc":null,"id":"a","method":"ping"}"#,
        error_code::INVALID_REQUEST,
        Some(RequestId::from("a")),
    );
    // Escapes are legal JSON spellings of "2.0".
    request(r#"{"jsonrpc":"2\u002e0","id":1,"method":"ping"}"#);
}

#[test]
fn wrong_member_types_are_invalid_requests() {
    let id = Some(RequestId::Number(1));
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"method":42}"#,
        error_code::INVALID_REQUEST,
        id.clone(),
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"method":null}"#,
        error_code::INVALID_REQUEST,
        id.clone(),
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}"#,
        error_code::INVALID_REQUEST,
        id.clone(),
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
        error_code::INVALID_REQUEST,
        id,
    );
    for bad_id in ["true", "1.5", "1e3", "{}", "[1]", "null"] {
        let input = format!(r#"{{"jsonrpc":"2.0","id":{bad_id},"method":"x"}}"#);
        assert_invalid(input.as_bytes(), error_code::INVALID_REQUEST, None);
    }
    assert_invalid(br#"{"jsonrpc":"2.0"}"#, error_code::INVALID_REQUEST, None);
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":7}"#,
        error_code::INVALID_REQUEST,
        Some(RequestId::Number(7)),
    );
}

#[test]
fn duplicate_members_are_rejected() {
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
        error_code::INVALID_REQUEST,
        None,
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","method":"x","method":"y"}"#,
        error_code::INVALID_REQUEST,
        None,
    );
}

#[test]
fn string_and_numeric_ids_are_kept_exactly() {
    let numeric = request(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let textual = request(r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#);
    assert_eq!(numeric.id, RequestId::Number(1));
    assert_eq!(textual.id, RequestId::String("1".into()));
    assert_ne!(numeric.id, textual.id);
    let ids: HashSet<RequestId> = [
        numeric.id.clone(),
        textual.id.clone(),
        RequestId::from(1_i64),
    ]
    .into();
    assert_eq!(ids.len(), 2);
    assert_eq!(numeric.id.to_string(), "1");
    assert_eq!(textual.id.to_string(), "1");
    assert_eq!(serde_json::to_string(&numeric.id).unwrap(), "1");
    assert_eq!(serde_json::to_string(&textual.id).unwrap(), "\"1\"");
    let escaped = request(r#"{"jsonrpc":"2.0","id":"a\"b\u00e9","method":"ping"}"#);
    assert_eq!(escaped.id, RequestId::from("a\"bé"));
    assert_eq!(
        request(r#"{"jsonrpc":"2.0","id":-3,"method":"ping"}"#).id,
        RequestId::Number(-3)
    );
    assert_eq!(
        request(r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#).id,
        RequestId::from("")
    );
}

#[test]
fn huge_numbers_never_panic() {
    let max = request(r#"{"jsonrpc":"2.0","id":9223372036854775807,"method":"x"}"#);
    assert_eq!(max.id, RequestId::Number(i64::MAX));
    let min = request(r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"x"}"#);
    assert_eq!(min.id, RequestId::Number(i64::MIN));
    for too_big in [
        "9223372036854775808",
        "18446744073709551616",
        "-9223372036854775809",
        "1e400",
        "123456789012345678901234567890",
    ] {
        let input = format!(r#"{{"jsonrpc":"2.0","id":{too_big},"method":"x"}}"#);
        assert_invalid(input.as_bytes(), error_code::INVALID_REQUEST, None);
    }
    // Huge numbers inside params are carried as raw text, untouched.
    let big = request(
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":1e400,"m":123456789012345678901234567890}}"#,
    );
    assert_eq!(
        big.params.unwrap().get(),
        r#"{"n":1e400,"m":123456789012345678901234567890}"#
    );
}

#[test]
fn notifications_have_no_id() {
    let bare = notification(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(bare.method, "notifications/initialized");
    assert!(bare.params.is_none());
    let with_params = notification(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"123"}}"#,
    );
    assert_eq!(with_params.params.unwrap().get(), r#"{"requestId":"123"}"#);
    // `"params": null` is read as absent; unknown members are ignored.
    assert!(
        notification(r#"{"jsonrpc":"2.0","method":"x","params":null,"extra":[1,{"a":2}]}"#)
            .params
            .is_none()
    );
}

#[test]
fn responses_are_recognised_where_a_request_was_expected() {
    match response(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#) {
        Response::Success { id, result } => {
            assert_eq!(id, RequestId::Number(1));
            assert_eq!(result.get(), "{}");
        }
        other => panic!("{other:?}"),
    }
    let error = response(
        r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"nope","data":null}}"#,
    );
    assert_eq!(error.id(), Some(&RequestId::from("a")));
    let Response::Error { error, .. } = error else {
        panic!()
    };
    assert_eq!(error.data, Some(Value::Null), "explicit null data is kept");
    // Error responses to unreadable requests carry a null (or no) id.
    assert_eq!(
        response(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#).id(),
        None
    );
    assert_eq!(
        response(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}"#).id(),
        None
    );
}

#[test]
fn malformed_responses_are_invalid() {
    let one = Some(RequestId::Number(1));
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
        error_code::INVALID_REQUEST,
        one.clone(),
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
        error_code::INVALID_REQUEST,
        one.clone(),
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","result":{}}"#,
        error_code::INVALID_REQUEST,
        None,
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        error_code::INVALID_REQUEST,
        None,
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
        error_code::INVALID_REQUEST,
        one.clone(),
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}"#,
        error_code::INVALID_REQUEST,
        one.clone(),
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":1,"error":"boom"}"#,
        error_code::INVALID_REQUEST,
        one,
    );
    assert_invalid(
        br#"{"jsonrpc":"2.0","id":true,"error":{"code":1,"message":"m"}}"#,
        error_code::INVALID_REQUEST,
        None,
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let depth = 200_000;
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert_invalid(nested.as_bytes(), error_code::INVALID_REQUEST, None);
    assert_invalid("[".repeat(depth).as_bytes(), error_code::PARSE_ERROR, None);
    // Deep params are passed through raw; parsing them later fails cleanly.
    let input = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"a":{nested}}}}}"#);
    let deep = request(&input);
    assert!(deep.parse_params::<Value>().is_err());
}

#[test]
fn arbitrary_bytes_never_panic() {
    let seed = br#"{"jsonrpc":"2.0","id":"x1","method":"tools/call","params":{"name":"a","arguments":{"b":[1,2.5,null,true,"\u00e9"]}},"result":{},"error":{"code":-1,"message":"m"}}"#;
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let mut bytes = seed.to_vec();
        for _ in 0..(next() % 6 + 1) {
            let at = (next() % bytes.len() as u64) as usize;
            match next() % 3 {
                0 => bytes[at] = (next() % 256) as u8,
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.insert(at, b"{}[]\",:0\\ "[(next() % 10) as usize]),
            }
            if bytes.is_empty() {
                break;
            }
        }
        if let Incoming::Invalid { error, .. } = classify(&bytes) {
            assert!(
                error.code == error_code::PARSE_ERROR || error.code == error_code::INVALID_REQUEST
            );
        }
    }
}

#[test]
fn typed_deserialization_enforces_the_message_kind() {
    let text = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#;
    let parsed: Request = serde_json::from_str(text).unwrap();
    assert_eq!(parsed.method, "tools/list");
    // Owned path (no borrowing from the input).
    let from_reader: Request = serde_json::from_reader(text.as_bytes()).unwrap();
    assert_eq!(from_reader.id, RequestId::Number(3));
    assert!(serde_json::from_str::<Notification>(text).is_err());
    assert!(serde_json::from_str::<Response>(text).is_err());
    let error =
        serde_json::from_str::<Request>(r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#).unwrap_err();
    assert!(error.to_string().contains("jsonrpc"), "{error}");
}

#[test]
fn invalid_messages_produce_an_error_response() {
    let incoming = classify(b"{oops");
    let reply = incoming.error_response().unwrap();
    let mut out = Vec::new();
    write_message(&mut out, &reply).unwrap();
    let reply: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], json!(-32700));
    assert_eq!(reply["jsonrpc"], json!("2.0"));
    assert!(
        classify(br#"{"jsonrpc":"2.0","method":"x"}"#)
            .error_response()
            .is_none()
    );
}

#[test]
fn writers_produce_compact_messages_and_restore_on_failure() {
    let mut out = b"prefix".to_vec();
    write_result(&mut out, &RequestId::from("r"), &json!({"a": 1})).unwrap();
    assert_eq!(&out[6..], br#"{"jsonrpc":"2.0","id":"r","result":{"a":1}}"#);

    out.clear();
    write_error(&mut out, None, &ErrorObject::parse_error("Parse error")).unwrap();
    assert_eq!(
        out,
        br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#
    );

    // A map with non-string keys cannot be serialized: nothing is left over.
    let mut out = b"keep".to_vec();
    let bad: std::collections::BTreeMap<(i32, i32), i32> = [((1, 2), 3)].into();
    assert!(write_result(&mut out, &RequestId::Number(1), &bad).is_err());
    assert_eq!(out, b"keep");

    // Classify → write → classify is stable.
    let line =
        br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"n","arguments":{}}}"#;
    let Incoming::Request(request) = classify(line) else {
        panic!()
    };
    let mut out = Vec::new();
    write_message(&mut out, &request).unwrap();
    assert_eq!(out, line);
}
