//! `count_lines`: the line count of a text file, as a bare JSON integer.

use std::io::Read;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Workspace;
use crate::error::WorkspaceError;
use crate::limits::{TEXT_SCAN_MAX_BYTES, reserve};
use crate::text;

/// Input of `count_lines`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountLinesInput {
    /// Text file whose lines to count, relative to the workspace root.
    pub path: String,
}

impl Workspace {
    /// Counts newline characters in the file, plus one when the last line
    /// has none; refuses binary files and files over
    /// [`TEXT_SCAN_MAX_BYTES`].
    pub fn count_lines(&self, input: CountLinesInput) -> Result<u64, WorkspaceError> {
        let _memory = self.budget.reserve("count_lines", reserve::SMALL)?;
        let user = input.path.as_str();
        let target = self.root.target(user)?;
        let (file, _) = self
            .root
            .open_file(&target, user, Some(TEXT_SCAN_MAX_BYTES))?;
        // Bounded even if the file grows while it is read.
        let scan = text::scan(file.take(TEXT_SCAN_MAX_BYTES))
            .map_err(|err| WorkspaceError::io(user, err))?;
        if scan.binary {
            return Err(WorkspaceError::binary(user, "contains a NUL byte"));
        }
        Ok(scan.lines)
    }
}
