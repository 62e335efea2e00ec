//! A server's resource templates: shared by every server built with it,
//! and changeable while they serve (a gateway following another server's).
//! Announce a change with [`super::ResourceEvents::list_changed`].

use std::sync::{Arc, PoisonError, RwLock};

use super::{ResourceError, ResourceTemplate};

/// The resource templates one or more servers offer. Cheap to clone;
/// clones are the same registry. Give it to
/// [`crate::ServerBuilder::resource_template_registry`].
#[derive(Clone, Default)]
pub struct ResourceTemplateRegistry {
    templates: Arc<RwLock<Arc<Vec<ResourceTemplate>>>>,
}

impl std::fmt::Debug for ResourceTemplateRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplateRegistry")
            .field("templates", &self.uri_templates())
            .finish()
    }
}

impl ResourceTemplateRegistry {
    /// An empty registry.
    pub fn new() -> ResourceTemplateRegistry {
        ResourceTemplateRegistry::default()
    }

    /// The templates now, in the order they were added (the first that
    /// matches a URI reads it).
    pub(crate) fn snapshot(&self) -> Arc<Vec<ResourceTemplate>> {
        Arc::clone(
            &self
                .templates
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    fn replace(&self, templates: Vec<ResourceTemplate>) {
        *self
            .templates
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(templates);
    }

    /// Adds `template`; fails if one written the same is there.
    pub fn register(&self, template: ResourceTemplate) -> Result<(), ResourceError> {
        let mut templates = self
            .templates
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let text = template.uri_template().to_owned();
        if templates.iter().any(|t| t.uri_template() == text) {
            return Err(ResourceError::Duplicate(text));
        }
        let mut next = templates.as_ref().clone();
        next.push(template);
        *templates = Arc::new(next);
        Ok(())
    }

    /// Makes the registry exactly `templates`; of several written the same
    /// the first is kept. Returns those left out.
    pub fn replace_all(
        &self,
        templates: impl IntoIterator<Item = ResourceTemplate>,
    ) -> Vec<String> {
        let mut kept: Vec<ResourceTemplate> = Vec::new();
        let mut repeated = Vec::new();
        for template in templates {
            if kept
                .iter()
                .any(|t| t.uri_template() == template.uri_template())
            {
                repeated.push(template.uri_template().to_owned());
            } else {
                kept.push(template);
            }
        }
        self.replace(kept);
        repeated
    }

    /// Removes the template written `uri_template`; whether it was there.
    pub fn remove(&self, uri_template: &str) -> bool {
        let mut templates = self
            .templates
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let before = templates.len();
        let next: Vec<ResourceTemplate> = templates
            .iter()
            .filter(|t| t.uri_template() != uri_template)
            .cloned()
            .collect();
        let removed = next.len() != before;
        *templates = Arc::new(next);
        removed
    }

    /// The templates' definitions, in order.
    pub fn definitions(&self) -> Vec<toolshape_protocol::resources::ResourceTemplate> {
        self.snapshot()
            .iter()
            .map(|t| t.definition.clone())
            .collect()
    }

    /// The templates, as written, in order.
    pub fn uri_templates(&self) -> Vec<String> {
        self.snapshot()
            .iter()
            .map(|t| t.uri_template().to_owned())
            .collect()
    }
}
