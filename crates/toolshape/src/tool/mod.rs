//! Tools: definitions, the registry every binding serves from, and the call pipeline.

mod call;
mod definition;
mod handler;
mod registered;
mod registry;
mod schema;

pub use call::{CallOptions, CallOutcome, ToolFailure, UnknownTool};
pub use definition::Tool;
pub use handler::{
    BoxFuture, ErasedHandler, LogMessage, Progress, ToolContext, ToolError, ToolOutput,
};
pub(crate) use registered::RegisteredTool;
pub use registered::{RegistrationError, WRAPPED_OUTPUT_META_KEY};
pub use registry::{InvalidCursor, ToolRegistry};
