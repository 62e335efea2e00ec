//! JSON-RPC 2.0 messages as MCP uses them.
//!
//! MCP narrows JSON-RPC 2.0: request ids are strings or integers (never
//! `null`), `params` are objects, and batches are not allowed since
//! 2025-06-18 (2025-03-26 peers' batches: [`split_batch`]).

mod batch;
mod classify;
mod id;
mod message;
mod split;
mod write;

pub use batch::{MAX_BATCH_MESSAGES, is_batch, split_batch};
pub use classify::{Incoming, classify};
pub use id::{ProgressToken, RequestId};
pub(crate) use message::parse_raw_params;
pub use message::{JSONRPC_VERSION, Notification, ParamsError, Request, Response, ResultError};
pub use split::split_success;
pub use write::{
    write_error, write_message, write_notification, write_request, write_result, write_result_json,
};
