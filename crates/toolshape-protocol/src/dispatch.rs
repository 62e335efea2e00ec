//! Typed views of requests and notifications whose methods this crate
//! models, for routing by method.

use crate::asks::ElicitationCompleteParams;
use crate::completion::CompleteParams;
use crate::error::ErrorObject;
use crate::jsonrpc::{Notification, ParamsError, Request, parse_raw_params};
use crate::lifecycle::{InitializeParams, RequestParams};
use crate::meta::Meta;
use crate::methods;
use crate::notifications::{
    CancelledNotificationParams, LoggingMessageNotificationParams, NotificationParams,
    ProgressNotificationParams,
};
use crate::prompts::GetPromptParams;
use crate::resources::{ReadResourceParams, ResourceUpdatedParams, SubscribeParams};
use crate::subscriptions::{ListenParams, SetLevelParams, SubscriptionsAcknowledgedParams};
use crate::tools::PaginatedRequestParams;
use crate::tools::{CallToolParams, ListToolsParams};

/// A request with a method this crate models, params parsed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum KnownRequest {
    /// `initialize` (legacy; boxed, it is by far the largest variant).
    Initialize(Box<InitializeParams>),
    /// `server/discover` (2026-07-28).
    Discover(RequestParams),
    /// `ping` (legacy).
    Ping(RequestParams),
    /// `tools/list`.
    ListTools(ListToolsParams),
    /// `tools/call`.
    CallTool(CallToolParams),
    /// `logging/setLevel` (legacy).
    SetLoggingLevel(SetLevelParams),
    /// `subscriptions/listen` (2026-07-28).
    Listen(ListenParams),
    /// `resources/list`.
    ListResources(PaginatedRequestParams),
    /// `resources/templates/list`.
    ListResourceTemplates(PaginatedRequestParams),
    /// `resources/read`.
    ReadResource(ReadResourceParams),
    /// `resources/subscribe` (legacy).
    Subscribe(SubscribeParams),
    /// `resources/unsubscribe` (legacy).
    Unsubscribe(SubscribeParams),
    /// `prompts/list`.
    ListPrompts(PaginatedRequestParams),
    /// `prompts/get`.
    GetPrompt(GetPromptParams),
    /// `completion/complete`.
    Complete(CompleteParams),
}

/// A notification with a method this crate models, params parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum KnownNotification {
    /// `notifications/initialized` (legacy).
    Initialized(NotificationParams),
    /// `notifications/cancelled`.
    Cancelled(CancelledNotificationParams),
    /// `notifications/progress`.
    Progress(ProgressNotificationParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged(NotificationParams),
    /// `notifications/message`.
    LoggingMessage(LoggingMessageNotificationParams),
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedParams),
    /// `notifications/resources/list_changed`.
    ResourceListChanged(NotificationParams),
    /// `notifications/prompts/list_changed`.
    PromptListChanged(NotificationParams),
    /// `notifications/subscriptions/acknowledged` (2026-07-28).
    SubscriptionsAcknowledged(SubscriptionsAcknowledgedParams),
    /// `notifications/elicitation/complete` (2025-11-25 only).
    ElicitationComplete(ElicitationCompleteParams),
}

/// Why a message could not be turned into a known request or notification.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    /// The method is not one this crate models (the caller may still
    /// handle it; otherwise answer `-32601`).
    #[error("unknown method {0:?}")]
    UnknownMethod(String),
    /// The method is known but its params are malformed (`-32602`).
    #[error(transparent)]
    InvalidParams(#[from] ParamsError),
}

impl DispatchError {
    /// The error to send back: `-32601 Method not found` or
    /// `-32602 Invalid params`.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            Self::UnknownMethod(method) => ErrorObject::method_not_found(method),
            Self::InvalidParams(error) => error.to_error_object(),
        }
    }
}

impl KnownRequest {
    /// Parses `request`'s params according to its method.
    pub fn from_request(request: &Request) -> Result<Self, DispatchError> {
        let params = request.params.as_deref();
        Ok(match request.method.as_str() {
            methods::INITIALIZE => Self::Initialize(Box::new(parse_raw_params(params)?)),
            methods::SERVER_DISCOVER => Self::Discover(parse_raw_params(params)?),
            methods::PING => Self::Ping(parse_raw_params(params)?),
            methods::TOOLS_LIST => Self::ListTools(parse_raw_params(params)?),
            methods::TOOLS_CALL => Self::CallTool(parse_raw_params(params)?),
            methods::LOGGING_SET_LEVEL => Self::SetLoggingLevel(parse_raw_params(params)?),
            methods::SUBSCRIPTIONS_LISTEN => Self::Listen(parse_raw_params(params)?),
            methods::RESOURCES_LIST => Self::ListResources(parse_raw_params(params)?),
            methods::RESOURCES_TEMPLATES_LIST => {
                Self::ListResourceTemplates(parse_raw_params(params)?)
            }
            methods::RESOURCES_READ => Self::ReadResource(parse_raw_params(params)?),
            methods::RESOURCES_SUBSCRIBE => Self::Subscribe(parse_raw_params(params)?),
            methods::RESOURCES_UNSUBSCRIBE => Self::Unsubscribe(parse_raw_params(params)?),
            methods::PROMPTS_LIST => Self::ListPrompts(parse_raw_params(params)?),
            methods::PROMPTS_GET => Self::GetPrompt(parse_raw_params(params)?),
            methods::COMPLETION_COMPLETE => Self::Complete(parse_raw_params(params)?),
            other => return Err(DispatchError::UnknownMethod(other.to_owned())),
        })
    }

    /// The method name of this request.
    pub fn method(&self) -> &'static str {
        match self {
            Self::Initialize(_) => methods::INITIALIZE,
            Self::Discover(_) => methods::SERVER_DISCOVER,
            Self::Ping(_) => methods::PING,
            Self::ListTools(_) => methods::TOOLS_LIST,
            Self::CallTool(_) => methods::TOOLS_CALL,
            Self::SetLoggingLevel(_) => methods::LOGGING_SET_LEVEL,
            Self::Listen(_) => methods::SUBSCRIPTIONS_LISTEN,
            Self::ListResources(_) => methods::RESOURCES_LIST,
            Self::ListResourceTemplates(_) => methods::RESOURCES_TEMPLATES_LIST,
            Self::ReadResource(_) => methods::RESOURCES_READ,
            Self::Subscribe(_) => methods::RESOURCES_SUBSCRIBE,
            Self::Unsubscribe(_) => methods::RESOURCES_UNSUBSCRIBE,
            Self::ListPrompts(_) => methods::PROMPTS_LIST,
            Self::GetPrompt(_) => methods::PROMPTS_GET,
            Self::Complete(_) => methods::COMPLETION_COMPLETE,
        }
    }

    /// The request's `_meta`, whatever its method.
    pub fn meta(&self) -> Option<&Meta> {
        match self {
            Self::Initialize(params) => params.meta.as_ref(),
            Self::Discover(params) | Self::Ping(params) => params.meta.as_ref(),
            Self::ListTools(params) => params.meta.as_ref(),
            Self::CallTool(params) => params.meta.as_ref(),
            Self::SetLoggingLevel(params) => params.meta.as_ref(),
            Self::Listen(params) => params.meta.as_ref(),
            Self::ListResources(params)
            | Self::ListResourceTemplates(params)
            | Self::ListPrompts(params) => params.meta.as_ref(),
            Self::ReadResource(params) => params.meta.as_ref(),
            Self::Subscribe(params) | Self::Unsubscribe(params) => params.meta.as_ref(),
            Self::GetPrompt(params) => params.meta.as_ref(),
            Self::Complete(params) => params.meta.as_ref(),
        }
    }
}

impl KnownNotification {
    /// Parses `notification`'s params according to its method.
    pub fn from_notification(notification: &Notification) -> Result<Self, DispatchError> {
        let params = notification.params.as_deref();
        Ok(match notification.method.as_str() {
            methods::INITIALIZED => Self::Initialized(parse_raw_params(params)?),
            methods::CANCELLED => Self::Cancelled(parse_raw_params(params)?),
            methods::PROGRESS => Self::Progress(parse_raw_params(params)?),
            methods::TOOLS_LIST_CHANGED => Self::ToolListChanged(parse_raw_params(params)?),
            methods::LOGGING_MESSAGE => Self::LoggingMessage(parse_raw_params(params)?),
            methods::RESOURCES_UPDATED => Self::ResourceUpdated(parse_raw_params(params)?),
            methods::RESOURCES_LIST_CHANGED => Self::ResourceListChanged(parse_raw_params(params)?),
            methods::PROMPTS_LIST_CHANGED => Self::PromptListChanged(parse_raw_params(params)?),
            methods::SUBSCRIPTIONS_ACKNOWLEDGED => {
                Self::SubscriptionsAcknowledged(parse_raw_params(params)?)
            }
            methods::ELICITATION_COMPLETE => Self::ElicitationComplete(parse_raw_params(params)?),
            other => return Err(DispatchError::UnknownMethod(other.to_owned())),
        })
    }

    /// The method name of this notification.
    pub fn method(&self) -> &'static str {
        match self {
            Self::Initialized(_) => methods::INITIALIZED,
            Self::Cancelled(_) => methods::CANCELLED,
            Self::Progress(_) => methods::PROGRESS,
            Self::ToolListChanged(_) => methods::TOOLS_LIST_CHANGED,
            Self::LoggingMessage(_) => methods::LOGGING_MESSAGE,
            Self::ResourceUpdated(_) => methods::RESOURCES_UPDATED,
            Self::ResourceListChanged(_) => methods::RESOURCES_LIST_CHANGED,
            Self::PromptListChanged(_) => methods::PROMPTS_LIST_CHANGED,
            Self::SubscriptionsAcknowledged(_) => methods::SUBSCRIPTIONS_ACKNOWLEDGED,
            Self::ElicitationComplete(_) => methods::ELICITATION_COMPLETE,
        }
    }
}
