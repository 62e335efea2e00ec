//! The resources a server serves: fixed ones, templates and listers,
//! resolved once per read.

use std::collections::BTreeMap;

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

    /// Every resource: the fixed ones in URI order, then the listers' (bounded).
    pub(crate) async fn list(&self) -> Result<Vec<ResourceDefinition>, ToolError> {
        let mut all: Vec<ResourceDefinition> =
            self.fixed.values().map(|r| r.definition.clone()).collect();
        for ResourceLister { list, .. } in &self.listers {
            let listed: Lister = list.clone();
            for resource in listed().await? {
                if all.len() >= MAX_LISTED {
                    return Ok(all);
                }
                if !self.fixed.contains_key(&resource.uri) {
                    all.push(resource);
                }
            }
        }
        Ok(all)
    }

    pub(crate) fn templates(&self) -> Vec<TemplateDefinition> {
        let mut all: Vec<TemplateDefinition> = self
            .templates
            .iter()
            .map(|t| t.definition.clone())
            .collect();
        if let Some(shared) = &self.shared {
            let shared = shared.snapshot();
            let others = shared.iter().filter(|template| !self.is_own(template));
            all.extend(others.map(|t| t.definition.clone()));
        }
        all
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
