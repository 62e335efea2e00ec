//! What a tool handler is: JSON arguments in, [`ToolOutput`] or
//! [`ToolError`] out, with its types erased.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use toolshape_protocol::{ContentBlock, Meta};

use super::context::ToolContext;
use super::error::ToolError;

/// A boxed, sendable future: what an erased handler returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a handler produced: structured output, content blocks, or both.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    /// The structured result, checked against the tool's `outputSchema`.
    pub structured: Option<Value>,
    /// Content blocks (text, image, audio, resource links, resources).
    pub content: Vec<ContentBlock>,
    /// Entries for the result's `_meta` (e.g. a bridge's call id and duration).
    pub meta: Option<Meta>,
}

impl ToolOutput {
    /// Structured output only; the text block is added when the result is shaped.
    pub fn structured(value: Value) -> Self {
        ToolOutput {
            structured: Some(value),
            content: Vec::new(),
            meta: None,
        }
    }

    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            structured: None,
            content: vec![ContentBlock::text(text)],
            meta: None,
        }
    }

    /// Content blocks only.
    pub fn content(content: Vec<ContentBlock>) -> Self {
        ToolOutput {
            structured: None,
            content,
            meta: None,
        }
    }

    /// Adds entries to the result's `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta.get_or_insert_with(Meta::new).extend(meta);
        self
    }
}

/// A tool handler with its types erased: JSON arguments in, output or error out.
pub trait ErasedHandler: Send + Sync + 'static {
    /// Runs the tool on arguments already validated against its input schema.
    fn call(
        &self,
        context: ToolContext,
        arguments: Value,
    ) -> BoxFuture<Result<ToolOutput, ToolError>>;
}

impl<F, Fut> ErasedHandler for F
where
    F: Fn(ToolContext, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    fn call(
        &self,
        context: ToolContext,
        arguments: Value,
    ) -> BoxFuture<Result<ToolOutput, ToolError>> {
        Box::pin(self(context, arguments))
    }
}
