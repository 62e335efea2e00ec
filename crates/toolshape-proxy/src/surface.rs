//! The upstream's resources and prompts, served as it serves them: its
//! resources listed from it at each listing and read through it, its
//! templates and prompts taken at start and read or rendered through it.
//! A template or prompt the upstream adds later is served once the proxy
//! starts again; its tools are followed as they change (`mirror.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};
use toolshape::client::{Client, ClientError, ClientErrorKind};
use toolshape::protocol::content::ResourceContents;
use toolshape::protocol::error_code;
use toolshape::protocol::prompts::GetPromptResult;
use toolshape::protocol::resources::Resource as ResourceDefinition;
use toolshape::resource::{self, ResourceLister, ResourceNotFound};
use toolshape::{Prompt, ResourceTemplate, ToolError};

use crate::forward::Forwarder;

/// What the upstream offers besides tools.
#[derive(Debug, Default)]
pub(crate) struct Surface {
    /// Its resources, when it has the capability.
    pub(crate) resources: Option<ResourceLister>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
}

/// The resources and prompts of the upstream `client` is connected to,
/// forwarded through `forwarder`'s connections. A listing that fails is
/// left out with a warning: the tools are served whatever happens here.
pub(crate) async fn mirror(forwarder: &Arc<Forwarder>, client: &Client) -> Surface {
    let capabilities = &client.negotiated().capabilities;
    let mut surface = Surface::default();
    if capabilities.resources.is_some() {
        let (lists, reads) = (Arc::clone(forwarder), Arc::clone(forwarder));
        let lister = resource::lister(move || list_resources(Arc::clone(&lists)))
            .reads(move |_, uri| read_resource(Arc::clone(&reads), uri));
        surface.resources = Some(lister);
        match client.list_resource_templates().await {
            Ok(templates) => {
                for definition in templates {
                    let reads = Arc::clone(forwarder);
                    let template =
                        ResourceTemplate::from_definition(definition, move |_, uri, _| {
                            read_resource(Arc::clone(&reads), uri)
                        });
                    match template {
                        Ok(template) => surface.templates.push(template),
                        Err(error) => {
                            tracing::warn!(%error, "an upstream resource template is left out");
                        }
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "cannot list the upstream's resource templates"),
        }
    }
    if capabilities.prompts.is_some() {
        match client.list_prompts().await {
            Ok(prompts) => {
                for definition in prompts {
                    let (renders, name) = (Arc::clone(forwarder), definition.name.clone());
                    surface.prompts.push(Prompt::from_definition(
                        definition,
                        move |_, arguments| {
                            get_prompt(Arc::clone(&renders), name.clone(), arguments)
                        },
                    ));
                }
            }
            Err(error) => tracing::warn!(%error, "cannot list the upstream's prompts"),
        }
    }
    surface
}

async fn list_resources(forwarder: Arc<Forwarder>) -> Result<Vec<ResourceDefinition>, ToolError> {
    let client = forwarder.upstream.client().await.map_err(unreachable)?;
    client.list_resources().await.map_err(|error| {
        ToolError::with_source(
            format!("The upstream server could not list its resources: {error}"),
            error,
        )
    })
}

async fn read_resource(
    forwarder: Arc<Forwarder>,
    uri: String,
) -> Result<Vec<ResourceContents>, ToolError> {
    let client = forwarder.upstream.client().await.map_err(unreachable)?;
    client.read_resource(&uri).await.map_err(|error| {
        if names_no_resource(&error, &uri) {
            return ToolError::from_error(ResourceNotFound::new(uri));
        }
        ToolError::with_source(
            format!("The upstream server could not read {uri}: {error}"),
            error,
        )
    })
}

async fn get_prompt(
    forwarder: Arc<Forwarder>,
    name: String,
    arguments: BTreeMap<String, String>,
) -> Result<GetPromptResult, ToolError> {
    let client = forwarder.upstream.client().await.map_err(unreachable)?;
    let arguments: Map<String, Value> = arguments
        .into_iter()
        .map(|(name, value)| (name, Value::String(value)))
        .collect();
    let arguments = (!arguments.is_empty()).then_some(arguments);
    client.get_prompt(&name, arguments).await.map_err(|error| {
        ToolError::with_source(
            format!("The upstream server could not render the prompt {name}: {error}"),
            error,
        )
    })
}

/// Whether the upstream answered that nothing is at `uri` (the legacy code,
/// or invalid params naming the URI, SEP-2164).
fn names_no_resource(error: &ClientError, uri: &str) -> bool {
    let ClientErrorKind::Protocol(object) = error.kind() else {
        return false;
    };
    let names_uri = || {
        object
            .data
            .as_ref()
            .and_then(|data| data.get("uri"))
            .and_then(Value::as_str)
            == Some(uri)
    };
    object.code == error_code::LEGACY_RESOURCE_NOT_FOUND
        || (object.code == error_code::INVALID_PARAMS && names_uri())
}

fn unreachable(error: ClientError) -> ToolError {
    ToolError::with_source(
        format!("The upstream server cannot be reached: {error}"),
        error,
    )
    .retryable(true)
}
