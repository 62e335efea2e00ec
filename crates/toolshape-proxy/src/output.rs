//! A checked upstream result as the tool's output of the proxy: the
//! upstream's own shaping (wrapping marker, the text block repeating the
//! value, any other JSON text standing for a value) taken off, for this
//! server to shape and mirror for each client's revision; or relayed as
//! written where nothing needs reshaping.

use serde_json::Value;
use toolshape::client::ToolResult;
use toolshape::protocol::ContentBlock;
use toolshape::protocol::meta::keys;
use toolshape::schema::mcp::WRAPPED_RESULT_KEY;
use toolshape::tool::ToolOutput;

use crate::same_json;

/// A checked result as the tool's output. What the upstream shaped for its
/// own revision is dropped (the wrapping marker, the text block repeating
/// the structured JSON): this server shapes and mirrors for each client.
/// A result that needs no reshaping goes as the upstream wrote it to
/// clients on the upstream's revision.
pub(crate) fn output(mut result: ToolResult) -> ToolOutput {
    let received = result.take_received();
    let meta = result.meta.take().and_then(|mut meta| {
        meta.remove(keys::WRAPPED_OUTPUT);
        (!meta.is_empty()).then_some(meta)
    });
    let mut content = std::mem::take(&mut result.content);
    // A result relayed as received comes without its value (read again
    // only for a client on another revision); a stripped one keeps its text.
    let mut mirrored = false;
    if result.structured.is_some() || received.is_some() {
        let sent = result.structured_json();
        let before = content.len();
        content.retain(|block| !stands_for_value(block, result.structured.as_ref(), sent));
        mirrored = content.len() < before;
    }
    let mut output = ToolOutput::content(content);
    if mirrored {
        // Beside text of the tool's own, this server writes a mirror only
        // when asked: a client without `structuredContent` needs it.
        output = output.with_mirror();
    }
    output.structured = result.structured;
    output.meta = meta;
    match received {
        Some(received) => output.relaying(received),
        None => output,
    }
}

/// Whether `block` is a text block that stands for the value, replaced by
/// this server's own mirror: one repeating `structured`, or any other JSON
/// object or array (a stale or broken mirror, which a client reading only
/// text would take for a value no schema checked).
fn stands_for_value(block: &ContentBlock, structured: Option<&Value>, sent: Option<&str>) -> bool {
    let Some(text) = block.as_text() else {
        return false;
    };
    mirrors(text, structured, sent) || is_json_container(text)
}

/// Whether `text` is a JSON object or array.
fn is_json_container(text: &str) -> bool {
    text.trim_start().starts_with(['{', '['])
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// Whether `text` repeats `structured` as JSON (bare, or wrapped as
/// `{"result": value}`), told without parsing it into values. The common
/// case, the very text the upstream sent as `structuredContent`, is told by
/// comparing the two.
fn mirrors(text: &str, structured: Option<&Value>, sent: Option<&str>) -> bool {
    sent == Some(text)
        || structured.is_some_and(|structured| {
            same_json::is_json_of(text, structured)
                || same_json::is_wrapped_json_of(text, structured, WRAPPED_RESULT_KEY)
        })
}
/// A result whose value failed its schema, for `--on-invalid strip`:
/// without its value, and without the text blocks that stand for it (its
/// mirror, any other JSON object or array), which a client reading only
/// text would take for a checked value; prose and other blocks stay.
pub(crate) fn stripped(mut rejected: ToolResult) -> ToolResult {
    let value = rejected.structured.take();
    let sent = rejected.structured_json().map(str::to_owned);
    rejected
        .content
        .retain(|block| !stands_for_value(block, value.as_ref(), sent.as_deref()));
    rejected
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_text_the_upstream_sent_as_structured_content_is_its_mirror() {
        let structured = json!({"a": 2});
        // Values alone cannot match a text with a repeated key to the value
        // it was read as; the very text sent as structuredContent is its
        // mirror all the same, so the proxy writes its own in its place.
        let repeated = r#"{"a":1,"a":2}"#;
        assert!(!mirrors(repeated, Some(&structured), None));
        assert!(mirrors(
            repeated,
            Some(&structured),
            Some(r#"{"a":1,"a":2}"#)
        ));
        assert!(!mirrors(repeated, Some(&structured), Some(r#"{"a":2}"#)));
        // Other texts are still told by value.
        let spaced = r#"{ "a" : 2 }"#;
        assert!(mirrors(spaced, Some(&structured), Some(r#"{"a":2}"#)));
        assert!(!mirrors("two", Some(&structured), Some(r#"{"a":2}"#)));
    }

    #[test]
    fn other_json_objects_and_arrays_stand_for_the_value_and_prose_does_not() {
        let structured = json!({"a": 2});
        let sent = Some(r#"{"a":2}"#);
        let replaced =
            |text: &str| stands_for_value(&ContentBlock::text(text), Some(&structured), sent);
        assert!(replaced(r#"{"a":2}"#));
        assert!(replaced(r#"{"a": 1}"#));
        assert!(replaced(" [1, 2]"));
        assert!(!replaced("two"));
        assert!(!replaced("42"));
        assert!(!replaced("{not json}"));
        assert!(!replaced(r#"{"a": 1} and more"#));
    }
}
