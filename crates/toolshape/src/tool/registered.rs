//! A tool as registered: schemas compiled and wire forms serialized, once.
//! Other protocol bindings (OTC) read it through its accessors and run it
//! with [`RegisteredTool::call`].

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;
use toolshape_protocol::http::{ParamHeaderError, ParamHeaders};
use toolshape_protocol::meta::keys;
use toolshape_protocol::{Meta, ProtocolVersion, ToolDefinition};
use toolshape_schema::{CompiledSchema, SchemaEngine, SchemaError, mcp};

use super::call::CallOutcome;
use super::definition::{OutputShape, Tool};
use super::handler::ErasedHandler;
use super::identity::{
    self, DEFAULT_TOOLKIT, DEFAULT_VERSION, InvalidVersion, QualifiedName, QualifiedNameError,
    ToolVersion,
};
use super::options::CallOptions;
use super::requirements::Requirements;

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// The name breaks MCP's naming rules.
    #[error("invalid tool name {name:?}: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A tool with this name (and version) is already registered.
    #[error("a tool named {0:?} is already registered")]
    Duplicate(String),
    /// The version is not `x.y.z`.
    #[error("tool {tool:?}: {source}")]
    InvalidVersion {
        /// The tool.
        tool: String,
        /// Why.
        #[source]
        source: InvalidVersion,
    },
    /// The name (with its toolkit) cannot map to a qualified name
    /// (`Toolkit.Tool`, OTC's tool id); see [`identity`](super::identity).
    #[error("tool {tool:?} cannot map to an OTC tool id (Toolkit.Tool): {source}")]
    Unqualifiable {
        /// The tool.
        tool: String,
        /// Why.
        #[source]
        source: QualifiedNameError,
    },
    /// Another tool already maps to the same qualified name.
    #[error(
        "tool {tool:?} maps to the OTC tool id {qualified:?}, which tool {other:?} already has"
    )]
    QualifiedNameTaken {
        /// The tool.
        tool: String,
        /// The qualified name (`Toolkit.Tool`).
        qualified: String,
        /// The tool that has it.
        other: String,
    },
    /// Versions of one tool must share their toolkit.
    #[error(
        "tool {tool:?} is registered in toolkit {existing:?}; another version cannot be in {toolkit:?}"
    )]
    ToolkitMismatch {
        /// The tool.
        tool: String,
        /// The toolkit of the versions registered.
        existing: String,
        /// The toolkit of this version.
        toolkit: String,
    },
    /// The input schema breaks MCP's rule (root `type: "object"`).
    #[error("tool {tool:?}: {source}")]
    InputSchemaRule {
        /// The tool.
        tool: String,
        /// The rule broken.
        #[source]
        source: mcp::McpSchemaError,
    },
    /// A schema does not compile.
    #[error("tool {tool:?}: {which} does not compile: {source}")]
    Schema {
        /// The tool.
        tool: String,
        /// `inputSchema`, `outputSchema`, or the wrapped `outputSchema`
        /// that 2025-06-18 and 2025-11-25 peers get for a non-object output.
        which: &'static str,
        /// Why.
        #[source]
        source: SchemaError,
    },
    /// An `x-mcp-header` annotation of the input schema is invalid (SEP-2243).
    #[error("tool {tool:?}: {source}")]
    ParamHeader {
        /// The tool.
        tool: String,
        /// The rule broken.
        #[source]
        source: ParamHeaderError,
    },
    /// A resource could not be registered.
    #[error(transparent)]
    Resource(#[from] crate::resource::ResourceError),
    /// A prompt of this name is already registered.
    #[error("a prompt named {0:?} is already registered")]
    DuplicatePrompt(String),
    /// The tool definition could not be serialized.
    #[error("tool {tool:?} could not be serialized: {source}")]
    Serialize {
        /// The tool.
        tool: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

/// A registered tool: its schemas compiled, its identity settled. Read by
/// protocol bindings; run with [`RegisteredTool::call`].
pub struct RegisteredTool {
    pub(crate) name: Arc<str>,
    pub(crate) version: ToolVersion,
    /// Its toolkit and tool part, whether or not they make an OTC name.
    pub(crate) qualified: QualifiedName,
    /// Whether `qualified` makes an OTC name (at most 64 characters).
    pub(crate) served_over_otc: bool,
    pub(crate) output_shape: OutputShape,
    pub(crate) requirements: Requirements,
    pub(crate) handler: Arc<dyn ErasedHandler>,
    pub(crate) input: Arc<CompiledSchema>,
    pub(crate) output: Option<Arc<CompiledSchema>>,
    /// Whether the handler checks its own output ([`Tool::unchecked_output`]).
    pub(crate) output_checked_by_handler: bool,
    /// Whether structured output goes out as is to revisions that need an object.
    pub(crate) output_object_rooted: bool,
    /// The arguments mirrored in `Mcp-Param-*` headers (2026-07-28 HTTP;
    /// worked out, and so checked, whatever the transport).
    #[cfg_attr(not(feature = "server-http"), allow(dead_code))]
    pub(crate) param_headers: ParamHeaders,
    /// The definition as 2026-07-28 peers see it.
    pub(crate) definition: ToolDefinition,
    /// Serialized definitions, one per revision in [`ProtocolVersion::ALL`] order.
    wire: [Box<RawValue>; ProtocolVersion::ALL.len()],
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.name)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl RegisteredTool {
    /// Its MCP name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its version.
    pub fn version(&self) -> ToolVersion {
        self.version
    }

    /// Its qualified name (toolkit and tool part); `None` for a tool served
    /// over MCP only, whose OTC `name` (`Toolkit_Tool`) would pass 64
    /// characters.
    pub fn qualified_name(&self) -> Option<&QualifiedName> {
        self.served_over_otc.then_some(&self.qualified)
    }

    /// Its toolkit.
    pub fn toolkit(&self) -> &str {
        &self.qualified.toolkit
    }

    /// Its OTC id, `Toolkit.Tool@x.y.z`; `None` for a tool served over MCP
    /// only (see [`RegisteredTool::qualified_name`]).
    pub fn otc_id(&self) -> Option<String> {
        let qualified = self.qualified_name()?;
        Some(format!("{}@{}", qualified.dotted(), self.version))
    }

    /// Its definition as 2026-07-28 MCP peers see it (title, description,
    /// annotations, schemas).
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    /// Its compiled input schema.
    pub fn input(&self) -> &CompiledSchema {
        &self.input
    }

    /// Its compiled output schema, when it declares one.
    pub fn output(&self) -> Option<&CompiledSchema> {
        self.output.as_deref()
    }

    /// What its successful result is made of.
    pub fn output_shape(&self) -> OutputShape {
        self.output_shape
    }

    /// What it requires from its caller.
    pub fn requirements(&self) -> &Requirements {
        &self.requirements
    }

    /// Runs one call: validates `arguments` (absent means `{}`) against the
    /// input schema, checks the caller's credentials against the
    /// requirements, runs the handler (time limit, cancellation, panics
    /// contained) and validates its output, as every binding does.
    pub async fn call(
        &self,
        arguments: Option<serde_json::Map<String, Value>>,
        options: CallOptions,
    ) -> CallOutcome {
        self.run(arguments, options, None).await
    }

    pub(crate) fn new(
        tool: Tool,
        engine: &SchemaEngine,
    ) -> Result<RegisteredTool, RegistrationError> {
        RegisteredTool::reusing(tool, engine, &[])
    }

    /// As [`RegisteredTool::new`], taking a schema's compiled form from
    /// `earlier` (tools registered before) when one of them has the same
    /// schema: registering a listing again compiles only what changed,
    /// whatever the engine's cache still holds.
    pub(crate) fn reusing(
        tool: Tool,
        engine: &SchemaEngine,
        earlier: &[Arc<RegisteredTool>],
    ) -> Result<RegisteredTool, RegistrationError> {
        let name = tool.name.clone();
        let named = if tool.relayed_name {
            relayed_name_problem(&name).map_or(Ok(()), Err)
        } else {
            toolshape_protocol::tools::validate_tool_name(&name).map_err(|e| e.to_string())
        };
        named.map_err(|reason| RegistrationError::InvalidName {
            name: name.clone(),
            reason,
        })?;
        let version = match &tool.version {
            Some(text) => text
                .parse()
                .map_err(|source| RegistrationError::InvalidVersion {
                    tool: name.clone(),
                    source,
                })?,
            None => DEFAULT_VERSION,
        };
        let toolkit = tool.toolkit.as_deref().unwrap_or(DEFAULT_TOOLKIT);
        let qualified = identity::qualify_unbounded(toolkit, &name).map_err(|source| {
            RegistrationError::Unqualifiable {
                tool: name.clone(),
                source,
            }
        })?;
        let served_over_otc = identity::check_length(&qualified).is_ok();
        mcp::check_input_schema(&tool.input_schema).map_err(|source| {
            RegistrationError::InputSchemaRule {
                tool: name.clone(),
                source,
            }
        })?;
        let compile = |schema: &Value, which| {
            engine
                .compile(schema)
                .map_err(|source| RegistrationError::Schema {
                    tool: name.clone(),
                    which,
                    source,
                })
        };
        let param_headers =
            ParamHeaders::from_input_schema(&tool.input_schema).map_err(|source| {
                RegistrationError::ParamHeader {
                    tool: name.clone(),
                    source,
                }
            })?;
        let input = match earlier
            .iter()
            .find(|known| known.definition.input_schema == tool.input_schema)
        {
            Some(known) => Arc::clone(&known.input),
            None => compile(&tool.input_schema, "inputSchema")?,
        };
        // An earlier tool with the same output schema had its wrapped form
        // checked too.
        let known_output = earlier.iter().find_map(|known| {
            let output = known.output.as_ref()?;
            (known.definition.output_schema == tool.output_schema).then_some(output)
        });
        let output = match (&tool.output_schema, known_output) {
            (Some(_), Some(known)) => Some(Arc::clone(known)),
            (schema, _) => schema
                .as_ref()
                .map(|s| compile(s, "outputSchema"))
                .transpose()?,
        };
        let output_object_rooted = tool
            .output_schema
            .as_ref()
            .is_none_or(mcp::is_object_rooted);
        // What peers that need an object root get instead: checked against
        // the same bounds, so no peer is sent a schema this engine refuses.
        let wrapped_output = match &tool.output_schema {
            Some(schema) if !output_object_rooted => {
                let wrapped = mcp::wrap_output_schema(schema);
                if known_output.is_none() {
                    compile(&wrapped, "the wrapped outputSchema for 2025 revisions")?;
                }
                Some(wrapped)
            }
            _ => None,
        };

        let mut definition = ToolDefinition::new(name.clone(), tool.input_schema);
        definition.title = tool.title;
        definition.description = tool.description;
        definition.output_schema = tool.output_schema;
        definition.annotations = tool.annotations;
        definition.icons = tool.icons;
        definition.execution = tool.execution;
        definition.meta = tool.meta;
        let wire = ProtocolVersion::ALL
            .iter()
            .map(|version| {
                let shaped = shape_definition(&definition, *version, wrapped_output.as_ref());
                serde_json::value::to_raw_value(&shaped).map_err(|source| {
                    RegistrationError::Serialize {
                        tool: name.clone(),
                        source,
                    }
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let wire = wire.try_into().map_err(|_| RegistrationError::Serialize {
            tool: name.clone(),
            source: serde::ser::Error::custom("one definition per revision"),
        })?;
        Ok(RegisteredTool {
            name: name.into(),
            version,
            qualified,
            served_over_otc,
            output_shape: tool.output_shape,
            requirements: tool.requirements,
            handler: tool.handler,
            input,
            output,
            output_checked_by_handler: tool.output_checked_by_handler,
            output_object_rooted,
            param_headers,
            definition,
            wire,
        })
    }

    /// The serialized definition for a peer on `version`.
    pub(crate) fn wire(&self, version: ProtocolVersion) -> &RawValue {
        let index = ProtocolVersion::ALL.iter().position(|v| *v == version);
        let index = index.unwrap_or(ProtocolVersion::ALL.len() - 1);
        &self.wire[index]
    }
}

/// The definition as a peer on `version` may see it: nothing its revision does
/// not define, and `wrapped_output` (the wrapped form of a non-object
/// `outputSchema`) where it requires an object root.
fn shape_definition(
    definition: &ToolDefinition,
    version: ProtocolVersion,
    wrapped_output: Option<&Value>,
) -> ToolDefinition {
    let mut shaped = definition.clone();
    if !version.supports_structured_output() {
        shaped.output_schema = None;
        shaped.title = None;
    } else if !version.allows_any_structured_content()
        && let Some(wrapped) = wrapped_output
    {
        shaped.output_schema = Some(wrapped.clone());
        let meta = shaped.meta.get_or_insert_with(Meta::new);
        meta.insert(
            keys::WRAPPED_OUTPUT.into(),
            Value::String(mcp::WRAPPED_RESULT_KEY.into()),
        );
    }
    if version.wants_object_property_schemas() {
        if let Cow::Owned(input) = mcp::with_object_property_schemas(&shaped.input_schema) {
            shaped.input_schema = input;
        }
        if let Some(Cow::Owned(output)) = shaped
            .output_schema
            .as_ref()
            .map(mcp::with_object_property_schemas)
        {
            shaped.output_schema = Some(output);
        }
    }
    if !version.has_tool_annotations() {
        shaped.annotations = None;
    }
    if !version.has_icons() {
        shaped.icons = None;
    }
    if !version.has_tool_execution_field() {
        shaped.execution = None;
    }
    shaped
}

/// Longest relayed name, in bytes: eight times MCP's guidance (128
/// characters), and still a name every listing, log line and `Mcp-Name`
/// header can carry.
const MAX_RELAYED_NAME_BYTES: usize = 1024;

/// What keeps a relayed name (see [`Tool::relayed_name`]) from being
/// served: what would break a peer's terminal or log line, and a length
/// past [`MAX_RELAYED_NAME_BYTES`] (an empty name is refused when it is
/// qualified).
fn relayed_name_problem(name: &str) -> Option<String> {
    if name.len() > MAX_RELAYED_NAME_BYTES {
        return Some(format!(
            "tool name is {} bytes long; a relayed name may have {MAX_RELAYED_NAME_BYTES}",
            name.len()
        ));
    }
    name.chars()
        .find(|c| c.is_control())
        .map(|c| format!("tool name contains the control character {c:?}"))
}
