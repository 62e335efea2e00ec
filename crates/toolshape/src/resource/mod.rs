//! Resources: data a server exposes by URI. A [`Resource`] has a fixed URI;
//! a [`ResourceTemplate`] answers every URI its RFC 6570 template matches,
//! with its variables; a lister adds resources found at listing time (the
//! files of a folder). Readers are handed a [`ToolContext`] like tools, so
//! they may report progress and ask the client.

mod events;
mod registry;
mod templates;
mod uri_template;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use toolshape_protocol::completion::Completion;
use toolshape_protocol::content::{BlobResourceContents, ResourceContents, TextResourceContents};
use toolshape_protocol::resources::{
    Resource as ResourceDefinition, ResourceTemplate as TemplateDefinition,
};

use crate::completion::Completer;
use crate::tool::{BoxFuture, ToolContext, ToolError};

pub(crate) use events::Held;
pub use events::{ResourceEvent, ResourceEvents};
pub use registry::ResourceError;
pub(crate) use registry::ResourceRegistry;
pub use templates::ResourceTemplateRegistry;
pub use uri_template::{UriTemplateError, percent_decode};

/// What a reader fails with when its URI names nothing (for example a file
/// that is not there): the client then gets the resource-not-found error
/// (-32602 with `data.uri`, SEP-2164), not an internal error. Return it
/// with `?` or as `ResourceNotFound::new(uri).into()`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("resource not found: {uri}")]
#[non_exhaustive]
pub struct ResourceNotFound {
    /// The URI read.
    pub uri: String,
}

impl ResourceNotFound {
    /// Nothing at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into() }
    }
}

/// `?` on a reader's lookup that found nothing.
impl From<ResourceNotFound> for ToolError {
    fn from(missing: ResourceNotFound) -> ToolError {
        ToolError::from_error(missing)
    }
}
pub(crate) use uri_template::{MAX_URI_BYTES, UriTemplate};

/// What a read returns: the resource's contents (one or more parts).
pub type ReadFuture = BoxFuture<Result<Vec<ResourceContents>, ToolError>>;

/// Reads a resource: its URI, the template's variables (empty for a fixed
/// resource), and the request's context.
pub(crate) type Reader =
    Arc<dyn Fn(ToolContext, String, BTreeMap<String, String>) -> ReadFuture + Send + Sync>;

/// Lists resources found at listing time.
pub(crate) type Lister =
    Arc<dyn Fn() -> BoxFuture<Result<Arc<Vec<ResourceDefinition>>, ToolError>> + Send + Sync>;

/// A resource at a fixed URI.
#[derive(Clone)]
pub struct Resource {
    pub(crate) definition: ResourceDefinition,
    pub(crate) reader: Reader,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource")
            .field("definition", &self.definition)
            .finish_non_exhaustive()
    }
}

impl Resource {
    /// A resource at `uri`, named `name`, read by `read` each time.
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Resource
    where
        F: Fn(ToolContext, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        Resource {
            definition: ResourceDefinition::new(uri, name),
            reader: Arc::new(move |context, uri, _| Box::pin(read(context, uri))),
        }
    }

    /// A resource whose contents are this text.
    pub fn text(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Resource {
        let (uri, mime_type, text) = (uri.into(), mime_type.into(), text.into());
        let mut contents = TextResourceContents::new(uri.clone(), text);
        contents.mime_type = Some(mime_type.clone());
        let contents = ResourceContents::Text(contents);
        Resource::new(uri, name, move |_, _| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        })
        .mime_type(mime_type)
    }

    /// A resource whose contents are these bytes (given base64-encoded).
    pub fn blob(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        base64: impl Into<String>,
    ) -> Resource {
        let (uri, mime_type, base64) = (uri.into(), mime_type.into(), base64.into());
        let mut contents = BlobResourceContents::new(uri.clone(), base64);
        contents.mime_type = Some(mime_type.clone());
        let contents = ResourceContents::Blob(contents);
        Resource::new(uri, name, move |_, _| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        })
        .mime_type(mime_type)
    }

    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.definition.title = Some(title.into());
        self
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.definition.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.definition.mime_type = Some(mime_type.into());
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.definition.uri
    }
}

/// Resources named by an RFC 6570 URI template, e.g. `file:///{+path}`.
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) definition: TemplateDefinition,
    pub(crate) template: UriTemplate,
    pub(crate) reader: Reader,
    pub(crate) completers: BTreeMap<String, Completer>,
}

impl std::fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("definition", &self.definition)
            .field("completes", &self.completers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ResourceTemplate {
    /// Resources matching `uri_template`, named `name`, read by `read` with
    /// the URI and its variables.
    pub fn new<F, Fut>(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        read: F,
    ) -> Result<ResourceTemplate, UriTemplateError>
    where
        F: Fn(ToolContext, String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        ResourceTemplate::from_definition(TemplateDefinition::new(uri_template, name), read)
    }

    /// Resources described by `definition` as it is (another server's
    /// template, relayed by a gateway), read by `read` with the URI and its
    /// variables. Its template must parse as [`ResourceTemplate::new`]'s
    /// does (RFC 6570 levels 1 to 3, bounded in length and expressions).
    pub fn from_definition<F, Fut>(
        definition: TemplateDefinition,
        read: F,
    ) -> Result<ResourceTemplate, UriTemplateError>
    where
        F: Fn(ToolContext, String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        let template = UriTemplate::parse(&definition.uri_template)?;
        Ok(ResourceTemplate {
            definition,
            template,
            reader: Arc::new(move |context, uri, variables| {
                Box::pin(read(context, uri, variables))
            }),
            completers: BTreeMap::new(),
        })
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.definition.description = Some(description.into());
        self
    }

    /// Sets the MIME type its resources share.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.definition.mime_type = Some(mime_type.into());
        self
    }

    /// The template, as written.
    pub fn uri_template(&self) -> &str {
        &self.definition.uri_template
    }

    /// The names of the template's variables, in the order they appear.
    pub fn variables(&self) -> Vec<&str> {
        self.template.variables().collect()
    }

    /// Suggests values of the variable `name` (`completion/complete`): given
    /// what is typed so far and the other variables, the candidates (at
    /// most 100 are sent, with how many there were).
    #[must_use]
    pub fn complete<F, Fut>(mut self, name: impl Into<String>, complete: F) -> Self
    where
        F: Fn(String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completers
            .insert(name.into(), crate::completion::of_values(complete));
        self
    }

    /// As [`complete`](Self::complete), for a source that knows more than
    /// it returns: `complete` gives the whole [`Completion`], its `total`
    /// and `hasMore` sent as given (past 100 values, cut and `hasMore`).
    #[must_use]
    pub fn complete_counted<F, Fut>(mut self, name: impl Into<String>, complete: F) -> Self
    where
        F: Fn(String, BTreeMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Completion> + Send + 'static,
    {
        self.completers
            .insert(name.into(), crate::completion::counted(complete));
        self
    }
}

/// Resources found at listing time (for example the files of a folder),
/// listed beside the fixed ones; a template or fixed resource reads them,
/// or the lister's own reader ([`ResourceLister::reads`]). With other
/// listers and fixed resources, a listing holds at most 10,000 resources:
/// all the fixed ones, then the listers' in the order they were added (a
/// lister past that bound is not asked).
pub fn lister<F, Fut>(list: F) -> ResourceLister
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceDefinition>, ToolError>> + Send + 'static,
{
    ResourceLister {
        list: Arc::new(move || {
            let listed = list();
            Box::pin(async move { listed.await.map(Arc::new) })
        }),
        read: None,
    }
}

/// As [`lister`], for a listing kept and handed out again (a cache, a
/// gateway's copy of another server's): `list` returns it shared, and a
/// page of it copies only the page's definitions.
pub fn shared_lister<F, Fut>(list: F) -> ResourceLister
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Arc<Vec<ResourceDefinition>>, ToolError>> + Send + 'static,
{
    ResourceLister {
        list: Arc::new(move || Box::pin(list())),
        read: None,
    }
}

/// See [`lister`].
#[derive(Clone)]
pub struct ResourceLister {
    pub(crate) list: Lister,
    pub(crate) read: Option<Reader>,
}

impl ResourceLister {
    /// Reads every URI no fixed resource or template matches, by `read`
    /// with the URI (a gateway reading another server's resources); a
    /// reader for a URI it does not know fails with [`ResourceNotFound`].
    /// Of several listers with readers, the first added reads.
    #[must_use]
    pub fn reads<F, Fut>(mut self, read: F) -> Self
    where
        F: Fn(ToolContext, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        self.read = Some(Arc::new(move |context, uri, _| {
            Box::pin(read(context, uri))
        }));
        self
    }
}

impl std::fmt::Debug for ResourceLister {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResourceLister(..)")
    }
}
