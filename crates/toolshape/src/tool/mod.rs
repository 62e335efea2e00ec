//! Tools: how one is defined, the registry every binding serves from, and
//! what a call runs through. Most users need only [`Tool`], [`ToolError`]
//! and [`ToolRegistry`] (also at the crate root); this module holds the
//! plumbing under them, for hand-written handlers and in-process callers.

mod ask;
mod call;
mod context;
mod cursor;
mod definition;
mod error;
mod form;
mod handler;
pub mod identity;
pub(crate) mod options;
mod panic;
mod registered;
mod registry;
mod requirements;
mod round;
mod running;
mod schema;
mod url_elicitation;

pub(crate) use ask::{AskContext, Asker};
pub use ask::{AskError, Elicitation};
pub(crate) use call::Asking;
pub use call::{CallOutcome, ToolFailure, UnknownTool};
pub use context::{LogMessage, Progress, ToolContext};
pub use definition::{OutputShape, Tool};
pub use error::{BoxError, ToolError, meta_keys};
pub use handler::{BoxFuture, ErasedHandler, ToolOutput};
pub use identity::{QualifiedName, ToolVersion};
pub use options::CallOptions;
pub use registered::{RegisteredTool, RegistrationError};
pub use registry::ToolRegistry;
pub use requirements::{AuthorizationRequirement, Credentials, MissingRequirements, Requirements};
pub(crate) use round::{MAX_QUESTIONS, Round};
pub(crate) use running::{Bounds, Ran, cancelled, deadline, drive};
pub(crate) use schema::derive_input as derive_input_schema;
pub(crate) use url_elicitation::{MAX_ELICITATION_ID_BYTES, SentElicitations};
pub use url_elicitation::{UrlElicitationRequired, UrlElicitations};
