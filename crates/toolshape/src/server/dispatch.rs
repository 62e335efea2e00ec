//! Answering requests and notifications, whatever transport carried them:
//! one match on the request parsed once.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use toolshape_protocol::completion::{CompleteParams, CompletionRef};
use toolshape_protocol::prompts::GetPromptParams;
use toolshape_protocol::resources::ReadResourceParams;
use toolshape_protocol::{
    ErrorObject, KnownNotification, KnownRequest, Notification, ProtocolVersion, RequestId, methods,
};

use super::asking::{RequestIdentity, Retry};
use super::call::{Asks, PreparedCall};
use super::in_flight::InFlight;
use super::outbox::{encode_error, encode_result};
use super::request::ParsedRequest;
use super::session::Session;
use super::work::{Work, not_found};
use super::{Shared, methods as answer};
use crate::resource::MAX_URI_BYTES;

/// What a request needs.
pub(crate) enum Step {
    /// Its answer, ready now (serialized).
    Answer(Vec<u8>),
    /// Work to run (a tool call, a prompt, a read...).
    Call(Box<PreparedCall>),
}

impl Step {
    fn error(id: &RequestId, error: &ErrorObject) -> Step {
        Step::Answer(encode_error(Some(id), error))
    }
}

/// Works out a request's answer, or prepares its work. An answer to a
/// 2026-07-28 request names this server ([`Shared::identify`]; a
/// discovery's result names it by its definition).
pub(crate) fn route(shared: &Shared, session: &Session, request: ParsedRequest) -> Step {
    let named = request
        .meta
        .protocol_version
        .as_deref()
        .and_then(ProtocolVersion::parse)
        .filter(|_| !matches!(request.body, KnownRequest::Discover(_)));
    let mut step = answer_or_prepare(shared, session, request);
    if let (Some(version), Step::Answer(answer)) = (named, &mut step) {
        shared.identify(version, answer);
    }
    step
}

fn answer_or_prepare(shared: &Shared, session: &Session, request: ParsedRequest) -> Step {
    let ParsedRequest {
        id,
        body,
        meta,
        tool,
    } = request;
    let work = |prepared: Result<PreparedCall, ErrorObject>| match prepared {
        Ok(prepared) => Step::Call(Box::new(prepared)),
        Err(error) => Step::error(&id, &error),
    };
    let method = body.method();
    // A request that names its revision is refused a method the revision
    // has not (2026-07-28: `ping`, `initialize`, `logging/setLevel`,
    // resource subscriptions), as over HTTP.
    if let Some(version) = meta
        .protocol_version
        .as_deref()
        .and_then(ProtocolVersion::parse)
        && !version.has_request(method)
    {
        return Step::error(&id, &ErrorObject::method_not_found(method));
    }
    let answer = match body {
        KnownRequest::CallTool(call) => {
            return work(PreparedCall::tool(
                shared,
                session,
                id.clone(),
                tool,
                call,
                meta,
            ));
        }
        KnownRequest::GetPrompt(params) if shared.offers_prompts() => {
            return work(prompt(shared, session, &id, params, meta));
        }
        KnownRequest::ReadResource(params) if !shared.resources.is_empty() => {
            return work(read(shared, session, &id, params, meta));
        }
        KnownRequest::ListResources(params) if !shared.resources.is_empty() => {
            let cursor = params.cursor;
            return work(PreparedCall::prepare(
                shared,
                session,
                id.clone(),
                meta,
                plain(methods::RESOURCES_LIST),
                |_| Ok(Work::ListResources { cursor }),
            ));
        }
        KnownRequest::Complete(params) if offers_completion(shared) => {
            return work(complete(shared, session, &id, params, meta));
        }
        KnownRequest::ListResourceTemplates(params) if !shared.resources.is_empty() => session
            .revision(&meta)
            .and_then(|version| answer::list_templates(shared, version, &params, &id)),
        KnownRequest::ListPrompts(params) if shared.offers_prompts() => session
            .revision(&meta)
            .and_then(|version| answer::list_prompts(shared, version, &params, &id)),
        KnownRequest::Subscribe(params) | KnownRequest::Unsubscribe(params)
            if !shared.resources.is_empty() =>
        {
            session.revision(&meta).and_then(|_| {
                if method == methods::RESOURCES_SUBSCRIBE {
                    session.subscribe(params.uri, &shared.resource_events)?;
                } else {
                    session.unsubscribe(&params.uri);
                }
                Ok(encode_result(&id, &json!({})))
            })
        }
        KnownRequest::ListTools(params) => session
            .revision(&meta)
            .and_then(|version| answer::list_tools(shared, version, &params, &id)),
        KnownRequest::Initialize(params) => {
            answer::initialize(shared, session, &params).map(|r| encode_result(&id, &r))
        }
        KnownRequest::Discover(_) => {
            // A version named in `_meta` must be one this server speaks.
            let checked = match meta.protocol_version {
                Some(_) => session.revision(&meta).map(drop),
                None => Ok(()),
            };
            checked.map(|()| encode_result(&id, &answer::discover(shared)))
        }
        KnownRequest::Ping(_) => Ok(encode_result(&id, &json!({}))),
        KnownRequest::SetLoggingLevel(params) => {
            set_level(session, params.level).map(|()| encode_result(&id, &json!({})))
        }
        // A stream of notifications (only Streamable HTTP serves it), or a
        // feature this server does not offer.
        other => Err(ErrorObject::method_not_found(other.method())),
    };
    Step::Answer(answer.unwrap_or_else(|error| encode_error(Some(&id), &error)))
}

/// The asking plan of a request that asks nothing of the client.
fn plain(method: &'static str) -> Asks {
    Asks {
        identity: RequestIdentity {
            method,
            name: String::new(),
            arguments: None,
        },
        retry: Retry::default(),
    }
}

fn offers_completion(shared: &Shared) -> bool {
    shared.offers_prompts() || !shared.resources.is_empty()
}

fn prompt(
    shared: &Shared,
    session: &Session,
    id: &RequestId,
    params: GetPromptParams,
    meta: toolshape_protocol::meta::RequestMeta,
) -> Result<PreparedCall, ErrorObject> {
    let found = shared.prompts.get(&params.name).ok_or_else(|| {
        ErrorObject::invalid_params(format!(
            "Unknown prompt: {}",
            toolshape_protocol::text::excerpt(&params.name, 100)
        ))
    })?;
    let arguments = found
        .arguments(params.arguments.clone())
        .map_err(ErrorObject::invalid_params)?;
    let asks = Asks {
        identity: RequestIdentity {
            method: methods::PROMPTS_GET,
            name: params.name,
            arguments: params.arguments,
        },
        retry: Retry {
            input_responses: params.input_responses,
            request_state: params.request_state,
        },
    };
    let prompt = found;
    PreparedCall::prepare(shared, session, id.clone(), meta, asks, |_| {
        Ok(Work::Prompt { prompt, arguments })
    })
}

fn read(
    shared: &Shared,
    session: &Session,
    id: &RequestId,
    params: ReadResourceParams,
    meta: toolshape_protocol::meta::RequestMeta,
) -> Result<PreparedCall, ErrorObject> {
    if params.uri.len() > MAX_URI_BYTES {
        return Err(ErrorObject::invalid_params(format!(
            "the URI is longer than {MAX_URI_BYTES} bytes"
        )));
    }
    let Some(resolved) = shared.resources.resolve(&params.uri) else {
        return Err(not_found(&params.uri, session.revision(&meta)?));
    };
    let uri = params.uri;
    let asks = Asks {
        identity: RequestIdentity {
            method: methods::RESOURCES_READ,
            name: uri.clone(),
            arguments: None,
        },
        retry: Retry {
            input_responses: params.input_responses,
            request_state: params.request_state,
        },
    };
    PreparedCall::prepare(shared, session, id.clone(), meta, asks, |_| {
        Ok(Work::Read {
            uri,
            reader: resolved.reader,
            variables: resolved.variables,
        })
    })
}

fn complete(
    shared: &Shared,
    session: &Session,
    id: &RequestId,
    params: CompleteParams,
    meta: toolshape_protocol::meta::RequestMeta,
) -> Result<PreparedCall, ErrorObject> {
    let argument = params.argument.name;
    let completer = match &params.reference {
        CompletionRef::Prompt { name } => shared
            .prompts
            .get(name)
            .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown prompt: {name}")))?
            .completers
            .get(&argument)
            .cloned(),
        CompletionRef::Resource { uri } => {
            if !shared.resources.offers_template(uri) {
                return Err(ErrorObject::invalid_params(format!(
                    "Unknown resource template: {}",
                    toolshape_protocol::text::excerpt(uri, 200)
                )));
            }
            shared.resources.completer(uri, &argument)
        }
        _ => return Err(ErrorObject::invalid_params("unknown completion reference")),
    };
    let others: BTreeMap<String, String> = params
        .context
        .and_then(|context| context.get("arguments").cloned())
        .and_then(|arguments| match arguments {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(key, value)| value.as_str().map(|text| (key, text.to_owned())))
        .collect();
    let partial = params.argument.value;
    PreparedCall::prepare(
        shared,
        session,
        id.clone(),
        meta,
        plain(methods::COMPLETION_COMPLETE),
        |_| {
            Ok(Work::Complete {
                completer,
                partial,
                others,
            })
        },
    )
}

/// `logging/setLevel`: the least severe level of the log messages tools send
/// this peer (a handshake-revision method).
fn set_level(
    session: &Session,
    level: toolshape_protocol::LoggingLevel,
) -> Result<(), ErrorObject> {
    match session.handshake() {
        None => Err(ErrorObject::invalid_request(
            "logging/setLevel needs an initialized session",
        )),
        Some(version) if version.is_stateless() => Err(ErrorObject::method_not_found(
            toolshape_protocol::methods::LOGGING_SET_LEVEL,
        )),
        Some(_) => {
            session.set_log_level(level);
            Ok(())
        }
    }
}

/// The error to `initialize` inside a JSON-RPC batch, which 2025-03-26
/// forbids (over stdio and HTTP alike).
pub(crate) fn initialize_in_batch() -> ErrorObject {
    ErrorObject::invalid_request("initialize may not be part of a batch")
}

/// Handles a notification from the peer.
/// Handles a notification; returns the id of the request it cancels, if
/// it is a cancellation (a transport may own that request: a stdio
/// `subscriptions/listen`).
pub(crate) fn notification(
    session: &Session,
    in_flight: &InFlight,
    notification: &Notification,
) -> Option<RequestId> {
    match KnownNotification::from_notification(notification) {
        Ok(KnownNotification::Initialized(_)) => session.mark_initialized(),
        Ok(KnownNotification::Cancelled(cancelled)) => match cancelled.request_id {
            Some(id) => {
                in_flight.cancel(&id);
                return Some(id);
            }
            None => tracing::debug!("ignored a cancellation without a requestId"),
        },
        Ok(other) => tracing::debug!(method = other.method(), "ignored a notification"),
        Err(error) => tracing::debug!(%error, "ignored a notification"),
    }
    None
}
