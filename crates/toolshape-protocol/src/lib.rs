//! MCP (Model Context Protocol) and JSON-RPC 2.0 wire types for tools.
//!
//! Covers MCP revisions 2025-06-18, 2025-11-25 and 2026-07-28 (and knows the
//! version strings of 2024-11-05 and 2025-03-26 for negotiation):
//!
//! - [`jsonrpc`]: messages, the one-pass [`classify`] function that turns a
//!   raw line into an [`Incoming`] message with JSON-RPC error semantics,
//!   and writers that serialize straight to a `Vec<u8>`;
//! - [`error`]: [`ErrorObject`] and the JSON-RPC / MCP [`error_code`]s;
//! - [`version`]: [`ProtocolVersion`], feature predicates and negotiation;
//! - [`tools`], [`content`]: tool definitions, `tools/list`, `tools/call`
//!   and content blocks;
//! - [`lifecycle`], [`capabilities`], [`meta`], [`result`]: `initialize`,
//!   `server/discover`, capabilities, `_meta` keys and result fields;
//! - [`notifications`], [`methods`], [`dispatch`]: notification params,
//!   method names and typed routing;
//! - [`http`]: the headers of Streamable HTTP and the rules that tie them
//!   to the body (shared by clients and servers).
//!
//! Deserialization tolerates unknown fields everywhere; optional fields that
//! are absent stay absent when serialized again.
//!
//! ```
//! use toolshape_protocol::{Incoming, KnownRequest, CallToolResult, classify, write_result};
//!
//! let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
//! let Incoming::Request(request) = classify(line) else { panic!("not a request") };
//! let Ok(KnownRequest::CallTool(call)) = KnownRequest::from_request(&request) else { panic!() };
//! assert_eq!(call.name, "echo");
//!
//! let mut out = Vec::new();
//! write_result(&mut out, &request.id, &CallToolResult::text("hi").complete()).unwrap();
//! assert_eq!(
//!     String::from_utf8(out).unwrap(),
//!     r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}]}}"#
//! );
//! ```

mod serde_util;

pub mod asks;
pub mod capabilities;
pub mod completion;
pub mod content;
pub mod dispatch;
pub mod error;
pub mod http;
pub mod jsonrpc;
pub mod lifecycle;
pub mod lists;
pub mod meta;
pub mod methods;
pub mod notifications;
pub mod prompts;
pub mod resources;
pub mod result;
pub mod subscriptions;
pub mod text;
pub mod tools;
pub mod version;

pub use capabilities::{ClientCapabilities, JsonObject, ServerCapabilities, ToolsCapability};
pub use content::{
    Annotations, AudioContent, BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent,
    ResourceContents, ResourceLink, Role, TextContent, TextResourceContents,
};
pub use dispatch::{DispatchError, KnownNotification, KnownRequest};
pub use error::{ErrorObject, error_code};
pub use jsonrpc::{
    Incoming, MAX_BATCH_MESSAGES, Notification, ProgressToken, Request, RequestId, Response,
    classify, is_batch, split_batch, split_success, write_error, write_message, write_notification,
    write_request, write_result, write_result_json,
};
pub use lifecycle::{
    DiscoverResult, Implementation, InitializeParams, InitializeResult, RequestParams,
};
pub use meta::{Meta, MetaError, RequestMeta};
pub use notifications::{
    CancelledNotificationParams, LoggingLevel, LoggingMessageNotificationParams,
    NotificationParams, ProgressNotificationParams,
};
pub use result::{CacheScope, EmptyResult, InputRequiredResult, ResultType};
pub use tools::{
    CallToolOutcome, CallToolParams, CallToolResult, Icon, ListToolsParams, ListToolsResult,
    ToolAnnotations, ToolDefinition,
};
pub use version::{ProtocolVersion, UnsupportedProtocolVersion};
