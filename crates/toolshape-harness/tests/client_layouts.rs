#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client reads a success response with the usual layout
//! (`{"jsonrpc":"2.0","id":…,"result":…}`) by cutting the result out and
//! parsing it once, as the type it expects. These cases, against the hostile
//! server (a child process), hold the same message with members after its
//! result: a valid message must still be read in full, an invalid one must
//! fail its call at once, and the connection goes on either way. And a
//! relaying caller's results, read from their text.

mod client_common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolshape::CallOptions;
use toolshape::client::{Client, ClientErrorKind};

use client_common::connect_hostile as hostile;

/// Calls `ok` answering `{"value": "}x"}` (a brace in a string, to trip a
/// reader that looks for the result's end by hand) followed by `then`.
async fn call(client: &Client, then: &str) -> Result<Value, toolshape::client::ClientError> {
    let arguments = json!({"verbatim": r#"{"value":"}x"}"#, "then": then});
    let options = CallOptions::new().timeout(Duration::from_secs(5));
    let result = client
        .call_tool_with("ok", arguments.as_object().cloned(), options)
        .await?;
    Ok(result.structured.unwrap_or_default())
}

#[tokio::test]
async fn a_result_followed_by_more_members_is_read_in_full() {
    for args in [&[][..], &["--legacy-only"][..]] {
        let client = hostile(args).await;
        for then in ["", r#","_x":{"y":"}"}"#, r#" , "z" : [ "}" ] "#] {
            let value = call(&client, then).await.unwrap();
            assert_eq!(value, json!({"value": "}x"}), "{args:?} {then:?}");
        }
    }
}

#[tokio::test]
async fn a_result_beside_an_error_or_a_repeated_id_fails_its_call_at_once() {
    let client = hostile(&[]).await;
    for then in [
        r#","error":{"code":1,"message":"m"}"#,
        r#","id":99"#,
        r#","result":{}"#,
    ] {
        let started = Instant::now();
        let error = call(&client, then).await.unwrap_err();
        assert!(
            matches!(error.kind(), ClientErrorKind::InvalidResponse(m) if m.contains("invalid response")),
            "{then}: {error:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(2), "{then}");
        // The connection goes on.
        assert_eq!(call(&client, "").await.unwrap(), json!({"value": "}x"}));
    }
}

/// A caller that relays results (`CallOptions::relaying`, as the proxy
/// does) has them validated from their text: one it can relay comes without
/// a value, one it cannot (a repeated member name) with it, and output that
/// breaks its schema is refused with the same violations as for any caller;
/// a tool the listing lacks is not called.
#[tokio::test]
async fn a_relaying_caller_gets_results_checked_from_their_text() {
    let client = hostile(&[]).await;
    let call = |tool: &'static str, arguments: Value, relay: bool| {
        let options = if relay {
            CallOptions::new().relaying()
        } else {
            CallOptions::new()
        };
        client.call_tool_with(tool, arguments.as_object().cloned(), options)
    };
    let verbatim = |text: &str| json!({"verbatim": text});
    let mut relayed = call("ok", verbatim(r#"{"value":"ok"}"#), true)
        .await
        .unwrap();
    assert_eq!(relayed.structured, None);
    assert_eq!(relayed.structured_json(), Some(r#"{"value":"ok"}"#));
    assert!(relayed.take_received().is_some());
    let plain = call("ok", verbatim(r#"{"value":"ok"}"#), false)
        .await
        .unwrap();
    assert_eq!(plain.structured, Some(json!({"value": "ok"})));
    // Read two ways: not relayable, so the value is built (the last member).
    let mut repeated = call("ok", verbatim(r#"{"value":"no","value":"ok"}"#), true)
        .await
        .unwrap();
    assert_eq!(repeated.structured, Some(json!({"value": "ok"})));
    assert!(repeated.take_received().is_none());
    // Breaking its schema: refused either way, alike.
    let refused = |error: toolshape::client::ClientError| match error.kind() {
        ClientErrorKind::Validation { source, .. } => source.to_string(),
        other => panic!("expected a validation error, got {other}"),
    };
    for (tool, arguments) in [("ok", verbatim(r#"{"value":5}"#)), ("mismatch", json!({}))] {
        let relaying = refused(call(tool, arguments.clone(), true).await.unwrap_err());
        let plain = refused(call(tool, arguments, false).await.unwrap_err());
        assert_eq!(relaying, plain, "{tool}");
    }
    let relaying = refused(
        call("ok", verbatim(r#"{"value":5}"#), true)
            .await
            .unwrap_err(),
    );
    assert!(relaying.contains("/value"), "{relaying}");
    // A tool the listing lacks has no schema to check by: a relaying caller
    // does not call it (the server would answer, as its SDK does, with an
    // unchecked result); any other caller does.
    let unlisted = call("gone", json!({}), true).await.unwrap_err();
    assert!(
        matches!(unlisted.kind(), ClientErrorKind::Unlisted(tool) if tool == "gone"),
        "{unlisted}"
    );
    let plain = call("gone", json!({}), false).await;
    assert!(
        plain.as_ref().is_ok_and(|result| result.is_error),
        "{plain:?}"
    );
    // The connection goes on.
    assert_eq!(
        call("ok", json!({}), false).await.unwrap().structured,
        Some(json!({"value": "ok"}))
    );
}
