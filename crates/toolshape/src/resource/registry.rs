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
    templates: ResourceTemplateRegistry,
    /// Whether the templates are a registry shared with the server's owner
    /// (templates may come later: the server offers resources anyway).
    shared_templates: bool,
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
        self.templates.register(template)
    }

    /// Serves the templates of `registry` (shared: changed while serving).
    pub(crate) fn share_templates(&mut self, registry: ResourceTemplateRegistry) {
        self.templates = registry;
        self.shared_templates = true;
    }

    pub(crate) fn add_lister(&mut self, lister: ResourceLister) {
        self.listers.push(lister);
    }

    /// Whether the server has any resources at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.fixed.is_empty()
            && !self.shared_templates
            && self.templates.snapshot().is_empty()
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
        self.templates
            .snapshot()
            .iter()
            .map(|t| t.definition.clone())
            .collect()
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
        let matched = self.templates.snapshot().iter().find_map(|template| {
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
        self.templates
            .snapshot()
            .iter()
            .find(|t| t.template.as_str() == template)
            .and_then(|t| t.completers.get(variable).cloned())
    }
}
