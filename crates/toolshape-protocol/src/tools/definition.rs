//! A tool's definition (the schema's `Tool`) and its parts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::meta::Meta;

/// A tool the client can call, as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolDefinition {
    /// Programmatic name, unique within a server (see [`validate_tool_name`]).
    pub name: String,
    /// Display name (2025-06-18 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does; a hint to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; its root has `"type": "object"`.
    /// Without `$schema` the dialect is 2020-12 (2025-11-25 on).
    pub input_schema: Value,
    /// JSON Schema of `structuredContent` (2025-06-18 on; any schema from
    /// 2026-07-28 on, an object schema before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints (2025-03-26 on). Untrusted unless the server is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons for user interfaces (2025-11-25 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Execution properties (2025-11-25 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolDefinition {
    /// A tool with just a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: Value) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
        }
    }

    /// The name to show a user: `title`, else `annotations.title`, else
    /// `name` (the precedence the specification gives).
    pub fn display_name(&self) -> &str {
        self.title
            .as_deref()
            .or_else(|| {
                self.annotations
                    .as_ref()
                    .and_then(|annotations| annotations.title.as_deref())
            })
            .unwrap_or(&self.name)
    }
}

/// Hints about a tool's behaviour. All are hints, not guarantees.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default `false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (default `true`; meaningful only when not
    /// read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect
    /// (default `false`; meaningful only when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities (default
    /// `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// `readOnlyHint`, defaulting to `false`.
    pub fn is_read_only(&self) -> bool {
        self.read_only_hint.unwrap_or(false)
    }

    /// `destructiveHint`, defaulting to `true`; always `false` for a
    /// read-only tool.
    pub fn is_destructive(&self) -> bool {
        !self.is_read_only() && self.destructive_hint.unwrap_or(true)
    }

    /// `idempotentHint`, defaulting to `false`; always `true` for a
    /// read-only tool (it has no effect to repeat).
    pub fn is_idempotent(&self) -> bool {
        self.is_read_only() || self.idempotent_hint.unwrap_or(false)
    }

    /// `openWorldHint`, defaulting to `true`.
    pub fn is_open_world(&self) -> bool {
        self.open_world_hint.unwrap_or(true)
    }
}

/// An icon for a tool, resource or implementation (2025-11-25 on).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Icon {
    /// An `https:` or `data:` URI. Treat as untrusted.
    pub src: String,
    /// MIME type override, e.g. `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `48x48`, or `any` for scalable formats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The background the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon at `src` (an `https:` or `data:` URI).
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }
}

/// The background an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// A light background.
    Light,
    /// A dark background.
    Dark,
}

/// Execution properties of a tool (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolExecution {
    /// Whether the tool supports task-augmented calls (absent means
    /// [`TaskSupport::Forbidden`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

impl ToolExecution {
    /// Execution properties with this task support.
    pub fn with_task_support(task_support: TaskSupport) -> Self {
        Self {
            task_support: Some(task_support),
        }
    }
}

/// Whether a tool supports task-augmented execution (2025-11-25).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Tasks are not supported (the default).
    Forbidden,
    /// Tasks may be used.
    Optional,
    /// Tasks must be used.
    Required,
}

/// Why a tool name does not follow the naming guidance (2025-11-25 on:
/// 1 to 128 characters from `A-Z a-z 0-9 _ - .`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolNameError {
    /// The name is empty.
    #[error("tool name is empty")]
    Empty,
    /// The name is longer than 128 characters.
    #[error("tool name has {0} characters; at most 128 are recommended")]
    TooLong(usize),
    /// The name contains a character outside `A-Z a-z 0-9 _ - .`.
    #[error(
        "tool name contains {0:?}; only ASCII letters, digits, '_', '-' and '.' are recommended"
    )]
    InvalidCharacter(char),
}

/// Checks `name` against the tool naming guidance. The guidance is a
/// SHOULD: servers may use other names, so treat failures as warnings.
pub fn validate_tool_name(name: &str) -> Result<(), ToolNameError> {
    if name.is_empty() {
        return Err(ToolNameError::Empty);
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(ToolNameError::InvalidCharacter(bad));
    }
    // Only ASCII remains, so bytes are characters.
    if name.len() > 128 {
        return Err(ToolNameError::TooLong(name.len()));
    }
    Ok(())
}
