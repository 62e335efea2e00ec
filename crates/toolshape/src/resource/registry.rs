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
    /// resource's URI, in their order, while there are fewer than
    /// [`MAX_LISTED`] in all (the fixed ones are all listed).
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ResourceDefinition> + Clone {
        let fixed = self.fixed;
        let listed = self.listed.iter().flat_map(|listed| listed.iter());
        let room = MAX_LISTED.saturating_sub(fixed.len());
        fixed.values().map(|resource| &resource.definition).chain(
            listed
                .filter(move |resource| !fixed.contains_key(&resource.uri))
                .take(room),
        )
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
        let mut count = self.fixed.len();
        for ResourceLister { list, .. } in &self.listers {
            if count >= MAX_LISTED {
                // No room for more: the other listers are not asked.
                break;
            }
            let list: Lister = list.clone();
            let resources = list().await?;
            let new = resources
                .iter()
                .filter(|r| !self.fixed.contains_key(&r.uri));
            count = count.saturating_add(new.count());
            listed.push(resources);
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{MAX_LISTED, ResourceDefinition, ResourceRegistry};
    use crate::resource::{self, Resource};
    use crate::tool::ToolError;

    fn definitions(prefix: &str, count: usize) -> Vec<ResourceDefinition> {
        (0..count)
            .map(|n| ResourceDefinition::new(format!("{prefix}{n}"), format!("r{n}")))
            .collect()
    }

    #[tokio::test]
    async fn a_shared_listing_is_paged_where_it_is_kept_not_copied() -> Result<(), ToolError> {
        let kept = Arc::new(definitions("mem://kept/", 5));
        let handed = Arc::clone(&kept);
        let mut registry = ResourceRegistry::default();
        registry.add_lister(resource::shared_lister(move || {
            let handed = Arc::clone(&handed);
            async move { Ok(handed) }
        }));
        let listing = registry.list().await?;
        assert!(Arc::ptr_eq(&listing.listed[0], &kept));
        let (page, next) = crate::server::pages::page(listing.iter(), None, 2)
            .map_err(|error| ToolError::new(error.message))?;
        assert_eq!(page, kept[..2]);
        assert_eq!(next.as_deref(), Some("at:2"));
        Ok(())
    }

    #[tokio::test]
    async fn fixed_resources_are_all_listed_and_listers_fill_the_rest_of_the_bound()
    -> Result<(), ToolError> {
        let mut registry = ResourceRegistry::default();
        for n in 0..3 {
            let fixed = Resource::text(format!("mem://fixed/{n}"), "fixed", "text/plain", "x");
            assert!(registry.add(fixed).is_ok());
        }
        // One more than there is room for, one of them at a fixed URI.
        let mut many = definitions("mem://listed/", MAX_LISTED);
        many.push(ResourceDefinition::new("mem://fixed/0", "again"));
        registry.add_lister(resource::lister(move || {
            let many = many.clone();
            async move { Ok(many) }
        }));
        // Never asked: the bound is reached before it.
        registry.add_lister(resource::lister(|| async {
            Err::<Vec<ResourceDefinition>, _>(ToolError::new("asked past the bound"))
        }));
        let listing = registry.list().await?;
        let uris: Vec<&str> = listing.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris.len(), MAX_LISTED);
        assert_eq!(
            uris[..4],
            [
                "mem://fixed/0",
                "mem://fixed/1",
                "mem://fixed/2",
                "mem://listed/0"
            ]
        );
        assert_eq!(uris.last(), Some(&"mem://listed/9996"));
        Ok(())
    }
}
