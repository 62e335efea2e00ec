//! [`ServerBuilder`]: tools, options and identity, checked once by `build`.

use std::sync::Arc;

use toolshape_protocol::Implementation;

use super::options::ServerOptions;
use super::{Server, Shared};
use crate::prompt::{Prompt, PromptRegistry};
use crate::resource::{
    Resource, ResourceEvents, ResourceLister, ResourceRegistry, ResourceTemplate,
    ResourceTemplateRegistry,
};
use crate::tool::{RegistrationError, Tool, ToolRegistry};

/// Configures a [`Server`]. Every tool added is registered by
/// [`ServerBuilder::build`], which reports every tool that could not be.
#[derive(Debug)]
pub struct ServerBuilder {
    tools: Vec<Tool>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    listers: Vec<ResourceLister>,
    prompts: Vec<Prompt>,
    registry: Option<ToolRegistry>,
    resource_events: Option<ResourceEvents>,
    url_elicitations: Option<crate::tool::UrlElicitations>,
    connected_client: Option<super::ConnectedClient>,
    prompt_registry: Option<PromptRegistry>,
    template_registry: Option<ResourceTemplateRegistry>,
    options: ServerOptions,
    info: Implementation,
}

/// The tools, resources and prompts a [`ServerBuilder`] could not register,
/// each with its reason.
#[derive(Debug, thiserror::Error)]
#[error("{} tool(s) could not be registered: {}", .errors.len(), list(.errors))]
pub struct BuildError {
    errors: Vec<RegistrationError>,
}

fn list(errors: &[RegistrationError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl BuildError {
    /// Why each tool could not be registered, in the order they were added.
    pub fn errors(&self) -> &[RegistrationError] {
        &self.errors
    }
}

impl ServerBuilder {
    pub(super) fn new(info: Implementation) -> Self {
        ServerBuilder {
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            listers: Vec::new(),
            prompts: Vec::new(),
            registry: None,
            resource_events: None,
            url_elicitations: None,
            connected_client: None,
            prompt_registry: None,
            template_registry: None,
            options: ServerOptions::default(),
            info,
        }
    }

    /// Adds a tool (registered, and checked, by [`ServerBuilder::build`]).
    #[must_use]
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds several tools.
    #[must_use]
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds a resource at a fixed URI.
    #[must_use]
    pub fn resource(mut self, resource: Resource) -> Self {
        self.resources.push(resource);
        self
    }

    /// Adds resources named by a URI template.
    #[must_use]
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.templates.push(template);
        self
    }

    /// Adds resources found at listing time (see [`crate::resource::lister`]).
    #[must_use]
    pub fn resources_from(mut self, lister: ResourceLister) -> Self {
        self.listers.push(lister);
        self
    }

    /// Adds several resources.
    #[must_use]
    pub fn resources(mut self, resources: impl IntoIterator<Item = Resource>) -> Self {
        self.resources.extend(resources);
        self
    }

    /// Adds several resource templates.
    #[must_use]
    pub fn resource_templates(
        mut self,
        templates: impl IntoIterator<Item = ResourceTemplate>,
    ) -> Self {
        self.templates.extend(templates);
        self
    }

    /// Adds a prompt.
    #[must_use]
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Adds several prompts.
    #[must_use]
    pub fn prompts(mut self, prompts: impl IntoIterator<Item = Prompt>) -> Self {
        self.prompts.extend(prompts);
        self
    }

    /// Serves the tools of an existing registry (shared with other bindings);
    /// the tools added to this builder are registered in it too.
    #[must_use]
    pub fn registry(mut self, registry: ToolRegistry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Sets the options, all of them: `instructions` set before is kept
    /// when `options.instructions` is `None`; call
    /// [`ServerBuilder::instructions`] after it to change them.
    #[must_use]
    pub fn options(mut self, mut options: ServerOptions) -> Self {
        if options.instructions.is_none() {
            options.instructions = self.options.instructions.take();
        }
        self.options = options;
        self
    }

    /// Sets the server's human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Sets the guidance for the model about this server.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.options.instructions = Some(instructions.into());
        self
    }

    /// Serves the prompts of `registry` (shared with whoever else holds it,
    /// who may change them while serving: each change is announced,
    /// `notifications/prompts/list_changed`); the prompts added with
    /// [`ServerBuilder::prompt`] go into it at `build` (a second build with
    /// the same prompts and registry then fails on their names: register
    /// them on the registry instead). A server given one offers prompts, and
    /// declares `listChanged`, even while it is empty.
    pub fn prompt_registry(mut self, registry: PromptRegistry) -> Self {
        self.prompt_registry = Some(registry);
        self
    }

    /// Serves the resource templates of `registry` too (shared with whoever
    /// else holds it, who may change them while serving; announce a change
    /// with [`ResourceEvents::list_changed`]), after those added with
    /// [`ServerBuilder::resource_template`] (which stay the server's own). A
    /// server given one offers resources even while it has none.
    pub fn resource_template_registry(mut self, registry: ResourceTemplateRegistry) -> Self {
        self.template_registry = Some(registry);
        self
    }

    /// Announces resource changes on `events` (shared with whoever else
    /// holds it: several servers, or the code that sees the resources
    /// change), and calls its subscribe hook as peers subscribe. By default
    /// each server has its own ([`Server::resource_events`]). A server given
    /// one declares `listChanged` in its resources capability.
    pub fn resource_events(mut self, events: ResourceEvents) -> Self {
        self.resource_events = Some(events);
        self
    }

    /// Announces the completion of URL-mode elicitations on `elicitations`
    /// (shared with whoever else holds it: the code that sees the user come
    /// back, or a gateway relaying its upstream's). By default each server
    /// has its own ([`Server::url_elicitations`]).
    pub fn url_elicitations(mut self, elicitations: crate::tool::UrlElicitations) -> Self {
        self.url_elicitations = Some(elicitations);
        self
    }

    /// Tells `client` when the client of the server's stdio connection
    /// (or of the latest connection [`Server::serve`] serves) can be asked
    /// outside its requests: once it has finished a handshake. Nothing is
    /// told without it.
    pub fn connected_client(mut self, client: super::ConnectedClient) -> Self {
        self.connected_client = Some(client);
        self
    }

    /// Registers every tool added and builds the server; fails, naming each
    /// tool and why, when any could not be registered (and then registers none).
    pub fn build(self) -> Result<Server, BuildError> {
        let mut errors = Vec::new();
        let mut resources = ResourceRegistry::default();
        if let Some(registry) = self.template_registry {
            resources.share_templates(registry);
        }
        for resource in self.resources {
            if let Err(error) = resources.add(resource) {
                errors.push(RegistrationError::Resource(error));
            }
        }
        for template in self.templates {
            if let Err(error) = resources.add_template(template) {
                errors.push(RegistrationError::Resource(error));
            }
        }
        for lister in self.listers {
            resources.add_lister(lister);
        }
        let announces_prompt_changes = self.prompt_registry.is_some();
        let prompts = self.prompt_registry.unwrap_or_default();
        let mut names: std::collections::BTreeSet<String> = prompts.names().into_iter().collect();
        let mut adding = Vec::new();
        for prompt in self.prompts {
            if names.insert(prompt.name().to_owned()) {
                adding.push(prompt);
            } else {
                errors.push(RegistrationError::DuplicatePrompt(prompt.name().to_owned()));
            }
        }
        let registry = self.registry.unwrap_or_default();
        // After another error the tools are only checked: a registry shared
        // with `registry(..)` keeps none of them, so a build tried again
        // does not find them taken.
        if let Err(tool_errors) = registry.register_all_or_check(self.tools, errors.is_empty()) {
            errors.extend(tool_errors);
        }
        if !errors.is_empty() {
            return Err(BuildError { errors });
        }
        for prompt in adding {
            // Names checked above: none is taken.
            let _ = prompts.register(prompt);
        }
        let state_key = match &self.options.request_state_key {
            Some(bytes) => super::asking::StateKey::new(bytes),
            None => super::asking::StateKey::random(),
        };
        Ok(Server {
            shared: Arc::new(Shared {
                registry,
                identity: self
                    .options
                    .server_info_in_results
                    .then(|| super::identity::Identity::new(&self.info)),
                options: self.options,
                info: self.info,
                state_key,
                resources,
                prompts,
                announces_resource_changes: self.resource_events.is_some(),
                announces_prompt_changes,
                resource_events: self.resource_events.unwrap_or_default(),
                url_elicitations: self.url_elicitations.unwrap_or_default(),
                connected_client: self.connected_client,
            }),
        })
    }
}
