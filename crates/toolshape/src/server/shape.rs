//! Shaping a call's outcome for the revision the peer speaks.
//!
//! - 2026-07-28: `structuredContent` goes as is, whatever JSON it is (SEP-2106).
//! - 2025-06-18 and 2025-11-25: an object goes as is; anything else goes as
//!   `{"result": value}`, marked in `_meta` so our client can unwrap it.
//! - 2025-03-26 and older: no `structuredContent`; the JSON goes as text.
//!
//! A text block with the serialized JSON accompanies every `structuredContent`
//! (optional for 2026-07-28 peers).

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use toolshape_protocol::content::TextContent;
use toolshape_protocol::meta::keys;
use toolshape_protocol::prompts::PromptMessage;
use toolshape_protocol::{
    CallToolResult, ContentBlock, Meta, ProtocolVersion, RequestId, ResultType,
};
use toolshape_schema::mcp::WRAPPED_RESULT_KEY;

use super::outbox::encode_result_sized;
use crate::client::ReceivedResult;
use crate::tool::{RegisteredTool, ToolFailure, ToolOutput};

/// A `tools/call` result as it goes on the wire. The structured content is
/// serialized once: the same text fills `structuredContent` and the text block.
pub(crate) type WireResult = CallToolResult<Box<RawValue>>;

/// A successful call's result: built from its output, or, relayed from
/// another server on the same revision, as that server wrote it (JSON text
/// a parser read as one value: see [`ReceivedResult`]).
#[derive(Debug)]
pub(crate) enum Shaped {
    Built(WireResult),
    AsReceived(ReceivedResult),
}

impl Shaped {
    /// The success response with this result, serialized.
    pub(crate) fn encode(&self, id: &RequestId) -> Vec<u8> {
        match self {
            Self::Built(result) => {
                // The structured JSON goes twice when mirrored.
                let structured = result.structured_content.as_ref();
                let size = 256 + 2 * structured.map_or(0, |json| json.get().len());
                encode_result_sized(id, result, size)
            }
            Self::AsReceived(received) => {
                let json = received.json();
                let mut out = Vec::with_capacity(64 + json.len());
                // Writing text to a buffer cannot fail but for the id, which
                // always serializes.
                let _ = toolshape_protocol::write_result_json(&mut out, id, json);
                out
            }
        }
    }
}

/// The wire result of a successful call.
pub(crate) fn success(
    mut output: ToolOutput,
    tool: &RegisteredTool,
    version: ProtocolVersion,
    text_block_for_modern: bool,
) -> Shaped {
    if let Some(received) = output.take_received_for(version, tool.output_object_rooted) {
        return Shaped::AsReceived(received);
    }
    Shaped::Built(build(output, tool, version, text_block_for_modern))
}

fn build(
    output: ToolOutput,
    tool: &RegisteredTool,
    version: ProtocolVersion,
    text_block_for_modern: bool,
) -> WireResult {
    let ToolOutput {
        structured,
        mut content,
        meta,
        mirrored,
        ..
    } = output;
    let mut result = WireResult::from_parts(Vec::new(), None);
    result.meta = meta;
    let has_value = structured.is_some();
    if let Some(value) = structured {
        let native = !version.supports_structured_output()
            || version.allows_any_structured_content()
            || (value.is_object() && tool.output_object_rooted);
        let (value, wrapped) = if native {
            (value, false)
        } else {
            let mut object = Map::new();
            object.insert(WRAPPED_RESULT_KEY.into(), value);
            (Value::Object(object), true)
        };
        // Serializing a `Value` cannot fail.
        let Ok(json) = serde_json::value::to_raw_value(&value) else {
            return failure(
                &ToolFailure::InvalidOutput(
                    toolshape_schema::ValidationErrorKind::Mismatch {
                        violations: Vec::new(),
                        truncated: false,
                    }
                    .into(),
                ),
                &tool.name,
                version,
            );
        };
        let wants_text = !version.allows_any_structured_content() || text_block_for_modern;
        // The text mirror comes first, unless the tool wrote its own text
        // (and did not ask for the mirror beside it), but always for a peer
        // that gets no structuredContent: the text is all it gets of the value.
        let own_text = content.iter().any(|b| matches!(b, ContentBlock::Text(_)));
        let only_text = !version.supports_structured_output();
        if wants_text && (mirrored || !own_text || only_text) {
            content.insert(0, ContentBlock::text(json.get()));
        }
        if version.supports_structured_output() {
            result.structured_content = Some(json);
        }
        if wrapped {
            result.meta.get_or_insert_with(Meta::new).insert(
                keys::WRAPPED_OUTPUT.into(),
                Value::String(WRAPPED_RESULT_KEY.into()),
            );
        }
    }
    // A block the peer's revision has not (audio before 2025-03-26, a
    // resource link before 2025-06-18, a kind no revision has) is left out beside a value, rather
    // than added as text (older peers read the text as the value); without
    // one, a text block says what was there, as in a prompt.
    if has_value {
        content.retain(|block| block.is_known_to(version));
    } else {
        content
            .iter_mut()
            .for_each(|block| stand_in_if_unknown(block, version));
    }
    result.content = content;
    finish(result, version)
}

/// A prompt's messages as a peer on `version` can take them: a block its
/// revision has not (audio before 2025-03-26, a resource link before
/// 2025-06-18, a kind no revision has) becomes a text block saying what was there, so that the
/// conversation keeps its turns.
pub(crate) fn prompt_messages(messages: &mut [PromptMessage], version: ProtocolVersion) {
    for message in messages {
        stand_in_if_unknown(&mut message.content, version);
    }
}

/// `block`, or when a peer on `version` has not its kind, a text block
/// saying what was there.
fn stand_in_if_unknown(block: &mut ContentBlock, version: ProtocolVersion) {
    if !block.is_known_to(version) {
        *block = stand_in(block);
    }
}

/// The text that stands in for a block a revision has not.
fn stand_in(block: &ContentBlock) -> ContentBlock {
    let (text, annotations) = match block {
        ContentBlock::ResourceLink(link) => (
            format!(
                "[resource] {}: {}",
                link.title.as_deref().unwrap_or(&link.name),
                link.uri
            ),
            link.annotations.clone(),
        ),
        ContentBlock::Audio(audio) => (
            format!(
                "[{} audio left out: this protocol revision has no audio]",
                audio.mime_type
            ),
            audio.annotations.clone(),
        ),
        other => (
            format!(
                "[{} content left out: this protocol revision has none]",
                kind_name(other.type_name())
            ),
            None,
        ),
    };
    let mut text = TextContent::new(text);
    text.annotations = annotations.map(|mut annotations| {
        // The stand-ins with annotations (audio, resource links) go only to
        // peers before 2025-06-18, whose annotations have no `lastModified`.
        annotations.last_modified = None;
        annotations
    });
    ContentBlock::Text(text)
}

/// A block's `type` as a stand-in names it: a peer's text put before a
/// model, so a short name of plain characters, or `unnamed`.
fn kind_name(kind: &str) -> &str {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | '.');
    if !kind.is_empty() && kind.len() <= 64 && kind.chars().all(plain) {
        kind
    } else {
        "unnamed"
    }
}

/// The wire result of a failed call: `isError: true` and a message.
pub(crate) fn failure(failure: &ToolFailure, tool: &str, version: ProtocolVersion) -> WireResult {
    let content = vec![ContentBlock::text(failure.message(tool))];
    let mut result = WireResult::from_parts(content, None).into_error();
    result.meta = failure.meta();
    finish(result, version)
}

fn finish(mut result: WireResult, version: ProtocolVersion) -> WireResult {
    if version.has_result_type() {
        result.result_type = Some(ResultType::Complete);
    }
    result
}
