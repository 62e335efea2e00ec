//! What a tool handler is: JSON arguments in, [`ToolOutput`] or
//! [`ToolError`] out, with its types erased.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use toolshape_protocol::{ContentBlock, Meta, ProtocolVersion};

use super::context::ToolContext;
use super::error::ToolError;
use crate::client::ReceivedResult;

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
    /// Another server's result this output was read from, written as it
    /// came to a peer on its revision.
    received: Option<ReceivedResult>,
    /// Whether the text block repeating the structured JSON goes first
    /// even beside text of the tool's own.
    pub(crate) mirrored: bool,
}

impl ToolOutput {
    /// Structured output only; the text block is added when the result is shaped.
    pub fn structured(value: Value) -> Self {
        ToolOutput {
            structured: Some(value),
            content: Vec::new(),
            meta: None,
            received: None,
            mirrored: false,
        }
    }

    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            structured: None,
            content: vec![ContentBlock::text(text)],
            meta: None,
            received: None,
            mirrored: false,
        }
    }

    /// Content blocks only.
    pub fn content(content: Vec<ContentBlock>) -> Self {
        ToolOutput {
            structured: None,
            content,
            meta: None,
            received: None,
            mirrored: false,
        }
    }

    /// Relays another server's result: to a peer on the revision `received`
    /// was written for, the result goes exactly as that server wrote it; to
    /// any other peer this output is shaped as usual. For a gateway that
    /// made this output from the same [`ToolResult`](crate::client::ToolResult)
    /// it took `received` from: the two must say the same thing, so an
    /// output changed after this call should not keep it.
    #[must_use]
    pub fn relaying(mut self, received: ReceivedResult) -> Self {
        self.received = Some(received);
        self
    }

    /// The relayed result, when it was written for `version` and fits it
    /// as is ([`ReceivedResult::fits`], for a tool whose output schema is
    /// `object_rooted`). Otherwise the output is shaped: a relayed result's
    /// value is read again from its text when the relaying caller kept none
    /// ([`CallOptions::relay`](crate::CallOptions::relay)).
    pub(crate) fn take_received_for(
        &mut self,
        version: ProtocolVersion,
        object_rooted: bool,
    ) -> Option<ReceivedResult> {
        let received = self.received.take()?;
        if received.fits(version, object_rooted) {
            return Some(received);
        }
        if self.structured.is_none() {
            self.structured = received.structured_value();
        }
        None
    }

    /// The structured result: [`ToolOutput::structured`], or, when a
    /// relaying caller kept no value, the relayed result's read again.
    pub fn structured_value(&self) -> Option<Cow<'_, Value>> {
        match (&self.structured, &self.received) {
            (Some(value), _) => Some(Cow::Borrowed(value)),
            (None, Some(received)) => received.structured_value().map(Cow::Owned),
            (None, None) => None,
        }
    }

    /// As [`ToolOutput::structured_value`], taking the output.
    pub fn into_structured_value(self) -> Option<Value> {
        match (self.structured, self.received) {
            (Some(value), _) => Some(value),
            (None, Some(received)) => received.structured_value(),
            (None, None) => None,
        }
    }

    /// Asks for the text block repeating the structured JSON (shaped for
    /// each peer's revision) even though `content` holds text of the tool's
    /// own; it goes first. Without this, a tool that writes its own text
    /// gets no such block: its text is what peers without structured output
    /// read. For a gateway whose upstream wrote both.
    #[must_use]
    pub fn with_mirror(mut self) -> Self {
        self.mirrored = true;
        self
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
