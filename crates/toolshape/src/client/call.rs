//! Calling a tool: the result is validated against the tool's outputSchema,
//! legacy wrapping is undone, and typed calls decode into Rust types.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Instant;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use toolshape_protocol::meta::keys;
use toolshape_protocol::{CallToolParams, CallToolResult, ContentBlock, Meta, ResultType, methods};
use toolshape_schema::InstanceText;
use toolshape_schema::mcp::WRAPPED_RESULT_KEY;

use super::error::{ClientError, ClientErrorKind};
use super::received::{self, ReceivedResult};
use super::rounds::{MAX_ROUNDS, is_header_mismatch};
use super::{Client, mirror};
use crate::tool::{CallOptions, ToolError, meta_keys};

/// A tool's result, checked: `structured` matched the tool's outputSchema and
/// is unwrapped when the server wrapped it for an older revision. Two
/// results are equal when their values are, whatever JSON text carried them.
#[derive(Debug, Clone)]
pub struct ToolResult {
    /// The structured result.
    pub structured: Option<Value>,
    /// The content blocks.
    pub content: Vec<ContentBlock>,
    /// Whether the tool reported an error (its output is then not validated).
    pub is_error: bool,
    /// The result's `_meta`.
    pub meta: Option<Meta>,
    /// `structuredContent` as the server wrote it.
    structured_json: Option<Box<str>>,
    /// The whole result as the server wrote it, when it can be relayed so.
    received: Option<ReceivedResult>,
}

impl PartialEq for ToolResult {
    fn eq(&self, other: &Self) -> bool {
        self.structured == other.structured
            && self.content == other.content
            && self.is_error == other.is_error
            && self.meta == other.meta
    }
}

impl ToolResult {
    /// The JSON text of `structuredContent` exactly as the server sent it
    /// (before any unwrapping of `{"result": value}`); `None` when it sent
    /// none. A text block with this very text repeats the structured result.
    pub fn structured_json(&self) -> Option<&str> {
        self.structured_json.as_deref()
    }

    /// Takes the result exactly as its server wrote it, when it is one that
    /// can be relayed unchanged to a peer on the same revision (see
    /// [`ReceivedResult`]); `None` otherwise, or once taken.
    pub fn take_received(&mut self) -> Option<ReceivedResult> {
        self.received.take()
    }

    /// The text of the text blocks, joined by newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The [`ToolError`] an `isError` result stands for: its text (or a
    /// message naming `tool` when it has none), with the retry hints a
    /// toolshape server puts in `_meta` ([`ToolError::retry_meta`]). For
    /// handing a server's tool error on: a bridge or a gateway.
    pub fn tool_error(&self, tool: &str) -> ToolError {
        let text = self.text();
        let mut error = ToolError::new(if text.is_empty() {
            format!("tool {tool} reported an error")
        } else {
            text
        });
        if let Some(meta) = &self.meta {
            if meta.get(meta_keys::CAN_RETRY) == Some(&Value::Bool(true)) {
                error = error.retryable(true);
            }
            if let Some(ms) = meta.get(meta_keys::RETRY_AFTER_MS).and_then(Value::as_u64) {
                error = error.retry_after(std::time::Duration::from_millis(ms));
            }
        }
        error
    }
}

fn digest(arguments: Option<&Map<String, Value>>) -> String {
    let mut hasher = DefaultHasher::new();
    serde_json::to_string(&arguments)
        .unwrap_or_default()
        .hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

impl Client {
    /// Calls a tool. A result with `isError: true` is `Ok` with `is_error` set;
    /// see [`Client::call`] for a call that treats it as an error.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<ToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::default())
            .await
    }

    /// Calls a tool with per-call options: its own timeout, progress reports,
    /// cancellation (the server is told with `notifications/cancelled`, or
    /// over stateless HTTP by closing the request).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        options: CallOptions,
    ) -> Result<ToolResult, ClientError> {
        if let Some(confirm) = &self.inner.hooks.before_call {
            let arguments_value = Value::Object(arguments.clone().unwrap_or_default());
            if !confirm(name, &arguments_value).await {
                return Err(ClientErrorKind::Declined(name.to_owned()).into());
            }
        }
        // The audit record's digest is only worked out when someone listens.
        let audited = tracing::enabled!(target: "toolshape::audit", tracing::Level::INFO);
        let arguments_digest = audited.then(|| digest(arguments.as_ref()));
        let started = Instant::now();
        let outcome = self.call_checked(name, arguments, options).await;
        if let Some(arguments_digest) = arguments_digest {
            let outcome_label = match &outcome {
                Ok(result) if result.is_error => "tool_error",
                Ok(_) => "ok",
                Err(e) if e.is_validation_error() => "invalid_output",
                Err(_) => "failed",
            };
            tracing::info!(
                target: "toolshape::audit",
                tool = name,
                arguments_digest = %arguments_digest,
                duration_ms = started.elapsed().as_secs_f64() * 1000.0,
                outcome = outcome_label,
                "tool call"
            );
        }
        outcome
    }

    /// Calls a tool and decodes its structured result into `T` (a tool
    /// without one: its text, read as JSON or else as a string; no content
    /// at all, as a `()`). A tool error,
    /// a validation failure, a protocol or transport failure and a timeout are
    /// each their own [`ClientErrorKind`]; a tool error and a result that does
    /// not fit `T` keep the result ([`ClientError::rejected_result`],
    /// [`ClientError::tool_error`]).
    pub async fn call<T: DeserializeOwned>(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<T, ClientError> {
        self.call_with(name, arguments, CallOptions::default())
            .await
    }

    /// [`Client::call`] with per-call options, as
    /// [`Client::call_tool_with`] takes them: its own timeout, progress
    /// reports, cancellation.
    pub async fn call_with<T: DeserializeOwned>(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: CallOptions,
    ) -> Result<T, ClientError> {
        let arguments = match serde_json::to_value(arguments) {
            Ok(Value::Object(map)) => Some(map),
            Ok(Value::Null) => None,
            Ok(_) => return Err(ClientErrorKind::Arguments(None).into()),
            Err(e) => return Err(ClientErrorKind::Arguments(Some(e)).into()),
        };
        let result = self.call_tool_with(name, arguments, options).await?;
        if result.is_error {
            let error = ClientError::from(ClientErrorKind::Tool {
                tool: name.to_owned(),
                message: toolshape_protocol::text::excerpt(&result.text(), 2000),
            });
            return Err(error.rejecting(result));
        }
        let decoded = match &result.structured {
            Some(value) => T::deserialize(value),
            // A text-only tool: its text read as JSON, or else as a string
            // (`"42"` is a number to a `u32`, and a string to a `String`);
            // no content at all (a tool that returns nothing) is `null`, a `()`.
            None if result.content.is_empty() => T::deserialize(&Value::Null),
            None => {
                let text = result.text();
                match serde_json::from_str::<Value>(&text).map(|value| T::deserialize(&value)) {
                    Ok(Ok(decoded)) => Ok(decoded),
                    _ => T::deserialize(&Value::String(text)),
                }
            }
        };
        decoded.map_err(|source| {
            ClientError::from(ClientErrorKind::Decode {
                tool: name.to_owned(),
                source,
            })
            .rejecting(result)
        })
    }

    async fn call_checked(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        options: CallOptions,
    ) -> Result<ToolResult, ClientError> {
        let listing = self.listing().await?;
        let entry = listing.by_name.get(name).cloned();
        let relay = options.relay;
        // A gateway relays only what it checked: a tool dropped from the
        // listing has no schema left to check its result by.
        if relay && entry.is_none() {
            return Err(ClientErrorKind::Unlisted(name.to_owned()).into());
        }
        let peer = &self.inner.peer;
        let id = peer.next_id();
        let mut route = self.route();
        let mut meta = match options.relay_asks {
            Some(context) => self.relaying(&mut route, context),
            None => self.request_meta(),
        };
        if let Some(progress) = options.progress {
            let token = serde_json::to_value(&id).unwrap_or(Value::Null);
            meta.get_or_insert_with(Meta::new)
                .insert(keys::PROGRESS_TOKEN.into(), token);
            peer.route_progress(id.clone(), progress);
        }
        route.name = Some(name.to_owned());
        if let Some(log) = options.log {
            // 2026-07-28: each request asks for its own log messages.
            if let Some(meta) = meta.as_mut() {
                meta.insert(keys::LOG_LEVEL.into(), json!(log.0));
            }
            route.log = Some(log);
        }
        if let Some(entry) = &entry {
            route.param_headers = entry.headers_for(arguments.as_ref());
        }
        let timeout = options
            .timeout
            .unwrap_or(self.inner.options.request_timeout);
        let mut params = CallToolParams::new(name, arguments);
        params.meta = meta;
        let mut relisted = None;
        let mut spent = 0;
        let request = async {
            let sent = self
                .request_in_counted_rounds(
                    methods::TOOLS_CALL,
                    &route,
                    timeout,
                    &mut params,
                    &mut spent,
                )
                .await;
            // The spec's SHOULD: a call refused for its headers (the tool
            // may have changed since it was listed) is sent again, once,
            // with the headers of the tools listed again, when they differ.
            let Err(error) = sent else { return sent };
            // (Refused on the last round allowed: the refusal is the answer.)
            if !self.protocol_version().is_stateless()
                || !is_header_mismatch(&error)
                || spent >= MAX_ROUNDS
            {
                return Err(error);
            }
            let Some(entry) = self.relisted(name, &listing).await else {
                return Err(error);
            };
            let headers = entry.headers_for(params.arguments.as_ref());
            if headers == route.param_headers {
                return Err(error);
            }
            route.param_headers = headers;
            relisted = Some(entry);
            self.request_in_counted_rounds(
                methods::TOOLS_CALL,
                &route,
                timeout,
                &mut params,
                &mut spent,
            )
            .await
        };
        // A cancellation drops the request, which tells the server.
        let answer = match options.cancel {
            Some(cancel) => tokio::select! {
                answer = request => Some(answer),
                _ = cancel => None,
            },
            None => Some(request.await),
        };
        peer.unroute_progress(&id);
        let Some(answer) = answer else {
            return Err(ClientErrorKind::Cancelled.into());
        };
        let answer = answer?;
        // Sent again after listing again: judged by the tool as listed now.
        let entry = relisted.or(entry);
        let bad =
            |e: serde_json::Error| ClientError::invalid(format!("bad tools/call result: {e}"));
        // `structuredContent` is kept as sent beside its value: a text block
        // with the same text is its mirror, told without parsing it again.
        // Usually this reading is the only one of the result's text.
        let mut reread: Option<Box<RawValue>> = None;
        let mirrored = relay
            .then(|| mirror::read_mirrored(answer.text()))
            .flatten();
        let Reading {
            text,
            is_error,
            structured_json,
            mut read,
            mut relayable,
            content,
            meta,
            result_type,
            identity,
        } = match mirrored {
            Some(mirrored) => Reading::mirrored(answer.text(), mirrored),
            None => {
                let (text, result) = match serde_json::from_str(answer.text()) {
                    Ok(result) => (answer.text(), result),
                    Err(error) => match answer.reread()? {
                        Some(result) => {
                            let result = &*reread.insert(result);
                            (
                                result.get(),
                                serde_json::from_str(result.get()).map_err(bad)?,
                            )
                        }
                        None => return Err(bad(error)),
                    },
                };
                Reading::parsed(text, result, relay).map_err(bad)?
            }
        };
        let mut refusal = None;
        if !is_error && let Some(entry) = &entry {
            if let Some(compiled) = entry.output_schema(&self.inner.engine).await {
                refusal = match (compiled, &read) {
                    (Err(source), _) => Some(ClientErrorKind::UnusableSchema {
                        tool: name.to_owned(),
                        source,
                    }),
                    (Ok(_), Structured::None) => Some(ClientErrorKind::MissingStructuredContent {
                        tool: name.to_owned(),
                    }),
                    (Ok(compiled), read) => {
                        let checked = match read {
                            Structured::Text(text) => compiled.validate_text(text),
                            Structured::Value(value) => compiled.validate(value),
                            Structured::None => Ok(()),
                        };
                        checked.err().map(|source| ClientErrorKind::Validation {
                            tool: name.to_owned(),
                            source,
                        })
                    }
                };
            }
            let marked = meta
                .as_ref()
                .is_some_and(|m| m.contains_key(keys::WRAPPED_OUTPUT));
            if entry.wrapped || marked {
                read = read.unwrapped();
                relayable = false;
            }
        }
        let version = self.inner.negotiated.version;
        // Before 2026-07-28 a value goes with its text (the peer may read
        // only content): a result without one is written again, with it.
        let lacks_mirror = structured_json.is_some()
            && content.is_empty()
            && !version.allows_any_structured_content();
        relayable = relayable
            && !lacks_mirror
            && !is_error
            && refusal.is_none()
            && meta.is_none()
            && result_type == version.has_result_type().then_some(ResultType::Complete)
            && received::is_one_line(text);
        // A relaying caller gets no value of a result it can relay.
        let structured = match read {
            Structured::Text(_) if relayable => None,
            read => read.into_value(),
        };
        let structured_kind = received::ReceivedValue::of(structured_json);
        let structured_json = structured_json.map(Box::from);
        // Without the server's name, which the relaying server puts its own
        // in place of.
        let unnamed = identity.filter(|_| relayable).map(|identity| {
            let mut json = String::with_capacity(text.len());
            json.push_str(text.get(..identity.start).unwrap_or_default());
            json.push_str(text.get(identity.end..).unwrap_or_default());
            json.into_boxed_str()
        });
        // The text is kept where it was read, not copied.
        let received = relayable.then(|| {
            let (json, start) = match (unnamed, reread) {
                (Some(json), _) => (json, 0),
                (None, Some(result)) => (Box::<str>::from(result), 0),
                (None, None) => answer.into_json(),
            };
            ReceivedResult {
                version,
                json,
                start,
                structured: structured_kind,
            }
        });
        let checked = ToolResult {
            structured,
            content,
            is_error,
            meta,
            structured_json,
            received,
        };
        match refusal {
            Some(kind) => Err(ClientError::from(kind).rejecting(checked)),
            None => Ok(checked),
        }
    }
}

/// A result as read, before it is checked.
struct Reading<'a> {
    /// The result's JSON text.
    text: &'a str,
    is_error: bool,
    /// `structuredContent`'s JSON text.
    structured_json: Option<&'a str>,
    read: Structured<'a>,
    /// Whether it reads one way only and its content blocks are the mirror
    /// of `structuredContent` (so far: the checks may still refuse it).
    relayable: bool,
    content: Vec<ContentBlock>,
    meta: Option<Meta>,
    result_type: Option<ResultType>,
    /// Where in `text` a `_meta` of only the server's name is (read in one
    /// pass): a relaying caller leaves it out of the result it relays, and
    /// its `meta` is then none.
    identity: Option<std::ops::Range<usize>>,
}

impl<'a> Reading<'a> {
    /// A result read in one pass by [`mirror::read_mirrored`].
    fn mirrored(text: &'a str, mirrored: mirror::Mirrored<'a>) -> Self {
        Self {
            text,
            is_error: mirrored.is_error,
            structured_json: Some(mirrored.structured_json),
            relayable: !mirrored.structured.repeats_member_names(),
            read: Structured::Text(mirrored.structured),
            content: vec![ContentBlock::text(mirrored.structured_json)],
            meta: None,
            result_type: mirrored.result_type,
            identity: mirrored.identity,
        }
    }

    /// A result read with its members kept as text; for a relaying caller
    /// `structuredContent` is read for validation only, into an
    /// `InstanceText` (the `Value` is built if the result cannot be
    /// relayed).
    fn parsed(
        text: &'a str,
        result: CallToolResult<&'a RawValue, &'a RawValue>,
        relay: bool,
    ) -> serde_json::Result<Self> {
        let structured_json = result.structured_content.map(RawValue::get);
        let (read, mut relayable) = match structured_json {
            Some(json) if relay => {
                let text = InstanceText::parse(json)?;
                let one_way = !text.repeats_member_names();
                (Structured::Text(text), one_way)
            }
            Some(json) => {
                let (value, one_way) = received::read_value(json)?;
                (Structured::Value(value), one_way)
            }
            None => (Structured::None, true),
        };
        let mut content = Vec::with_capacity(result.content.len());
        for block in &result.content {
            let (block, mirror) = read_block(block, structured_json)?;
            relayable &= mirror;
            content.push(block);
        }
        Ok(Self {
            text,
            is_error: result.is_error(),
            structured_json,
            read,
            relayable,
            content,
            meta: result.meta,
            result_type: result.result_type,
            identity: None,
        })
    }
}

/// A result's `structuredContent` as read.
enum Structured<'a> {
    None,
    Value(Value),
    /// Read for validation without a `Value` (a relaying caller's).
    Text(InstanceText<'a>),
}

impl Structured<'_> {
    /// `{"result": v}` as `v`; no structured content stays none.
    fn unwrapped(self) -> Self {
        match self.into_value() {
            Some(value) => Structured::Value(unwrap_result(value)),
            None => Structured::None,
        }
    }

    fn into_value(self) -> Option<Value> {
        match self {
            Structured::None => None,
            Structured::Value(value) => Some(value),
            Structured::Text(text) => Some(text.to_value()),
        }
    }
}

/// One content block of a result, and whether it is the text block
/// repeating `structured` (the JSON text of `structuredContent`, from which
/// it is then made rather than read again); any other block is parsed.
fn read_block(
    block: &RawValue,
    structured: Option<&str>,
) -> serde_json::Result<(ContentBlock, bool)> {
    match structured {
        Some(text) if mirror::is_text_block_of(block.get(), text) => {
            Ok((ContentBlock::text(text), true))
        }
        _ => Ok((serde_json::from_str(block.get())?, false)),
    }
}

/// `{"result": v}` → `v`; anything else unchanged.
fn unwrap_result(value: Value) -> Value {
    match value {
        Value::Object(mut map) if map.len() == 1 && map.contains_key(WRAPPED_RESULT_KEY) => {
            map.remove(WRAPPED_RESULT_KEY).unwrap_or(Value::Null)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrapping_keeps_no_structured_content_as_none() {
        assert!(Structured::None.unwrapped().into_value().is_none());
        let text = InstanceText::parse(r#"{"result":[1,{"a":2}]}"#).unwrap();
        assert_eq!(
            Structured::Text(text).unwrapped().into_value(),
            Some(json!([1, {"a": 2}]))
        );
        let other = Structured::Value(json!({"result": 1, "more": 2}));
        assert_eq!(
            other.unwrapped().into_value(),
            Some(json!({"result": 1, "more": 2}))
        );
    }
}
