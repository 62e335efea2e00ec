//! Asking the client from inside a running tool (or prompt, or resource
//! reader): the user (elicitation), the client's model (sampling), its
//! roots. The same code works on every revision: on the handshake ones the
//! server sends the client a request and waits for its answer; on
//! 2026-07-28 the call ends with an `input_required` result and runs again,
//! from the start, when the client retries with the answers (so the code
//! before a question should be free of side effects, or idempotent).

use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolshape_protocol::asks::{
    Ask, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    ListRootsResult, Root,
};
use toolshape_protocol::{ClientCapabilities, ErrorObject, ProtocolVersion};
use toolshape_schema::{SchemaEngine, Trust, ValidationError};

use super::context::ToolContext;
use super::error::ToolError;
use super::handler::BoxFuture;

/// How a server asks its client; one per request (legacy sessions send a
/// request; 2026-07-28 answers from the retry or ends the round).
pub(crate) trait Asker: Send + Sync + std::fmt::Debug {
    /// Asks (under `key` on 2026-07-28, when given); resolves with the
    /// client's result, as JSON.
    fn ask(&self, key: Option<String>, ask: Ask) -> BoxFuture<Result<Value, AskError>>;

    /// Whether this run ended to ask the client (2026-07-28
    /// `input_required`): the request runs again with the answers.
    fn ended_for_input(&self) -> bool {
        false
    }
}

/// Who a request's handler may ask, and what the client said it supports.
#[derive(Debug, Clone)]
pub(crate) struct AskContext {
    /// The client's capabilities (from `initialize`, or this request's `_meta`).
    pub(crate) capabilities: Arc<ClientCapabilities>,
    /// The client's revision: what it may be asked (`Ask::check_fit`).
    pub(crate) version: ProtocolVersion,
    pub(crate) asker: Arc<dyn Asker>,
}

/// Why asking the client failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The client did not declare the capability the question needs.
    #[error(
        "the client does not support {what} (it did not declare the `{capability}` capability)"
    )]
    MissingCapability {
        /// What was asked, in words.
        what: &'static str,
        /// The capability it needs, as the client would declare it.
        capability: &'static str,
        /// The capabilities that would allow it.
        required: Box<ClientCapabilities>,
    },
    /// The client's revision has no such question (`Ask::check_fit`): it
    /// was not sent.
    #[error("the client cannot be asked this on protocol revision {version}: {reason}")]
    NotInRevision {
        /// The client's revision.
        version: ProtocolVersion,
        /// What the revision lacks.
        reason: &'static str,
    },
    /// There is no client to ask (the tool was called in process).
    #[error("there is no client to ask: the tool was called in process")]
    NoClient,
    /// The client answered with an error.
    #[error("the client refused {method}: {error}")]
    Refused {
        /// The request.
        method: &'static str,
        /// Its error.
        #[source]
        error: ErrorObject,
    },
    /// The client's answer is not what the request asks for.
    #[error("the client's answer to {method} is malformed: {reason}")]
    Malformed {
        /// The request.
        method: &'static str,
        /// Why.
        reason: String,
    },
    /// The type [`ToolContext::elicit`] asks for cannot be a form (MCP's
    /// forms are flat objects of primitive fields), or its schema does not
    /// compile: nothing was sent.
    #[error("{type_name} cannot be asked for as a form: {reason}")]
    NotAForm {
        /// The type asked for.
        type_name: &'static str,
        /// Why not.
        reason: String,
    },
    /// The elicited answer does not match the requested schema.
    #[error("the answer does not match the requested schema: {0}")]
    Invalid(#[source] ValidationError),
    /// The connection to the client ended before it answered.
    #[error("the client went away before it answered")]
    Closed,
    /// The client did not answer in time.
    #[error("the client did not answer within {} s", .0.as_secs())]
    TimedOut(std::time::Duration),
}

impl AskError {
    /// The error to answer a server whose question this was, when a
    /// gateway relays it: the client's own refusal as it is, `-32601` when
    /// the client cannot take such a question, else an internal error.
    pub fn into_answer(self) -> ErrorObject {
        match self {
            AskError::Refused { error, .. } => error,
            AskError::MissingCapability { .. }
            | AskError::NotInRevision { .. }
            | AskError::NoClient => ErrorObject::new(
                toolshape_protocol::error_code::METHOD_NOT_FOUND,
                format!("the client this question is for cannot take it: {self}"),
            ),
            other => ErrorObject::internal_error(other.to_string()),
        }
    }
}

impl From<AskError> for ToolError {
    fn from(error: AskError) -> Self {
        ToolError::with_source(error.to_string(), error)
    }
}

/// What the user did with a typed elicitation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Elicitation<T> {
    /// Submitted: the answer, checked against the requested schema and decoded.
    Accepted(T),
    /// Explicitly declined.
    Declined,
    /// Dismissed without a choice.
    Cancelled,
}

fn engine() -> &'static SchemaEngine {
    static ENGINE: OnceLock<SchemaEngine> = OnceLock::new();
    ENGINE.get_or_init(|| SchemaEngine::builder().trust(Trust::Trusted).build())
}

/// The elicitation schema of `T`: a flat object of primitive properties
/// (`form.rs`), or why `T` cannot be asked as a form.
fn requested_schema<T: JsonSchema>(derived: &Value) -> Result<Value, AskError> {
    super::form::form_schema(derived).map_err(|reason| AskError::NotAForm {
        type_name: std::any::type_name::<T>(),
        reason,
    })
}

fn decode<R: DeserializeOwned>(method: &'static str, answer: Value) -> Result<R, AskError> {
    serde_json::from_value(answer).map_err(|e| AskError::Malformed {
        method,
        reason: toolshape_protocol::text::excerpt(&e.to_string(), 200),
    })
}

/// What each question needs the client to have declared.
fn requirement(ask: &Ask) -> (&'static str, &'static str, ClientCapabilities) {
    let mut required = ClientCapabilities::default();
    match ask {
        Ask::Elicit(params) if params.mode.as_deref() == Some("url") => {
            let mut modes = Map::new();
            modes.insert("url".into(), Value::Object(Map::new()));
            required.elicitation = Some(modes);
            (
                "sending the user to a URL (URL-mode elicitation)",
                "elicitation.url",
                required,
            )
        }
        Ask::Elicit(_) => {
            required.elicitation = Some(Map::new());
            ("asking the user (elicitation)", "elicitation", required)
        }
        Ask::Sample(_) => {
            required.sampling = Some(Map::new());
            ("asking the client's model (sampling)", "sampling", required)
        }
        _ => {
            required.roots = Some(Default::default());
            ("listing the client's roots", "roots", required)
        }
    }
}

/// Whether `capabilities` allow `ask`.
fn allowed(capabilities: &ClientCapabilities, ask: &Ask) -> bool {
    match ask {
        Ask::Elicit(params) if params.is_url() => capabilities.supports_url_elicitation(),
        Ask::Elicit(_) => capabilities.supports_elicitation(),
        Ask::Sample(_) => capabilities.supports_sampling(),
        _ => capabilities.roots.is_some(),
    }
}

impl ToolContext {
    /// The capabilities the client declared, when a client is calling.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.asking().map(|asking| asking.capabilities.as_ref())
    }

    /// Whether the client declared what `ask` needs, and its revision has
    /// such a question.
    pub fn can_ask(&self, ask: &Ask) -> bool {
        self.asking().is_some_and(|asking| {
            allowed(&asking.capabilities, ask) && ask.check_fit(asking.version).is_ok()
        })
    }

    /// Asks the client `ask` and returns its result as JSON. On 2026-07-28
    /// the question travels under `key` in the `input_required` result (and
    /// its answer comes back under it); without a key, one is made from the
    /// question's kind and order. The client must have declared the
    /// capability the question needs.
    pub async fn ask_as(&self, key: Option<&str>, ask: Ask) -> Result<Value, AskError> {
        let asking = self.asking().ok_or(AskError::NoClient)?;
        // The revision first: what it lacks, its client is not asked to
        // declare (and its declaration of it was set aside at the handshake).
        ask.check_fit(asking.version)
            .map_err(|reason| AskError::NotInRevision {
                version: asking.version,
                reason,
            })?;
        if !allowed(&asking.capabilities, &ask) {
            let (what, capability, required) = requirement(&ask);
            return Err(AskError::MissingCapability {
                what,
                capability,
                required: Box::new(required),
            });
        }
        asking.asker.ask(key.map(str::to_owned), ask).await
    }

    /// Asks the user, through the client, to fill a form shaped by `T`: the
    /// requested schema is derived from `T`, and the answer is checked
    /// against it and decoded, like a tool's output.
    pub async fn elicit<T: DeserializeOwned + JsonSchema>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, AskError> {
        // The client is sent the form; the answer is checked against all
        // that `T`'s schema says (patterns, bounds the form cannot carry).
        let derived = super::schema::derive_input::<T>();
        let form = requested_schema::<T>(&derived)?;
        let compiled = engine().compile(&derived).map_err(|e| AskError::NotAForm {
            type_name: std::any::type_name::<T>(),
            reason: format!("its schema does not compile: {e}"),
        })?;
        let result = self.elicit_form(ElicitParams::form(message, form)).await?;
        match result.action {
            ElicitAction::Decline => Ok(Elicitation::Declined),
            ElicitAction::Cancel => Ok(Elicitation::Cancelled),
            ElicitAction::Accept => {
                let content = Value::Object(result.content.unwrap_or_default());
                compiled.validate(&content).map_err(AskError::Invalid)?;
                let value = decode(toolshape_protocol::methods::ELICITATION_CREATE, content)?;
                Ok(Elicitation::Accepted(value))
            }
        }
    }

    /// Asks the user, through the client, with a form given as is.
    pub async fn elicit_form(&self, params: ElicitParams) -> Result<ElicitResult, AskError> {
        let answer = self.ask_as(None, Ask::Elicit(params)).await?;
        decode(toolshape_protocol::methods::ELICITATION_CREATE, answer)
    }

    /// Asks the user to visit `url` (URL-mode elicitation, 2025-11-25 on).
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<ElicitAction, AskError> {
        let params = ElicitParams::url(message, url, elicitation_id);
        let answer = self.ask_as(None, Ask::Elicit(params)).await?;
        let result: ElicitResult = decode(toolshape_protocol::methods::ELICITATION_CREATE, answer)?;
        Ok(result.action)
    }

    /// Asks the client's model (sampling).
    pub async fn sample(
        &self,
        params: CreateMessageParams,
    ) -> Result<CreateMessageResult, AskError> {
        let answer = self.ask_as(None, Ask::Sample(params)).await?;
        decode(toolshape_protocol::methods::SAMPLING_CREATE_MESSAGE, answer)
    }

    /// The client's roots.
    pub async fn roots(&self) -> Result<Vec<Root>, AskError> {
        let answer = self.ask_as(None, Ask::Roots).await?;
        let result: ListRootsResult = decode(toolshape_protocol::methods::ROOTS_LIST, answer)?;
        Ok(result.roots)
    }
}

/// Asking on behalf of another server: a gateway relays the questions of
/// the server it calls to the client calling it.
impl ToolContext {
    /// Asks this context's client the question a server asked about a call
    /// this context's tool made (`key` as the server gave it); the answer, or
    /// the error to answer that server with.
    pub(crate) async fn relay_ask(
        &self,
        key: Option<String>,
        ask: Ask,
    ) -> Result<Value, ErrorObject> {
        self.ask_as(key.as_deref(), ask)
            .await
            .map_err(AskError::into_answer)
    }

    /// What this context's client declared for the questions a server may
    /// ask (elicitation, sampling, roots); nothing without a client.
    pub(crate) fn ask_capabilities(&self) -> ClientCapabilities {
        let mut relayed = ClientCapabilities::default();
        if let Some(declared) = self.client_capabilities() {
            relayed.elicitation.clone_from(&declared.elicitation);
            relayed.sampling.clone_from(&declared.sampling);
            relayed.roots.clone_from(&declared.roots);
        }
        relayed
    }
}
