//! Defining a tool: typed from Rust functions, or dynamic with hand-written schemas.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolshape_protocol::tools::ToolExecution;
use toolshape_protocol::{ContentBlock, Icon, Meta, ToolAnnotations};

use super::context::ToolContext;
use super::error::ToolError;
use super::handler::{ErasedHandler, ToolOutput};
use super::requirements::Requirements;
use super::schema;

/// What a tool's successful result is made of: what other protocols (OTC's
/// `value`) carry of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputShape {
    /// Structured output matching the output schema ([`Tool::typed`], or
    /// [`Tool::dynamic`] with an output schema).
    Structured,
    /// One text ([`Tool::text`]).
    Text,
    /// Content blocks ([`Tool::content`], or [`Tool::dynamic`] without an
    /// output schema).
    Content,
    /// Nothing: the tool acts and returns no value ([`Tool::action`], or a
    /// typed tool whose output type is `()`).
    Nothing,
}

/// A tool to register: name, schemas, metadata and handler.
///
/// ```
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
/// use toolshape::{Tool, ToolError};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct AddInput { a: i64, b: i64 }
///
/// #[derive(Serialize, JsonSchema)]
/// struct Sum { sum: i64 }
///
/// let tool = Tool::typed("add", |input: AddInput| async move {
///     Ok::<_, ToolError>(Sum { sum: input.a + input.b })
/// })
/// .description("Add two integers")
/// .read_only();
/// assert_eq!(tool.name(), "add");
/// ```
#[derive(Clone)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) annotations: Option<ToolAnnotations>,
    pub(crate) icons: Option<Vec<Icon>>,
    pub(crate) execution: Option<ToolExecution>,
    pub(crate) meta: Option<Meta>,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) output_shape: OutputShape,
    pub(crate) toolkit: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) requirements: Requirements,
    pub(crate) output_checked_by_handler: bool,
    /// Whether its name is another server's, held to
    /// [`Tool::relayed_name`]'s rule instead of MCP's naming guidance.
    pub(crate) relayed_name: bool,
    pub(crate) handler: Arc<dyn ErasedHandler>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("toolkit", &self.toolkit)
            .field("version", &self.version)
            .field("input_schema", &self.input_schema)
            .field("output_schema", &self.output_schema)
            .finish_non_exhaustive()
    }
}

/// The arguments as `I`. A number written with a zero fraction (`1.0`) is
/// an integer to JSON Schema, so the input schema admits it where it says
/// `integer`; serde does not for a Rust integer, so when the arguments do
/// not read as they are, they are read again with such numbers as integers.
fn parse_input<I: DeserializeOwned>(arguments: Value) -> Result<I, ToolError> {
    let refused = match I::deserialize(&arguments) {
        Ok(input) => return Ok(input),
        Err(refused) => refused,
    };
    let mut arguments = arguments;
    if integral_floats_as_integers(&mut arguments)
        && let Ok(input) = serde_json::from_value(arguments)
    {
        return Ok(input);
    }
    Err(ToolError::with_source(
        format!("invalid arguments: {refused}"),
        refused,
    ))
}

/// Rewrites each float with no fraction that an `i64` or `u64` holds as that
/// integer (no recursion: a stack); whether any was.
fn integral_floats_as_integers(value: &mut Value) -> bool {
    let mut changed = false;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(members) => stack.extend(members.values_mut()),
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Number(number) if number.is_f64() => {
                let Some(float) = number.as_f64() else {
                    continue;
                };
                if float.fract() != 0.0 || !float.is_finite() {
                    continue;
                }
                // Within ±2^63 (or below 2^64) the cast is exact for an
                // integral float.
                let integer =
                    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&float) {
                        Value::from(float as i64)
                    } else if (0.0..1.844_674_407_370_955_2e19).contains(&float) {
                        Value::from(float as u64)
                    } else {
                        continue;
                    };
                *value = integer;
                changed = true;
            }
            _ => {}
        }
    }
    changed
}

fn structured<O: Serialize>(output: &O) -> Result<ToolOutput, ToolError> {
    serde_json::to_value(output)
        .map(ToolOutput::structured)
        .map_err(|e| {
            ToolError::with_source(format!("the tool's output could not be serialized: {e}"), e)
        })
}

impl Tool {
    /// A tool from an async function of a typed input to a typed, structured output.
    /// Both schemas are derived from the types, here, once.
    ///
    /// The function fails with a [`ToolError`] (the caller then sees an
    /// `isError` result with its message); `?` converts I/O and JSON errors,
    /// strings and [`BoxError`](super::BoxError)s into one, and [`ToolError::from_error`] any
    /// other error.
    ///
    /// The function must not block (see [`Tool::typed_blocking`] for one that does).
    pub fn typed<I, O, F, Fut>(name: impl Into<String>, function: F) -> Tool
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    {
        Tool::typed_with_context(name, move |_context: ToolContext, input: I| function(input))
    }

    /// As [`Tool::typed`], for a function that blocks: file or network I/O
    /// without `async`, or heavy computation. It runs on the runtime's
    /// blocking thread pool, so it never holds up the connection's other
    /// messages, and the call's time limit and cancellation still end the
    /// call at once (the thread itself runs on to the function's end; what it
    /// returns then is dropped). A panic is contained as in any handler.
    ///
    /// An `async` handler must not block: until its first `.await`, it runs on
    /// the thread that reads the connection's messages (over stdio, the only
    /// thread of a current-thread runtime), and nothing, not even its time
    /// limit, can stop a poll that never returns.
    ///
    /// ```
    /// use toolshape::{Tool, ToolError};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Input { n: u64 }
    /// let primes = Tool::typed_blocking("count_primes", |input: Input| {
    ///     let count = (2..input.n).filter(|k| (2..*k).all(|d| k % d != 0)).count();
    ///     Ok::<_, ToolError>(count as u64)
    /// });
    /// assert_eq!(primes.name(), "count_primes");
    /// ```
    pub fn typed_blocking<I, O, F>(name: impl Into<String>, function: F) -> Tool
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + Send + 'static,
        F: Fn(I) -> Result<O, ToolError> + Send + Sync + 'static,
    {
        let function = Arc::new(function);
        Tool::typed(name, move |input: I| {
            let function = Arc::clone(&function);
            async move {
                match tokio::task::spawn_blocking(move || function(input)).await {
                    Ok(result) => result,
                    // Raised again here, where the handler's panics are caught.
                    Err(join) => match join.try_into_panic() {
                        Ok(payload) => std::panic::resume_unwind(payload),
                        Err(_) => Err(ToolError::new("the tool's thread was stopped")),
                    },
                }
            }
        })
    }

    /// As [`Tool::typed`], with the [`ToolContext`] (progress reports, log
    /// messages, credentials, the tool's name).
    ///
    /// An output type of `()` makes a tool that returns nothing, as
    /// [`Tool::action`].
    pub fn typed_with_context<I, O, F, Fut>(name: impl Into<String>, function: F) -> Tool
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(ToolContext, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    {
        if std::any::TypeId::of::<O>() == std::any::TypeId::of::<()>() {
            return Tool::action_with_context(name, move |context: ToolContext, input: I| {
                let output = function(context, input);
                async move { output.await.map(|_| ()) }
            });
        }
        let function = Arc::new(function);
        let handler = move |context: ToolContext, arguments: Value| {
            let function = Arc::clone(&function);
            async move {
                let input = parse_input::<I>(arguments)?;
                let output = function(context, input).await?;
                structured(&output)
            }
        };
        Tool::from_parts(
            name.into(),
            schema::derive_input::<I>(),
            Some(schema::derive::<O>()),
            Arc::new(handler),
        )
    }

    /// As [`Tool::typed`], for a function that also returns content blocks
    /// (links to the resources it found, images): over MCP they follow the
    /// JSON text mirror of the structured output in `content` (revisions
    /// before 2025-06-18, which have no `resource_link`, get none).
    pub fn typed_with_content<I, O, F, Fut>(name: impl Into<String>, function: F) -> Tool
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        O: Serialize + JsonSchema + 'static,
        F: Fn(I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(O, Vec<ContentBlock>), ToolError>> + Send + 'static,
    {
        let function = Arc::new(function);
        let handler = move |_context: ToolContext, arguments: Value| {
            let function = Arc::clone(&function);
            async move {
                let input = parse_input::<I>(arguments)?;
                let (output, content) = function(input).await?;
                let mut output = structured(&output)?;
                output.content = content;
                Ok(output)
            }
        };
        Tool::from_parts(
            name.into(),
            schema::derive_input::<I>(),
            Some(schema::derive::<O>()),
            Arc::new(handler),
        )
    }

    /// A tool that acts and returns nothing: over MCP its result is an
    /// empty `content` with no `structuredContent`; over OTC its
    /// `output_schema` is `null` and a successful response has no `value`.
    pub fn action<I, F, Fut>(name: impl Into<String>, function: F) -> Tool
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), ToolError>> + Send + 'static,
    {
        Tool::action_with_context(name, move |_context: ToolContext, input: I| function(input))
    }

    /// As [`Tool::action`], with the [`ToolContext`].
    pub fn action_with_context<I, F, Fut>(name: impl Into<String>, function: F) -> Tool
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(ToolContext, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), ToolError>> + Send + 'static,
    {
        let function = Arc::new(function);
        let handler = move |context: ToolContext, arguments: Value| {
            let function = Arc::clone(&function);
            async move {
                let input = parse_input::<I>(arguments)?;
                function(context, input).await?;
                Ok(ToolOutput::default())
            }
        };
        let mut tool = Tool::from_parts(
            name.into(),
            schema::derive_input::<I>(),
            None,
            Arc::new(handler),
        );
        tool.output_shape = OutputShape::Nothing;
        tool
    }

    /// A tool whose result is text only, with no `outputSchema`.
    pub fn text<I, F, Fut>(name: impl Into<String>, function: F) -> Tool
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, ToolError>> + Send + 'static,
    {
        let mut tool = Tool::content(name, move |input: I| {
            let text = function(input);
            async move { Ok(vec![ContentBlock::text(text.await?)]) }
        });
        tool.output_shape = OutputShape::Text;
        tool
    }

    /// A tool whose result is content blocks (text, image, audio, resources), with no `outputSchema`.
    pub fn content<I, F, Fut>(name: impl Into<String>, function: F) -> Tool
    where
        I: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ContentBlock>, ToolError>> + Send + 'static,
    {
        let function = Arc::new(function);
        let handler = move |_context: ToolContext, arguments: Value| {
            let function = Arc::clone(&function);
            async move {
                let input = parse_input::<I>(arguments)?;
                Ok(ToolOutput::content(function(input).await?))
            }
        };
        Tool::from_parts(
            name.into(),
            schema::derive_input::<I>(),
            None,
            Arc::new(handler),
        )
    }

    /// A tool with hand-written schemas and a handler on JSON values. The
    /// schemas are checked when the tool is registered.
    pub fn dynamic(
        name: impl Into<String>,
        input_schema: Value,
        output_schema: Option<Value>,
        handler: impl ErasedHandler,
    ) -> Tool {
        Tool::from_parts(name.into(), input_schema, output_schema, Arc::new(handler))
    }

    /// Marks a tool that returns nothing (see [`Tool::action`]); its output
    /// schema, if it had one, is dropped. For dynamic tools, such as a
    /// bridged OTC tool whose `output_schema` is `null`.
    #[must_use]
    pub fn returns_nothing(mut self) -> Self {
        self.output_schema = None;
        self.output_shape = OutputShape::Nothing;
        self
    }

    /// Leaves the check of this tool's output against its `outputSchema` to
    /// its handler: the server no longer withholds an output that fails it.
    /// Only for a gateway whose handler has checked the output already and
    /// decides itself what an invalid one becomes (`toolshape proxy
    /// --on-invalid strip|pass`); every other tool keeps the check.
    #[must_use]
    pub fn unchecked_output(mut self) -> Self {
        self.output_checked_by_handler = true;
        self
    }

    /// Takes the name as another server listed it (a gateway relaying its
    /// tools): MCP's naming guidance (letters, digits, `_ - .`, at most 128
    /// characters; [`validate_tool_name`]) is a SHOULD, so a name outside it
    /// (`github/create_issue`, `get weather`) is registered all the same.
    /// It must still have no control character, be at most 1,024 bytes, and
    /// map to an OTC tool id no other tool has (every character outside
    /// `A-Z a-z 0-9 _` written `_`; one whose `Toolkit_Tool` would pass 64
    /// characters is served over MCP only; see [`identity`](super::identity)).
    ///
    /// [`validate_tool_name`]: toolshape_protocol::tools::validate_tool_name
    #[must_use]
    pub fn relayed_name(mut self) -> Self {
        self.relayed_name = true;
        self
    }

    fn from_parts(
        name: String,
        input_schema: Value,
        output_schema: Option<Value>,
        handler: Arc<dyn ErasedHandler>,
    ) -> Tool {
        let output_shape = if output_schema.is_some() {
            OutputShape::Structured
        } else {
            OutputShape::Content
        };
        Tool {
            name,
            title: None,
            description: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
            input_schema,
            output_schema,
            output_shape,
            toolkit: None,
            version: None,
            requirements: Requirements::default(),
            output_checked_by_handler: false,
            relayed_name: false,
            handler,
        }
    }

    /// The tool's name (its MCP name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What its successful result is made of.
    pub fn output_shape(&self) -> OutputShape {
        self.output_shape
    }

    /// Sets the toolkit it belongs to (`A-Z a-z 0-9 _`; by default
    /// [`DEFAULT_TOOLKIT`](super::identity::DEFAULT_TOOLKIT)). Over OTC the
    /// tool is `Toolkit.Tool`; see [`identity`](super::identity) for how
    /// its MCP name maps.
    #[must_use]
    pub fn toolkit(mut self, toolkit: impl Into<String>) -> Self {
        self.toolkit = Some(toolkit.into());
        self
    }

    /// Sets its version, `x.y.z` (or `x`, meaning `x.0.0`; by default
    /// [`DEFAULT_VERSION`](super::identity::DEFAULT_VERSION)), checked when
    /// it is registered. Several versions of one tool can be registered; MCP
    /// peers see the latest.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Sets what it requires from its caller (secrets, a user id,
    /// authorization); a call without them is refused before it runs.
    #[must_use]
    pub fn requirements(mut self, requirements: Requirements) -> Self {
        self.requirements = requirements;
        self
    }

    /// The input schema it will be registered with.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The output schema it will be registered with, if it has one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// Sets a human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description a model reads to decide when to call the tool.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the behaviour hints.
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Marks the tool read-only, idempotent and closed-world.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        let annotations = self
            .annotations
            .get_or_insert_with(ToolAnnotations::default);
        annotations.read_only_hint = Some(true);
        annotations.idempotent_hint = Some(true);
        annotations.open_world_hint = Some(false);
        self
    }

    /// Sets icons (sent to 2025-11-25 and later peers).
    #[must_use]
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// Sets the execution properties (sent to 2025-11-25 and later peers).
    #[must_use]
    pub fn execution(mut self, execution: ToolExecution) -> Self {
        self.execution = Some(execution);
        self
    }

    /// Sets `_meta`.
    #[must_use]
    pub fn meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Input {
        count: u64,
        offset: i32,
        ratio: f64,
    }

    #[test]
    fn integral_floats_read_as_the_integers_the_schema_admits() {
        let input: Input =
            super::parse_input(json!({"count": 3.0, "offset": -2.0, "ratio": 1.0})).unwrap();
        assert_eq!(
            input,
            Input {
                count: 3,
                offset: -2,
                ratio: 1.0
            }
        );
        // A fraction is still refused, with serde's own reason.
        let refused = super::parse_input::<Input>(json!({"count": 3.5, "offset": 0, "ratio": 1}))
            .unwrap_err();
        assert!(
            refused.to_string().contains("invalid arguments"),
            "{refused}"
        );
        // As is a number past the type's range.
        assert!(
            super::parse_input::<Input>(json!({"count": 1e20, "offset": 0, "ratio": 1})).is_err()
        );
    }
}
