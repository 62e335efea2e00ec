//! The resources a server serves: fixed ones, templates and listers,
//! resolved once per read.

use std::collections::BTreeMap;
use std::sync::Arc;

use toolshape_protocol::ErrorObject;
use toolshape_protocol::resources::{
    Resource as ResourceDefinition, ResourceTemplate as TemplateDefinition,
};

use super::{Lister, Reader, Resource, ResourceLister, ResourceTemplate, ResourceTemplateRegistry};
use crate::completion::Completer;
use crate::tool::ToolError;

/// Most resources one listing gathers from listers.
const MAX_LISTED: usize = 10_000;

/// A server's resources.
#[derive(Debug, Default)]
pub(crate) struct ResourceRegistry {
    fixed: BTreeMap<String, Resource>,
    /// The server's own templates (its builder's).
    templates: Vec<ResourceTemplate>,
    /// Templates shared with the server's owner, changed while serving
    /// (after the server's own; one written as one of those is not used).
    shared: Option<ResourceTemplateRegistry>,
    listers: Vec<ResourceLister>,
}

/// What reads a URI: a reader and the variables it is handed.
pub(crate) struct Resolved {
    pub(crate) reader: Reader,
    pub(crate) variables: BTreeMap<String, String>,
}

/// The resources of one listing: the fixed ones, then what each lister
/// returned (shared with it), at most [`MAX_LISTED`] in all.
pub(crate) struct Listing<'r> {
    fixed: &'r BTreeMap<String, Resource>,
    listed: Vec<Arc<Vec<ResourceDefinition>>>,
}

impl Listing<'_> {
    /// The fixed resources in URI order, then the listers' not at a fixed
    /// resource's URI, in their order; at most [`MAX_LISTED`].
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ResourceDefinition> + Clone {
        let fixed = self.fixed;
        let listed = self.listed.iter().flat_map(|listed| listed.iter());
        fixed
            .values()
            .map(|resource| &resource.definition)
            .chain(listed.filter(move |resource| !fixed.contains_key(&resource.uri)))
            .take(MAX_LISTED)
    }
}

/// Why a resource could not be registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// Two resources share a URI, or two templates a template.
    #[error("a resource {0:?} is already registered")]
    Duplicate(String),
}

impl ResourceRegistry {
    pub(crate) fn add(&mut self, resource: Resource) -> Result<(), ResourceError> {
        let uri = resource.definition.uri.clone();
        if self.fixed.contains_key(&uri) {
            return Err(ResourceError::Duplicate(uri));
        }
        self.fixed.insert(uri, resource);
        Ok(())
    }

    pub(crate) fn add_template(&mut self, template: ResourceTemplate) -> Result<(), ResourceError> {
        let text = template.template.as_str();
        if self.templates.iter().any(|t| t.template.as_str() == text) {
            return Err(ResourceError::Duplicate(text.to_owned()));
        }
        self.templates.push(template);
        Ok(())
    }

    /// Serves the templates of `registry` too (shared: changed while serving).
    pub(crate) fn share_templates(&mut self, registry: ResourceTemplateRegistry) {
        self.shared = Some(registry);
    }

    /// The first of `found` over every template: the server's own, then the
    /// shared ones not written as one of those.
    fn find_template<T>(&self, found: impl Fn(&ResourceTemplate) -> Option<T>) -> Option<T> {
        if let Some(result) = self.templates.iter().find_map(&found) {
            return Some(result);
        }
        let shared = self.shared.as_ref()?.snapshot();
        shared
            .iter()
            .filter(|template| !self.is_own(template))
            .find_map(found)
    }

    /// Whether one of the server's own templates is written as `template`.
    fn is_own(&self, template: &ResourceTemplate) -> bool {
        let text = template.template.as_str();
        self.templates.iter().any(|t| t.template.as_str() == text)
    }

    pub(crate) fn add_lister(&mut self, lister: ResourceLister) {
        self.listers.push(lister);
    }

    /// Whether the server has any resources at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.fixed.is_empty()
            && self.templates.is_empty()
            && self.shared.is_none()
            && self.listers.is_empty()
    }

    /// Every resource: the fixed ones in URI order, then the listers'
    /// (bounded), as the listers return them (shared, not copied).
    pub(crate) async fn list(&self) -> Result<Listing<'_>, ToolError> {
        let mut listed = Vec::with_capacity(self.listers.len());
        for ResourceLister { list, .. } in &self.listers {
            let list: Lister = list.clone();
            listed.push(list().await?);
        }
        Ok(Listing {
            fixed: &self.fixed,
            listed,
        })
    }

    /// One page of the templates (the server's own, then the shared ones
    /// not written as one of those), and the cursor of the next.
    pub(crate) fn template_page(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<(Vec<TemplateDefinition>, Option<String>), ErrorObject> {
        let shared = self.shared.as_ref().map(ResourceTemplateRegistry::snapshot);
        let others = shared.iter().flat_map(|shared| shared.iter());
        let all = self
            .templates
            .iter()
            .chain(others.filter(|template| !self.is_own(template)))
            .map(|template| &template.definition);
        crate::server::pages::page(all, cursor, size)
    }

    /// Whether a template is written as `uri_template`.
    pub(crate) fn offers_template(&self, uri_template: &str) -> bool {
        self.find_template(|template| {
            (template.definition.uri_template == uri_template).then_some(())
        })
        .is_some()
    }

    /// What reads `uri`: the fixed resource of that URI, else the first
    /// template that matches it, else the first lister's reader.
    pub(crate) fn resolve(&self, uri: &str) -> Option<Resolved> {
        if let Some(resource) = self.fixed.get(uri) {
            return Some(Resolved {
                reader: resource.reader.clone(),
                variables: BTreeMap::new(),
            });
        }
        let matched = self.find_template(|template| {
            template.template.matches(uri).map(|variables| Resolved {
                reader: template.reader.clone(),
                variables,
            })
        });
        matched.or_else(|| {
            let reader = self.listers.iter().find_map(|lister| lister.read.clone())?;
            Some(Resolved {
                reader,
                variables: BTreeMap::new(),
            })
        })
    }

    /// The completer of `variable` in the template written `template`.
    pub(crate) fn completer(&self, template: &str, variable: &str) -> Option<Completer> {
        self.find_template(|t| {
            (t.template.as_str() == template).then(|| t.completers.get(variable).cloned())
        })
        .flatten()
    }
}
