//! The requests that run handlers or may take time: a tool call, a prompt
//! rendered, a resource read, the resource listing (listers run), and a
//! completion. Each runs bounded and cancellable, may ask the client, and
//! is answered in its revision's shape.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use toolshape_protocol::completion::{CompleteResult, Completion};
use toolshape_protocol::resources::ReadResourceResult;
use toolshape_protocol::text::excerpt;
use toolshape_protocol::{ErrorObject, ProtocolVersion, RequestId, ResultType, error_code};

use super::Shared;
use super::asking::AskPlan;
use super::outbox::{encode_error, encode_result};
use super::shape;
use crate::completion::Completer;
use crate::prompt::Prompt;
use crate::resource::{Reader, ResourceRegistry};
use crate::tool::{
    Asking, Bounds, CallOptions, CallOutcome, Ran, RegisteredTool, ToolContext, ToolFailure, drive,
};

/// What a request runs.
pub(crate) enum Work {
    /// `tools/call`.
    Tool {
        tool: Arc<RegisteredTool>,
        arguments: Option<Map<String, Value>>,
    },
    /// `prompts/get`.
    Prompt {
        prompt: std::sync::Arc<Prompt>,
        arguments: BTreeMap<String, String>,
    },
    /// `resources/read` of a URI something reads.
    Read {
        uri: String,
        reader: Reader,
        variables: BTreeMap<String, String>,
    },
    /// `resources/list`, one page after `cursor`.
    ListResources { cursor: Option<String> },
    /// `completion/complete` of one argument.
    Complete {
        completer: Option<Completer>,
        partial: String,
        others: BTreeMap<String, String>,
    },
}

/// The serialized answer of a request, and whether it is a protocol-level
/// refusal (HTTP answers those with 400).
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) body: Vec<u8>,
    #[cfg_attr(not(feature = "server-http"), allow(dead_code))]
    pub(crate) refused: bool,
}

impl Answer {
    pub(super) fn result<R: serde::Serialize + ?Sized>(id: &RequestId, result: &R) -> Answer {
        Answer {
            body: encode_result(id, result),
            refused: false,
        }
    }

    /// The answer with this server named in its result, for a 2026-07-28 peer.
    pub(super) fn identified(mut self, shared: &Shared, version: ProtocolVersion) -> Answer {
        shared.identify(version, &mut self.body);
        self
    }

    pub(super) fn error(id: &RequestId, error: &ErrorObject, refused: bool) -> Answer {
        Answer {
            body: encode_error(Some(id), error),
            refused,
        }
    }
}

/// What a request's run is handed.
pub(crate) struct Running<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) id: &'a RequestId,
    pub(crate) version: ProtocolVersion,
    pub(crate) plan: &'a AskPlan,
    pub(crate) asking: Asking,
}

/// A handler that failed: a protocol error. 2026-07-28: a missing client
/// capability is -32021 (HTTP 400).
fn failed(running: &Running<'_>, name: &str, failure: &ToolFailure) -> Answer {
    if let Some(answer) = url_required(running, failure) {
        return answer;
    }
    if let Some(uri) = failure.resource_not_found() {
        return Answer::error(running.id, &not_found(uri, running.version), false);
    }
    match failure.missing_capability() {
        Some(required) if running.version.is_stateless() => Answer::error(
            running.id,
            &ErrorObject::missing_required_client_capability(failure.message(name), required),
            true,
        ),
        _ => Answer::error(
            running.id,
            &ErrorObject::internal_error(failure.message(name)),
            false,
        ),
    }
}

/// A prompt's or reader's failure: `-32602` with the handler's reason as
/// written when it refused its arguments or URI
/// ([`InvalidArguments`](crate::prompt::InvalidArguments); a proxy's
/// upstream wrote its own), else as [`failed`].
fn refused_or_failed(running: &Running<'_>, name: &str, failure: &ToolFailure) -> Answer {
    match failure.invalid_arguments() {
        Some(message) => {
            let error = ErrorObject::new(error_code::INVALID_PARAMS, excerpt(message, 1000));
            Answer::error(running.id, &error, false)
        }
        None => failed(running, name, failure),
    }
}

/// The answer to a handler that needs URL-mode elicitations completed
/// first, when the client can take them as such (`url_required.rs`).
fn url_required(running: &Running<'_>, failure: &ToolFailure) -> Option<Answer> {
    super::url_required::answer(running, failure.url_elicitation_required()?)
}

fn complete_type(version: ProtocolVersion) -> Option<ResultType> {
    version.has_result_type().then_some(ResultType::Complete)
}

impl Work {
    /// Runs the work within `options`; `None` when it was cancelled
    /// (nothing to answer).
    pub(crate) async fn run(self, running: Running<'_>, options: CallOptions) -> Option<Answer> {
        match self {
            Work::Tool { tool, arguments } => run_tool(&running, &tool, arguments, options).await,
            Work::Prompt { prompt, arguments } => {
                run_prompt(&running, &prompt, arguments, options).await
            }
            Work::Read {
                uri,
                reader,
                variables,
            } => run_read(&running, uri, &reader, variables, options).await,
            Work::ListResources { cursor } => {
                bounded(&running, options, list_resources(&running, cursor)).await
            }
            Work::Complete {
                completer,
                partial,
                others,
            } => {
                let completing = async {
                    let completion = match completer {
                        Some(complete) => complete(partial, others).await.bounded(),
                        None => Completion::from_values(Vec::new()),
                    };
                    let mut result = CompleteResult::new(completion);
                    result.result_type = complete_type(running.version);
                    Answer::result(running.id, &result)
                };
                bounded(&running, options, completing).await
            }
        }
    }
}

/// Work no handler of its own bounds (a listing, a completion), bounded as
/// handlers are: ended by a cancellation (`None`), or at the call time
/// limit (an error).
async fn bounded(
    running: &Running<'_>,
    mut options: CallOptions,
    work: impl Future<Output = Answer>,
) -> Option<Answer> {
    let limit = options.timeout;
    tokio::select! {
        biased;
        () = crate::tool::cancelled(options.cancel.take()) => None,
        answer = work => Some(answer),
        () = crate::tool::deadline(limit) => {
            let limit = limit.unwrap_or_default().as_millis();
            let error = ErrorObject::internal_error(format!("timed out after {limit} ms"));
            Some(Answer::error(running.id, &error, false))
        }
    }
}

async fn run_tool(
    running: &Running<'_>,
    tool: &RegisteredTool,
    arguments: Option<Map<String, Value>>,
    options: CallOptions,
) -> Option<Answer> {
    let outcome = tool
        .run(arguments, options, Some(running.asking.clone()))
        .await;
    let (id, version) = (running.id, running.version);
    match outcome {
        CallOutcome::Cancelled => None,
        CallOutcome::Success(output) => {
            let result = shape::success(
                output,
                tool,
                version,
                running.shared.options.text_block_for_modern,
            );
            Some(Answer {
                body: result.encode(id),
                refused: false,
            })
        }
        CallOutcome::Failed(failure) => Some(match url_required(running, &failure) {
            Some(answer) => answer,
            // 2026-07-28: a request that needs a capability its client
            // did not declare is a protocol error, not a tool error.
            None if version.is_stateless() && failure.missing_capability().is_some() => {
                failed(running, &tool.name, &failure)
            }
            None => Answer::result(id, &shape::failure(&failure, &tool.name, version)),
        }),
        CallOutcome::InputRequired(questions) => {
            let result = running
                .plan
                .input_required(running.shared, &running.asking, questions);
            Some(Answer::result(id, &result))
        }
    }
}

/// The context a prompt's or reader's handler is handed.
fn context(name: &str, running: &Running<'_>, options: &mut CallOptions) -> (ToolContext, Bounds) {
    let context = ToolContext::new(
        Arc::from(name),
        options.progress.take(),
        options.log.take(),
        None,
    )
    .with_asking(Some(running.asking.context.clone()))
    .with_caller(options.caller.take());
    let bounds = Bounds {
        cancel: options.cancel.take(),
        timeout: options.timeout,
        round: running.asking.round.clone(),
    };
    (context, bounds)
}

async fn run_prompt(
    running: &Running<'_>,
    prompt: &Prompt,
    arguments: BTreeMap<String, String>,
    mut options: CallOptions,
) -> Option<Answer> {
    let name = prompt.name().to_owned();
    let (context, bounds) = context(&name, running, &mut options);
    let future = (prompt.render)(context, arguments);
    match drive(Arc::from(name.as_str()), future, bounds).await {
        Ran::Done(mut result) => {
            shape::prompt_messages(&mut result.messages, running.version);
            result.result_type = complete_type(running.version);
            Some(Answer::result(running.id, &result))
        }
        Ran::Failed(failure) => Some(refused_or_failed(running, &name, &failure)),
        Ran::Cancelled => None,
        Ran::InputRequired(questions) => {
            let result = running
                .plan
                .input_required(running.shared, &running.asking, questions);
            Some(Answer::result(running.id, &result))
        }
    }
}

async fn run_read(
    running: &Running<'_>,
    uri: String,
    reader: &Reader,
    variables: BTreeMap<String, String>,
    mut options: CallOptions,
) -> Option<Answer> {
    let (context, bounds) = context(&uri, running, &mut options);
    let future = reader(context, uri.clone(), variables);
    match drive(Arc::from(uri.as_str()), future, bounds).await {
        Ran::Done(contents) if contents.is_empty() => Some(Answer::error(
            running.id,
            &not_found(&uri, running.version),
            running.version.is_stateless(),
        )),
        Ran::Done(contents) => {
            let mut result = ReadResourceResult::new(contents);
            if running.version.is_stateless() {
                let options = &running.shared.options;
                result.result_type = Some(ResultType::Complete);
                result.ttl_ms =
                    Some(i64::try_from(options.list_ttl.as_millis()).unwrap_or(i64::MAX));
                result.cache_scope = Some(options.cache_scope);
            }
            Some(Answer::result(running.id, &result))
        }
        Ran::Failed(failure) => Some(refused_or_failed(running, &uri, &failure)),
        Ran::Cancelled => None,
        Ran::InputRequired(questions) => {
            let result = running
                .plan
                .input_required(running.shared, &running.asking, questions);
            Some(Answer::result(running.id, &result))
        }
    }
}

/// A resource that does not exist, naming its URI: -32602 on 2026-07-28
/// (SEP-2164), -32002 on 2025-11-25 and earlier, as each revision says.
pub(crate) fn not_found(uri: &str, version: ProtocolVersion) -> ErrorObject {
    let shown = toolshape_protocol::text::excerpt(uri, 200);
    let code = if version.is_stateless() {
        toolshape_protocol::error_code::INVALID_PARAMS
    } else {
        toolshape_protocol::error_code::LEGACY_RESOURCE_NOT_FOUND
    };
    ErrorObject::new(code, format!("Resource not found: {shown}"))
        .with_data(json!({ "uri": shown }))
}

async fn list_resources(running: &Running<'_>, cursor: Option<String>) -> Answer {
    let registry: &ResourceRegistry = &running.shared.resources;
    let all = match registry.list().await {
        Ok(all) => all,
        Err(error) => {
            return Answer::error(
                running.id,
                &ErrorObject::internal_error(format!("listing the resources failed: {error}")),
                false,
            );
        }
    };
    let (page, next) = match super::pages::page(
        all.iter(),
        cursor.as_deref(),
        running.shared.options.page_size,
    ) {
        Ok(paged) => paged,
        Err(error) => return Answer::error(running.id, &error, running.version.is_stateless()),
    };
    let mut result =
        toolshape_protocol::lists::ListResourcesResult::new(page).with_next_cursor(next);
    if running.version.is_stateless() {
        let options = &running.shared.options;
        result = result.with_cache_hints(options.list_ttl, options.cache_scope);
    }
    Answer::result(running.id, &result)
}
