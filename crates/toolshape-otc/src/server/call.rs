//! `POST /tools/call`: decode, find the tool, claim the `call_id`, run the
//! call (input validated before the tool runs, output validated before
//! anything is sent), and answer as the spec says: 400 for what the server
//! refuses, 422 for input that fails the tool's schema, 200 for the rest
//! (`success: false` when the tool failed).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, FromRequest, Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;
use toolshape::CallOptions;
use toolshape::protocol::ContentBlock;
use toolshape::tool::{CallOutcome, OutputShape, RegisteredTool, ToolFailure, ToolOutput};

use super::idempotency::{Claim, Stored};
use super::reply;
use super::state::OtcState;
use crate::wire::{
    CallContext, CallOutput, CallToolResponse, Envelope, ParsedCall, ToolCallError, ToolId,
    parse_call,
};

/// How many times a call waits for the same call running elsewhere to end
/// (and claims again when that one was abandoned) before giving up.
const MAX_CLAIMS: usize = 4;

pub(crate) async fn post(State(state): State<Arc<OtcState>>, request: Request) -> Response {
    // Who calls is settled from the headers before the body is read: a
    // caller refused holds no body (up to 4 MiB) meanwhile.
    let principal = match state.admit(request.headers()) {
        Ok(principal) => principal,
        Err(refused) => return refused,
    };
    let address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| *address);
    let body: Result<Bytes, BytesRejection> = Bytes::from_request(request, &()).await;
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return reply::refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the body is larger than {} bytes",
                    state.options.http.max_body_bytes
                ),
            );
        }
        Err(rejection) if toolshape::is_body_timeout(&rejection) => {
            return reply::refuse(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time",
            );
        }
        Err(rejection) => return reply::refuse(StatusCode::BAD_REQUEST, rejection.body_text()),
    };
    let Ok(_permit) = Arc::clone(&state.permits).acquire_owned().await else {
        return reply::refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        );
    };
    let mut parsed = match parse_call(&body) {
        Ok(parsed) => parsed,
        Err(error) => return reply::refuse(StatusCode::BAD_REQUEST, error.to_string()),
    };
    // Parsed once; the call holds the parsed input only, not the body too.
    drop(body);
    let tool = match find(&state, &parsed.request.tool_id) {
        Ok(tool) => tool,
        Err(refused) => return refused,
    };
    // An empty `call_id` names no call to repeat: echoed, never a key.
    // The input moves to the tool: taken from the request, never copied.
    let input = parsed.request.input.take();
    let Some(call_id) = parsed.request.call_id.clone().filter(|id| !id.is_empty()) else {
        let call_id = parsed.request.call_id.clone().unwrap_or_else(new_call_id);
        return match run(&state, &tool, &parsed, input, call_id, address).await {
            Ok(ran) => answer(&parsed, &ran.body),
            Err(refused) => refused,
        };
    };
    let user_id = parsed
        .request
        .context
        .user_id
        .clone()
        .map_or(Value::Null, Value::String);
    let given = input.is_some();
    let input = Value::Object(input.unwrap_or_default());
    // The credentials count too: a repeat must bring the same ones to be
    // answered from the store (several callers may share one principal: no
    // authentication, one API key, a JWT without `sub`).
    let credentials = credentials_of(&parsed.request.context);
    let fingerprint = state.idempotency.fingerprint(&[
        &Value::String(id_of(&tool)),
        &input,
        &user_id,
        &credentials,
    ]);
    for _ in 0..MAX_CLAIMS {
        match state
            .idempotency
            .claim(&principal.key(), &call_id, fingerprint)
        {
            Claim::Replay(stored) => return answer(&parsed, &stored.body),
            Claim::Conflict => {
                return reply::refuse(
                    StatusCode::CONFLICT,
                    format!(
                        "call_id {:?} was used for a different call (tool, input or credentials) within the last {} s",
                        toolshape_protocol::text::excerpt(&call_id, 80),
                        state.options.idempotency_window.as_secs()
                    ),
                );
            }
            Claim::Wait(mut done) => {
                if let Ok(stored) = done.wait_for(Option::is_some).await
                    && let Some(stored) = stored.as_ref()
                {
                    return answer(&parsed, &stored.body);
                }
                // The other call was abandoned: claim again.
            }
            Claim::Run(running) => {
                let input = match input {
                    Value::Object(input) if given => Some(input),
                    _ => None,
                };
                return match run(&state, &tool, &parsed, input, call_id, address).await {
                    // A failure the caller may retry is not kept: a retry
                    // with the same id must run the call again.
                    Ok(ran) if !ran.keep => {
                        let reply = answer(&parsed, &ran.body);
                        running.release(Stored { body: ran.body });
                        reply
                    }
                    Ok(ran) => {
                        let reply = answer(&parsed, &ran.body);
                        running.finish(Stored { body: ran.body });
                        reply
                    }
                    // Refusals (422, 400) are not stored: the tool did not run.
                    Err(refused) => refused,
                };
            }
        }
    }
    reply::refuse(
        StatusCode::CONFLICT,
        "the same call_id is being run and abandoned repeatedly; try again",
    )
}

/// The tool a `tool_id` names, or 400.
#[allow(clippy::result_large_err)]
fn find(state: &OtcState, tool_id: &str) -> Result<Arc<RegisteredTool>, Response> {
    let id = ToolId::parse(tool_id)
        .map_err(|error| reply::refuse(StatusCode::BAD_REQUEST, error.to_string()))?;
    state
        .registry
        .find_qualified(&id.qualified, id.version)
        .ok_or_else(|| {
            let message = match id.version {
                Some(_) if state.registry.find_qualified(&id.qualified, None).is_some() => {
                    format!("Unknown version of tool {}: {id}", id.qualified)
                }
                _ => format!("Unknown tool: {id}"),
            };
            reply::refuse(StatusCode::BAD_REQUEST, message)
        })
}

/// `tool`'s OTC id. Every tool a call finds has one (a tool served over MCP
/// only is not found by a qualified name); its MCP name otherwise.
fn id_of(tool: &RegisteredTool) -> String {
    tool.otc_id().unwrap_or_else(|| tool.name().to_owned())
}

/// A fresh call id: a random (version 4) UUID.
pub fn new_call_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No entropy source: a process-unique id still identifies the call.
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        bytes[..8].copy_from_slice(&n.to_be_bytes());
        bytes[8..12].copy_from_slice(&std::process::id().to_be_bytes());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A call that ran: its bare CallToolResponse, serialized, and whether a
/// repeat of it may be answered from the store.
struct Ran {
    body: Bytes,
    /// `false` for a failure with `can_retry` (a timeout of an idempotent
    /// tool among them) or a call that did not finish: a retry must run the
    /// tool again. A timeout of any other tool is kept: its repeat must not
    /// run it a second time.
    keep: bool,
}

/// Runs the call; what it answered, or a refusal.
async fn run(
    state: &OtcState,
    tool: &RegisteredTool,
    parsed: &ParsedCall,
    input: Option<serde_json::Map<String, Value>>,
    call_id: String,
    address: Option<SocketAddr>,
) -> Result<Ran, Response> {
    let request = &parsed.request;
    let mut options = CallOptions::new();
    if let Some(address) = address {
        options = options.caller_address(address);
    }
    options.timeout = state.options.call_timeout;
    if !request.context.is_empty() {
        options = options.credentials(request.context.credentials());
    }
    let started = Instant::now();
    let outcome = tool.call(input, options).await;
    let duration = started.elapsed().as_secs_f64() * 1000.0;
    let mut keep = true;
    let output = match outcome {
        CallOutcome::Success(output) => value_of(tool, output).unwrap_or_else(|| {
            CallOutput::Error(ToolCallError {
                message: format!(
                    "Tool {} returned no value for its output schema (none, or one withheld as invalid), so none was sent",
                    id_of(tool)
                ),
                ..ToolCallError::default()
            })
        }),
        CallOutcome::Failed(ToolFailure::InvalidArguments(violations)) => {
            return Err(reply::invalid_input(&id_of(tool), &violations));
        }
        CallOutcome::Failed(ToolFailure::UncheckableArguments(error)) => {
            return Err(reply::uncheckable_input(&id_of(tool), &error.to_string()));
        }
        CallOutcome::Failed(ToolFailure::MissingRequirements(missing)) => {
            return Err(reply::missing_requirements(
                &id_of(tool),
                &missing,
                &state.options.authorization_urls,
            ));
        }
        CallOutcome::Failed(failure) => CallOutput::Error(error_of(
            tool,
            &failure,
            state.options.send_developer_messages,
        )),
        _ => {
            keep = false;
            CallOutput::Error(ToolCallError {
                message: format!("Tool {} did not finish", id_of(tool)),
                ..ToolCallError::default()
            })
        }
    };
    if let CallOutput::Error(error) = &output
        && error.can_retry
    {
        keep = false;
    }
    tracing::debug!(
        tool = %id_of(tool),
        call_id = %call_id,
        trace_id = request.trace_id.as_deref().unwrap_or(""),
        duration_ms = duration,
        success = !matches!(output, CallOutput::Error(_)),
        "OTC call"
    );
    let response = CallToolResponse {
        call_id,
        duration: Some((duration * 1000.0).round() / 1000.0),
        output,
    };
    Ok(Ran {
        body: Bytes::from(response.to_body(false, None)),
        keep,
    })
}

/// A call's `authorization` tokens and `secrets`, as a value to fingerprint
/// (hashed under the store's keys, never kept).
fn credentials_of(context: &CallContext) -> Value {
    let pairs = |list: &[(String, String)]| {
        Value::Array(
            list.iter()
                .map(|(id, secret)| Value::Array(vec![id.as_str().into(), secret.as_str().into()]))
                .collect(),
        )
    };
    Value::Array(vec![pairs(&context.authorization), pairs(&context.secrets)])
}

/// What `value` a successful call carries, by what the tool returns; `None`
/// when a tool with an output schema gave no structured value (a gateway's
/// output stripped of a value that broke the schema): over OTC a `value`
/// must conform, so there is nothing to send.
fn value_of(tool: &RegisteredTool, mut output: ToolOutput) -> Option<CallOutput> {
    Some(match tool.output_shape() {
        OutputShape::Nothing => CallOutput::Nothing,
        OutputShape::Text => CallOutput::Value(Value::String(
            output
                .content
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect::<Vec<_>>()
                .join("\n"),
        )),
        OutputShape::Structured => CallOutput::Value(output.into_structured_value()?),
        _ => {
            let content = std::mem::take(&mut output.content);
            CallOutput::Value(match output.into_structured_value() {
                Some(value) => value,
                None => serde_json::to_value(&content).unwrap_or(Value::Null),
            })
        }
    })
}

/// The `error` of a failed call.
fn error_of(
    tool: &RegisteredTool,
    failure: &ToolFailure,
    developer_messages: bool,
) -> ToolCallError {
    let idempotent = tool
        .definition()
        .annotations
        .as_ref()
        .and_then(|a| a.idempotent_hint)
        == Some(true);
    let mut error = ToolCallError {
        message: failure.message(&id_of(tool)),
        ..ToolCallError::default()
    };
    match failure {
        ToolFailure::Tool(tool_error) => {
            error.message = tool_error.message().to_owned();
            error.developer_message = tool_error.developer_details().map(str::to_owned);
            error.can_retry = tool_error.is_retryable();
            error.additional_prompt_content = tool_error.prompt_content().map(str::to_owned);
            // A delay means something only for a call that may be retried.
            error.retry_after_ms = tool_error
                .retry_delay()
                .filter(|_| error.can_retry)
                .map(|delay| u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
        }
        ToolFailure::InvalidOutput(invalid) => {
            // Where and which keyword, never the values (the output is withheld).
            let places: Vec<String> = invalid
                .violations()
                .iter()
                .take(20)
                .map(|v| {
                    let at = if v.instance_path.is_empty() {
                        "/"
                    } else {
                        &v.instance_path
                    };
                    format!("{at} fails {}", v.keyword)
                })
                .collect();
            error.developer_message = Some(if places.is_empty() {
                "the output could not be checked against the output schema".to_owned()
            } else {
                format!("output schema violations: {}", places.join("; "))
            });
        }
        ToolFailure::TimedOut(_) => error.can_retry = idempotent,
        _ => {}
    }
    if !developer_messages {
        error.developer_message = None;
    }
    error
}

/// The answer to `parsed`: the bare response, or it in the envelope.
fn answer(parsed: &ParsedCall, bare: &Bytes) -> Response {
    match parsed.envelope {
        Envelope::Bare => reply::json_bytes(StatusCode::OK, bare.clone()),
        Envelope::Wrapped => {
            let mut body = Vec::with_capacity(bare.len() + 48);
            body.push(b'{');
            if let Some(schema) = &parsed.schema {
                body.extend_from_slice(b"\"$schema\":");
                body.extend_from_slice(&serde_json::to_vec(schema).unwrap_or_default());
                body.push(b',');
            }
            body.extend_from_slice(b"\"result\":");
            body.extend_from_slice(bare);
            body.push(b'}');
            reply::json_bytes(StatusCode::OK, body)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_are_version_4_uuids_and_distinct() {
        let (a, b) = (new_call_id(), new_call_id());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
        assert!(matches!(a.as_bytes()[19], b'8' | b'9' | b'a' | b'b'));
    }
}
