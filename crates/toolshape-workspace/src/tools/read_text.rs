//! `read_text`: the contents of a UTF-8 text file, as plain text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::WorkspaceError;
use crate::limits::{READ_DEFAULT_BYTES, READ_MAX_BYTES, SNIFF_BYTES, reserve};
use crate::text;
use crate::{Workspace, fsutil};

/// Input of `read_text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadTextInput {
    /// Text file to read, relative to the workspace root.
    pub path: String,
    /// Most bytes to return (default 65536; values above 1048576 are lowered
    /// to it). The text is cut on a character boundary at or below this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_bytes: Option<u64>,
}

impl Workspace {
    /// Returns the file's text, cut to `max_bytes` on a character boundary
    /// with a closing `[truncated: …]` line when the file is longer.
    ///
    /// Refuses files with a NUL byte in their first 8 KiB and text that is
    /// not valid UTF-8 (in the part returned).
    pub fn read_text(&self, input: ReadTextInput) -> Result<String, WorkspaceError> {
        let user = input.path.as_str();
        let max = input
            .max_bytes
            .unwrap_or(READ_DEFAULT_BYTES)
            .clamp(1, READ_MAX_BYTES);
        let _memory = self.budget.reserve(
            "read_text",
            3 * max.max(SNIFF_BYTES) + reserve::READ_TEXT_BASE,
        )?;
        let target = self.root.target(user)?;
        let (file, meta) = self.root.open_file(&target, user, None)?;
        // Read at least the sniffed prefix so that binary detection does not
        // depend on `max_bytes`.
        let (mut bytes, more) = fsutil::read_prefix(file, max.max(SNIFF_BYTES), user)?;
        if text::looks_binary(&bytes) {
            return Err(WorkspaceError::binary(user, "contains a NUL byte"));
        }
        let truncated = more || bytes.len() as u64 > max;
        bytes.truncate(usize::try_from(max).unwrap_or(usize::MAX));
        let text = match std::str::from_utf8(&bytes) {
            Ok(text) => text,
            // A character cut by our own limit: drop its first bytes.
            Err(err) if truncated && err.error_len().is_none() => {
                std::str::from_utf8(&bytes[..err.valid_up_to()]).unwrap_or_default()
            }
            Err(err) => {
                return Err(WorkspaceError::binary(
                    user,
                    format!("not valid UTF-8 at byte offset {}", err.valid_up_to()),
                ));
            }
        };
        if !truncated {
            return Ok(text.to_owned());
        }
        let advice = if max < READ_MAX_BYTES {
            "call read_text again with a larger maxBytes (at most 1048576) to see more"
        } else {
            "this tool returns at most the first 1048576 bytes of a file"
        };
        let newline = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        Ok(format!(
            "{text}{newline}[truncated: showing the first {} of {} bytes; {advice}]",
            text.len(),
            meta.len().max(text.len() as u64 + 1),
        ))
    }
}
