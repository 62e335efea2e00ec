//! The OTC / OXP endpoint, `POST /tools/call` with any body, over the fuzz
//! server's tools (`Tools.echo`, `Tools.double`, `Tools.fail`, `Tools.bad`,
//! `Tools.slow`):
//!
//! - parsing is deterministic (the same body, the same verdict);
//! - the endpoint never answers 5xx, and every body is a JSON object of the
//!   shape its status promises: 200 a CallToolResponse (`call_id`, `success`,
//!   `duration` >= 0, `value` exactly when it succeeded, else `error` with a
//!   `message`), 422 `message` and `parameter_errors`, any other 4xx a
//!   `message`;
//! - validation comes before the tool: `Tools.double` succeeds only for an
//!   integer `n` in 0..=1000 (by JSON Schema: `10.00` is one), and its value
//!   is then `2n`; `Tools.bad`, whose
//!   output breaks its schema, never succeeds.

#![no_main]

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolshape::ToolRegistry;
use toolshape_fuzz::{runtime, server};
use toolshape_otc::OtcOptions;
use tower::ServiceExt;

fn router() -> &'static axum::Router {
    static ROUTER: OnceLock<axum::Router> = OnceLock::new();
    ROUTER.get_or_init(|| {
        let registry = ToolRegistry::new();
        if let Err(errors) = registry.register_all(server::tools()) {
            panic!("the fuzz tools: {errors:?}");
        }
        runtime().block_on(async { toolshape_otc::router(&registry, OtcOptions::default()) })
    })
}

/// The call inside a body: its tool id and input, as the server should see them.
fn call_of(body: &Value) -> Option<(&str, &Value)> {
    let request = match body.get("request") {
        Some(inner) => inner,
        None => body,
    };
    let tool = request.get("tool_id")?.as_str()?;
    let input = request.get("input").or_else(|| request.get("inputs"))?;
    Some((tool, input))
}

fuzz_target!(|data: &[u8]| {
    let first = format!("{:?}", toolshape_otc::wire::parse_call(data));
    let second = format!("{:?}", toolshape_otc::wire::parse_call(data));
    assert_eq!(first, second, "parsing is not deterministic");

    let request = Request::post("/tools/call")
        .header("content-type", "application/json")
        .header("host", "127.0.0.1")
        .body(Body::from(data.to_vec()));
    let Ok(request) = request else { return };
    let router = router().clone();
    let (status, body) = runtime().block_on(async {
        let response = match router.oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 24)
            .await
            .unwrap_or_default();
        (status, body)
    });
    assert!(
        !status.is_server_error(),
        "{status} for {:?}",
        String::from_utf8_lossy(data)
    );
    let answer: Value = match serde_json::from_slice(&body) {
        Ok(answer) => answer,
        Err(error) => panic!(
            "{status}: not JSON ({error}): {:?}",
            String::from_utf8_lossy(&body)
        ),
    };
    assert!(answer.is_object(), "{status}: {answer}");
    match status {
        StatusCode::OK => {
            let result = answer.get("result").unwrap_or(&answer);
            assert!(result["call_id"].is_string(), "{answer}");
            let success = result["success"].as_bool();
            assert!(success.is_some(), "{answer}");
            assert!(
                result["duration"].as_f64().is_some_and(|d| d >= 0.0),
                "{answer}"
            );
            if success == Some(false) {
                assert!(result["error"]["message"].is_string(), "{answer}");
                assert!(result.get("value").is_none(), "{answer}");
            } else {
                assert!(result.get("error").is_none(), "{answer}");
            }
            let sent: Value = serde_json::from_slice(data).unwrap_or(Value::Null);
            if let (Some((tool, input)), Some(true)) = (call_of(&sent), success) {
                if tool.starts_with("Tools.double") {
                    // JSON Schema's integer: any number without a fraction
                    // (`10.00` is one).
                    let n = input
                        .get("n")
                        .and_then(Value::as_f64)
                        .filter(|n| n.fract() == 0.0 && (0.0..=1000.0).contains(n));
                    assert!(n.is_some(), "double ran on {input}: {answer}");
                    assert_eq!(result["value"].as_f64(), n.map(|n| n * 2.0), "{answer}");
                }
                assert!(
                    !tool.starts_with("Tools.bad"),
                    "bad output passed: {answer}"
                );
            }
        }
        StatusCode::UNPROCESSABLE_ENTITY => {
            assert!(answer["message"].is_string(), "{answer}");
            assert!(answer["parameter_errors"].is_object(), "{answer}");
        }
        other => {
            assert!(other.is_client_error(), "{other}: {answer}");
            assert!(answer["message"].is_string(), "{other}: {answer}");
        }
    }
});
