#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client reads a success response with the usual layout
//! (`{"jsonrpc":"2.0","id":…,"result":…}`) by cutting the result out and
//! parsing it once, as the type it expects. These cases, against the hostile
//! server (a child process), hold the same message with members after its
//! result: a valid message must still be read in full, an invalid one must
//! fail its call at once, and the connection goes on either way.

mod client_common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolshape::CallOptions;
use toolshape::client::{
    Client, ClientErrorKind, ClientOptions, Negotiation, ServerCommand, StderrMode,
};

use client_common::{connect, hostile_server_bin};

async fn hostile(args: &[&str]) -> Client {
    let mut options = ClientOptions::default();
    options.request_timeout = Duration::from_secs(20);
    let command = ServerCommand::new(hostile_server_bin())
        .args(args)
        .stderr(StderrMode::Capture);
    connect(command, Negotiation::Auto, options).await
}

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
