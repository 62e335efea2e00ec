//! JSON-RPC classification of one message. Never panics; what it accepts
//! round-trips: a request, notification or response written back out
//! classifies as the same message (same id, method and raw params or
//! result); what it refuses gets -32700 (not JSON) or -32600 (not JSON-RPC).
//! Where `split_success` cuts a result out by layout and the cut parses, the
//! message classifies as that success response, with that id and result.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolshape_protocol::{Incoming, Response, classify, error_code, split_success, write_message};

fn raw(value: Option<&serde_json::value::RawValue>) -> Option<&str> {
    value.map(serde_json::value::RawValue::get)
}

fn rewritten(message: &impl serde::Serialize) -> Incoming {
    let mut out = Vec::new();
    if let Err(error) = write_message(&mut out, message) {
        panic!("a classified message does not serialize: {error}");
    }
    classify(&out)
}

/// The layout fast path agrees with the full reader whenever its cut parses.
fn split_agrees(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some((id, result)) = split_success(text) else {
        return;
    };
    if serde_json::from_str::<serde::de::IgnoredAny>(result).is_err() {
        return;
    }
    match classify(data) {
        Incoming::Response(Response::Success {
            id: full_id,
            result: full,
        }) => {
            assert_eq!(id, full_id);
            assert_eq!(result, full.get());
        }
        other => panic!("a message split as a success classifies as {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    split_agrees(data);
    match classify(data) {
        Incoming::Request(request) => match rewritten(&request) {
            Incoming::Request(again) => {
                assert_eq!(again.id, request.id);
                assert_eq!(again.method, request.method);
                assert_eq!(raw(again.params.as_deref()), raw(request.params.as_deref()));
            }
            other => panic!("a request came back as {other:?}"),
        },
        Incoming::Notification(notification) => match rewritten(&notification) {
            Incoming::Notification(again) => {
                assert_eq!(again.method, notification.method);
                assert_eq!(
                    raw(again.params.as_deref()),
                    raw(notification.params.as_deref())
                );
            }
            other => panic!("a notification came back as {other:?}"),
        },
        Incoming::Response(response) => match (rewritten(&response), &response) {
            (
                Incoming::Response(Response::Success { id, result }),
                Response::Success {
                    id: first_id,
                    result: first,
                },
            ) => {
                assert_eq!(&id, first_id);
                assert_eq!(result.get(), first.get());
            }
            (
                Incoming::Response(Response::Error { id, error }),
                Response::Error {
                    id: first_id,
                    error: first,
                },
            ) => {
                assert_eq!(&id, first_id);
                assert_eq!(error.code, first.code);
                assert_eq!(error.message, first.message);
                assert_eq!(error.data, first.data);
            }
            (other, _) => panic!("a response came back as {other:?}"),
        },
        Incoming::Invalid { error, .. } => {
            assert!(
                error.code == error_code::PARSE_ERROR || error.code == error_code::INVALID_REQUEST,
                "an invalid message got code {}",
                error.code
            );
        }
    }
});
