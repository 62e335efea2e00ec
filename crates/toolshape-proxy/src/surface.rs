//! The upstream's resources and prompts, served as it serves them: its
//! resources listed from it (one listing at a time, reused for a second)
//! and read through it, its templates and prompts taken at start and again
//! as they change (bounded, the first of a repeated name kept), read or
//! rendered through it; its tools are followed as they change
//! (`mirror.rs`).

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::Mutex;
use toolshape::client::{Client, ClientError, ClientErrorKind};
use toolshape::prompt::InvalidArguments;
use toolshape::protocol::completion::{Completion, CompletionRef};
use toolshape::protocol::content::ResourceContents;
use toolshape::protocol::error_code;
use toolshape::protocol::prompts::GetPromptResult;
use toolshape::protocol::resources::Resource as ResourceDefinition;
use toolshape::protocol::text::excerpt;
use toolshape::resource::{self, ResourceLister, ResourceNotFound, ResourceTemplateRegistry};
use toolshape::tool::BoxFuture;
use toolshape::{Prompt, PromptRegistry, ResourceTemplate, ToolContext, ToolError};

use crate::forward::Forwarder;

/// Most resource templates taken from the upstream (each is matched
/// against every URI read).
pub(crate) const MAX_TEMPLATES: usize = 256;
/// Most prompts taken from the upstream.
pub(crate) const MAX_PROMPTS: usize = 1_000;
/// Most resources one listing through the proxy holds (the server lists
/// at most as many).
const MAX_RESOURCES: usize = 10_000;
/// How long one upstream listing of resources serves the listings asked
/// for after it.
const LISTING_REUSE: Duration = Duration::from_secs(1);

/// What the upstream offers besides tools.
#[derive(Debug, Default)]
pub(crate) struct Surface {
    /// Its resources, when it has the capability.
    pub(crate) resources: Option<ResourceLister>,
    /// The last listing of them (forgotten when the upstream says they changed).
    pub(crate) last_listing: Arc<LastListing>,
    /// Its resource templates, when it has resources: listed at start,
    /// and again when it says its resources changed (`notices.rs`).
    pub(crate) templates: Option<ResourceTemplateRegistry>,
    /// Its prompts, when it has the capability: listed at start, and again
    /// when it says they changed (`notices.rs`).
    pub(crate) prompts: Option<PromptRegistry>,
}

/// The last upstream listing of resources: when it was made, and the
/// number of changes the upstream had announced when it began. A change
/// is noted without waiting for a listing under way (which may wait for a
/// place toward the upstream), and keeps that listing from being reused.
#[derive(Debug, Default)]
pub(crate) struct LastListing {
    listed: Mutex<Option<Listed>>,
    changes: AtomicU64,
}

#[derive(Debug)]
struct Listed {
    at: Instant,
    changes: u64,
    resources: Arc<Vec<ResourceDefinition>>,
}

impl LastListing {
    /// The upstream said its resources changed: the next listing asks it.
    pub(crate) fn changed(&self) {
        self.changes.fetch_add(1, Ordering::AcqRel);
    }
}

/// The resources and prompts of the upstream `client` is connected to,
/// forwarded through `forwarder`'s connections. A listing that fails is
/// left out with a warning: the tools are served whatever happens here.
pub(crate) async fn mirror(forwarder: &Arc<Forwarder>, client: &Client) -> Surface {
    let capabilities = &client.negotiated().capabilities;
    let completes = capabilities.completions.is_some();
    let mut surface = Surface::default();
    if capabilities.resources.is_some() {
        let (lists, reads) = (Arc::clone(forwarder), Arc::clone(forwarder));
        let last = Arc::clone(&surface.last_listing);
        let lister =
            resource::shared_lister(move || list_resources(Arc::clone(&lists), Arc::clone(&last)))
                .reads(move |context, uri| read_resource(Arc::clone(&reads), context, uri));
        surface.resources = Some(lister);
        let registry = ResourceTemplateRegistry::new();
        match client.list_resource_templates().await {
            Ok(templates) => {
                registry.replace_all(take_templates(forwarder, templates, completes));
            }
            Err(error) => tracing::warn!(%error, "cannot list the upstream's resource templates"),
        }
        surface.templates = Some(registry);
    }
    if capabilities.prompts.is_some() {
        let registry = PromptRegistry::new();
        match client.list_prompts().await {
            Ok(definitions) => {
                registry.replace_all(take_prompts(forwarder, definitions, completes));
            }
            Err(error) => tracing::warn!(%error, "cannot list the upstream's prompts"),
        }
        surface.prompts = Some(registry);
    }
    surface
}

/// Lists the upstream's resource templates again through `client` and
/// makes `registry` exactly those; whether it could.
pub(crate) async fn relist_templates(
    forwarder: &Arc<Forwarder>,
    client: &Client,
    registry: &ResourceTemplateRegistry,
) -> bool {
    let listing = client.list_resource_templates();
    let Some(definitions) = within_call_time(forwarder, "resource templates", listing).await else {
        return false;
    };
    let completes = client.negotiated().capabilities.completions.is_some();
    registry.replace_all(take_templates(forwarder, definitions, completes));
    true
}

/// Lists the upstream's prompts again through `client` and makes
/// `registry` exactly those (its clients are then told); whether it could.
pub(crate) async fn relist_prompts(
    forwarder: &Arc<Forwarder>,
    client: &Client,
    registry: &PromptRegistry,
) -> bool {
    let Some(definitions) = within_call_time(forwarder, "prompts", client.list_prompts()).await
    else {
        return false;
    };
    let completes = client.negotiated().capabilities.completions.is_some();
    registry.replace_all(take_prompts(forwarder, definitions, completes));
    true
}

/// What `listing` of the upstream's `what` gives within the longest call
/// time; `None` (with a warning) when it fails or takes longer.
async fn within_call_time<T>(
    forwarder: &Forwarder,
    what: &str,
    listing: impl Future<Output = Result<T, ClientError>>,
) -> Option<T> {
    match tokio::time::timeout(forwarder.options.longest_call(), listing).await {
        Ok(Ok(listed)) => Some(listed),
        Ok(Err(error)) => {
            tracing::warn!(%error, "cannot list the upstream's {what}");
            None
        }
        Err(_) => {
            tracing::warn!("the upstream did not list its {what} in time");
            None
        }
    }
}

/// The first `most` of `items` with distinct `key`s (the others left out,
/// with a warning naming them as `what`).
fn first_of_each<T>(items: Vec<T>, key: impl Fn(&T) -> &String, most: usize, what: &str) -> Vec<T> {
    let mut seen = HashSet::new();
    let mut taken = Vec::new();
    for item in items {
        if !seen.insert(key(&item).clone()) {
            let key = excerpt(key(&item), 200);
            tracing::warn!(%key, "an upstream {what} listed again is left out");
            continue;
        }
        if taken.len() == most {
            tracing::warn!(
                "the upstream lists more than {most} of its {what}s: the rest are left out"
            );
            break;
        }
        taken.push(item);
    }
    taken
}

/// The upstream's prompts this proxy can serve: each name once, at most
/// [`MAX_PROMPTS`], rendered (and completed) through the upstream.
fn take_prompts(
    forwarder: &Arc<Forwarder>,
    definitions: Vec<toolshape::protocol::prompts::Prompt>,
    completes: bool,
) -> Vec<Prompt> {
    let mut taken: Vec<Prompt> = Vec::new();
    for definition in first_of_each(definitions, |d| &d.name, MAX_PROMPTS, "prompt") {
        let (renders, name) = (Arc::clone(forwarder), definition.name.clone());
        let arguments: Vec<String> = match (completes, &definition.arguments) {
            (true, Some(arguments)) => arguments.iter().map(|a| a.name.clone()).collect(),
            _ => Vec::new(),
        };
        let mut prompt = Prompt::from_definition(definition, move |context, arguments| {
            get_prompt(Arc::clone(&renders), context, name.clone(), arguments)
        });
        let reference = CompletionRef::Prompt {
            name: prompt.name().to_owned(),
        };
        for argument in arguments {
            let completer = completer(forwarder, reference.clone(), argument.clone());
            prompt = prompt.complete_counted(argument, completer);
        }
        taken.push(prompt);
    }
    taken
}

/// The upstream's templates this proxy can serve: each once, at most
/// [`MAX_TEMPLATES`], read through the upstream.
fn take_templates(
    forwarder: &Arc<Forwarder>,
    definitions: Vec<toolshape::protocol::resources::ResourceTemplate>,
    completes: bool,
) -> Vec<ResourceTemplate> {
    let mut taken: Vec<ResourceTemplate> = Vec::new();
    let unique = first_of_each(
        definitions,
        |d| &d.uri_template,
        MAX_TEMPLATES,
        "resource template",
    );
    for definition in unique {
        let reads = Arc::clone(forwarder);
        let template = ResourceTemplate::from_definition(definition, move |context, uri, _| {
            read_resource(Arc::clone(&reads), context, uri)
        });
        match template {
            Ok(mut template) => {
                if completes {
                    let reference = CompletionRef::Resource {
                        uri: template.uri_template().to_owned(),
                    };
                    let variables: Vec<String> = template
                        .variables()
                        .into_iter()
                        .map(str::to_owned)
                        .collect();
                    for variable in variables {
                        let completer = completer(forwarder, reference.clone(), variable.clone());
                        template = template.complete_counted(variable, completer);
                    }
                }
                taken.push(template);
            }
            Err(error) => tracing::warn!(%error, "an upstream resource template is left out"),
        }
    }
    taken
}

/// The upstream's resources: one listing at a time, each serving the
/// listings asked for in the [`LISTING_REUSE`] after it; bounded in time by
/// the proxy's longest call and in length by [`MAX_RESOURCES`].
async fn list_resources(
    forwarder: Arc<Forwarder>,
    last_listing: Arc<LastListing>,
) -> Result<Arc<Vec<ResourceDefinition>>, ToolError> {
    let mut last = last_listing.listed.lock().await;
    let changes = last_listing.changes.load(Ordering::Acquire);
    if let Some(listed) = last.as_ref()
        && listed.at.elapsed() < LISTING_REUSE
        && listed.changes == changes
    {
        return Ok(Arc::clone(&listed.resources));
    }
    let _permit = forwarder.permit().await;
    let client = forwarder.upstream.client().await.map_err(unreachable)?;
    let limit = forwarder.options.longest_call();
    let listing = tokio::time::timeout(limit, client.list_resources()).await;
    if let Ok(listed) = &listing {
        forwarder.upstream.observe(&client, listed.as_ref().err());
    }
    let mut listed = match listing {
        Ok(Ok(listed)) => listed,
        Ok(Err(error)) => return Err(upstream_failed("list its resources", error)),
        Err(_) => {
            return Err(ToolError::new(format!(
                "The upstream server did not list its resources within {} ms",
                limit.as_millis()
            ))
            .retryable(true));
        }
    };
    listed.truncate(MAX_RESOURCES);
    let listed = Arc::new(listed);
    *last = Some(Listed {
        at: Instant::now(),
        changes,
        resources: Arc::clone(&listed),
    });
    Ok(listed)
}

/// Reads `uri` through the upstream, its questions asked of the client of `context`.
async fn read_resource(
    forwarder: Arc<Forwarder>,
    context: ToolContext,
    uri: String,
) -> Result<Vec<ResourceContents>, ToolError> {
    let _permit = forwarder.permit().await;
    let client = forwarder.upstream.client().await.map_err(unreachable)?;
    let read = if forwarder.options.relay_asks {
        client.read_resource_asking(&uri, context).await
    } else {
        client.read_resource(&uri).await
    };
    forwarder.upstream.observe(&client, read.as_ref().err());
    read.map_err(|error| {
        if names_no_resource(&error) {
            return ToolError::from_error(ResourceNotFound::new(uri));
        }
        // Any other refusal of the request (the TypeScript SDK's 1.x servers
        // say "Resource … not found" so, without a `data`) is passed on as
        // the upstream wrote it, its `data` left out.
        if let ClientErrorKind::Protocol(object) = error.kind()
            && object.code == error_code::INVALID_PARAMS
        {
            return InvalidArguments::new(excerpt(&object.message, crate::MAX_ERROR_TEXT)).into();
        }
        upstream_failed(
            &format!("read {}", excerpt(&uri, crate::MAX_ERROR_TEXT)),
            error,
        )
    })
}

/// Renders the prompt `name` through the upstream, its questions asked of
/// the client of `context`.
async fn get_prompt(
    forwarder: Arc<Forwarder>,
    context: ToolContext,
    name: String,
    arguments: BTreeMap<String, String>,
) -> Result<GetPromptResult, ToolError> {
    let _permit = forwarder.permit().await;
    let client = forwarder.upstream.client().await.map_err(unreachable)?;
    let arguments: Map<String, Value> = arguments
        .into_iter()
        .map(|(name, value)| (name, Value::String(value)))
        .collect();
    let arguments = (!arguments.is_empty()).then_some(arguments);
    let rendered = if forwarder.options.relay_asks {
        client.get_prompt_asking(&name, arguments, context).await
    } else {
        client.get_prompt(&name, arguments).await
    };
    forwarder.upstream.observe(&client, rendered.as_ref().err());
    rendered.map_err(|error| match error.kind() {
        // The client's arguments (or the name) will not do: so it is told.
        // (An upstream that refuses what the proxy itself sent, or an answer
        // it relayed, is taken at its word too; its `data` is not relayed.)
        ClientErrorKind::Protocol(object) if object.code == error_code::INVALID_PARAMS => {
            InvalidArguments::new(excerpt(&object.message, crate::MAX_ERROR_TEXT)).into()
        }
        _ => upstream_failed(&format!("render the prompt {name}"), error),
    })
}

/// Suggestions for `argument` of what `reference` names, asked of the
/// upstream (within `--max-concurrent` and the longest call time), with its
/// `total` and `hasMore`; none when it fails, with a warning.
fn completer(
    forwarder: &Arc<Forwarder>,
    reference: CompletionRef,
    argument: String,
) -> impl Fn(String, BTreeMap<String, String>) -> BoxFuture<Completion> + Send + Sync + 'static {
    let forwarder = Arc::clone(forwarder);
    move |partial, others| {
        let (forwarder, reference, argument) =
            (Arc::clone(&forwarder), reference.clone(), argument.clone());
        Box::pin(async move {
            let _permit = forwarder.permit().await;
            let client = match forwarder.upstream.client().await {
                Ok(client) => client,
                Err(error) => {
                    tracing::warn!(%error, "cannot reach the upstream to complete an argument");
                    return Completion::from_values(Vec::new());
                }
            };
            let limit = forwarder.options.longest_call();
            let asked = client.complete_with(reference, &argument, &partial, &others);
            let completed = tokio::time::timeout(limit, asked).await;
            if let Ok(completed) = &completed {
                forwarder
                    .upstream
                    .observe(&client, completed.as_ref().err());
            }
            match completed {
                Ok(Ok(completion)) => completion,
                Ok(Err(error)) => {
                    tracing::warn!(%error, argument = %excerpt(&argument, 100), "the upstream did not complete an argument");
                    Completion::from_values(Vec::new())
                }
                Err(_) => {
                    tracing::warn!(argument = %excerpt(&argument, 100), "the upstream did not complete an argument in time");
                    Completion::from_values(Vec::new())
                }
            }
        })
    }
}

/// Whether the upstream answered that nothing is at the URI read: the
/// legacy code, or invalid params naming a URI (SEP-2164; the URI may come
/// back shortened, so any is taken).
fn names_no_resource(error: &ClientError) -> bool {
    let ClientErrorKind::Protocol(object) = error.kind() else {
        return false;
    };
    let names_uri = object
        .data
        .as_ref()
        .and_then(|data| data.get("uri"))
        .is_some_and(Value::is_string);
    object.code == error_code::LEGACY_RESOURCE_NOT_FOUND
        || (object.code == error_code::INVALID_PARAMS && names_uri)
}

/// What the client gets when the upstream fails to `what`: its message,
/// shortened (or, when it needs the user elsewhere first, that).
fn upstream_failed(what: &str, error: ClientError) -> ToolError {
    if let Some(required) = crate::forward::url_visits_first(&error) {
        return required;
    }
    let message = excerpt(&error.to_string(), crate::MAX_ERROR_TEXT);
    ToolError::with_source(
        format!("The upstream server could not {what}: {message}"),
        error,
    )
}

fn unreachable(error: ClientError) -> ToolError {
    ToolError::with_source(
        format!("The upstream server cannot be reached: {error}"),
        error,
    )
    .retryable(true)
}
