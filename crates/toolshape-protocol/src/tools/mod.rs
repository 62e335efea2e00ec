//! Tools: definitions, `tools/list` and `tools/call`.

mod call;
mod definition;
mod list;

pub use call::{CallToolOutcome, CallToolParams, CallToolResult};
pub use definition::{
    Icon, IconTheme, TaskSupport, ToolAnnotations, ToolDefinition, ToolExecution, ToolNameError,
    validate_tool_name,
};
pub use list::{ListToolsParams, ListToolsResult, PaginatedRequestParams};

/// The schema's name for [`CallToolParams`].
pub type CallToolRequestParams = CallToolParams;
