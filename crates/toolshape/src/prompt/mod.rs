//! Prompts: message templates a server offers, with string arguments. A
//! [`Prompt`] is built from a handler of its arguments (checked for the
//! required ones first), or typed from a struct whose fields are its
//! arguments. Handlers are handed a [`ToolContext`] like tools, so they may
//! ask the client.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolshape_protocol::completion::Completion;
use toolshape_protocol::prompts::{GetPromptResult, Prompt as PromptDefinition, PromptArgument};

use crate::completion::Completer;

mod registry;

use crate::tool::{BoxFuture, ToolContext, ToolError};
pub use registry::PromptRegistry;

/// Renders a prompt from its arguments.
pub(crate) type Renderer = Arc<
    dyn Fn(ToolContext, BTreeMap<String, String>) -> BoxFuture<Result<GetPromptResult, ToolError>>
        + Send
        + Sync,
>;

/// Longest argument value accepted, in bytes.
const MAX_ARGUMENT_BYTES: usize = 64 * 1024;

/// Why a prompt cannot be rendered from the arguments it was given (a
/// value out of range, a combination that makes no sense), or a resource
/// read from the URI it was given: returned by a prompt's renderer or a
/// resource reader (`Err(InvalidArguments::new(..).into())`), the request
/// is answered `-32602 Invalid params` with this message as written (at
/// most 1,000 characters), as a missing required argument is answered
/// `-32602`, instead of as an internal error. (A URI that names nothing is
/// [`ResourceNotFound`](crate::resource::ResourceNotFound).)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
#[non_exhaustive]
pub struct InvalidArguments {
    /// What is wrong with them, for the client.
    pub message: String,
}

impl InvalidArguments {
    /// The arguments will not do, for this reason.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// `?` on a refusal of the arguments in a prompt's renderer.
impl From<InvalidArguments> for ToolError {
    fn from(invalid: InvalidArguments) -> ToolError {
        ToolError::from_error(invalid)
    }
}

/// A prompt to register.
#[derive(Clone)]
pub struct Prompt {
    pub(crate) definition: PromptDefinition,
    pub(crate) render: Renderer,
    pub(crate) completers: BTreeMap<String, Completer>,
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt")
            .field("definition", &self.definition)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// A prompt named `name`, rendered by `render` from its arguments.
    pub fn new<F, Fut>(name: impl Into<String>, render: F) -> Prompt
    where
        F: Fn(ToolContext, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ToolError>> + Send + 'static,
    {
        Prompt::from_definition(PromptDefinition::new(name), render)
    }

    /// A prompt described by `definition` as it is (another server's
    /// prompt, relayed by a gateway), rendered by `render`. The arguments
    /// it declares required are checked before `render` runs, as for any
    /// prompt.
    pub fn from_definition<F, Fut>(definition: PromptDefinition, render: F) -> Prompt
    where
        F: Fn(ToolContext, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ToolError>> + Send + 'static,
    {
        Prompt {
            definition,
            render: Arc::new(move |context, arguments| Box::pin(render(context, arguments))),
            completers: BTreeMap::new(),
        }
    }

    /// A prompt whose arguments are the fields of `A` (strings, as prompt
    /// arguments are; documented fields describe their argument; fields
    /// without a default are required), decoded before `render` runs.
    pub fn typed<A, F, Fut>(name: impl Into<String>, render: F) -> Prompt
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ToolError>> + Send + 'static,
    {
        let render = Arc::new(render);
        let schema = crate::tool::derive_input_schema::<A>();
        let name: String = name.into();
        let named: Arc<str> = Arc::from(name.as_str());
        let mut prompt = Prompt::new(name, move |context, arguments: BTreeMap<String, String>| {
            let (render, named) = (Arc::clone(&render), Arc::clone(&named));
            async move {
                let object: Map<String, Value> = arguments
                    .into_iter()
                    .map(|(key, value)| (key, Value::String(value)))
                    .collect();
                let arguments: A = serde_json::from_value(Value::Object(object)).map_err(|e| {
                    InvalidArguments::new(format!("Invalid arguments for prompt {named}: {e}"))
                })?;
                render(context, arguments).await
            }
        });
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let mut argument =
                    PromptArgument::new(name.clone(), required.contains(&name.as_str()));
                argument.description = property
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                prompt
                    .definition
                    .arguments
                    .get_or_insert_with(Vec::new)
                    .push(argument);
            }
        }
        prompt
    }

    /// Sets the description (clients list it; it should say what the prompt is for).
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.definition.description = Some(description.into());
        self
    }

    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.definition.title = Some(title.into());
        self
    }

    /// Declares an argument.
    #[must_use]
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        let mut argument = PromptArgument::new(name, required);
        argument.description = Some(description.into());
        self.definition
            .arguments
            .get_or_insert_with(Vec::new)
            .push(argument);
        self
    }

    /// Suggests values of the argument `name` (`completion/complete`):
    /// `complete` gets what is typed so far and the other arguments, and
    /// returns the values (at most 100 are sent, with how many there were).
    #[must_use]
    pub fn complete<F, Fut>(mut self, name: impl Into<String>, complete: F) -> Self
    where
        F: Fn(String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completers
            .insert(name.into(), crate::completion::of_values(complete));
        self
    }

    /// As [`complete`](Self::complete), for a source that knows more than
    /// it returns: `complete` gives the whole [`Completion`], its `total`
    /// and `hasMore` sent as given (past 100 values, cut and `hasMore`).
    #[must_use]
    pub fn complete_counted<F, Fut>(mut self, name: impl Into<String>, complete: F) -> Self
    where
        F: Fn(String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Completion> + Send + 'static,
    {
        self.completers
            .insert(name.into(), crate::completion::counted(complete));
        self
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.definition.name
    }

    /// Checks `arguments` against the declared ones: strings, bounded, the
    /// required ones present. Undeclared arguments are passed on.
    pub(crate) fn arguments(
        &self,
        given: Option<Map<String, Value>>,
    ) -> Result<BTreeMap<String, String>, String> {
        let mut arguments = BTreeMap::new();
        for (name, value) in given.unwrap_or_default() {
            let Value::String(text) = value else {
                return Err(format!("argument {name:?} must be a string"));
            };
            if text.len() > MAX_ARGUMENT_BYTES {
                return Err(format!(
                    "argument {name:?} is longer than {MAX_ARGUMENT_BYTES} bytes"
                ));
            }
            arguments.insert(name, text);
        }
        for argument in self.definition.arguments.iter().flatten() {
            if argument.required == Some(true) && !arguments.contains_key(&argument.name) {
                return Err(format!("argument {:?} is required", argument.name));
            }
        }
        Ok(arguments)
    }
}
