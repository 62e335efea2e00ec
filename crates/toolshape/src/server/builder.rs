//! [`ServerBuilder`]: tools, options and identity, checked once by `build`.

use std::sync::Arc;

use toolshape_protocol::Implementation;

use super::options::ServerOptions;
use super::{Server, Shared};
use crate::tool::{RegistrationError, Tool, ToolRegistry};

/// Configures a [`Server`]. Every tool added is registered by
/// [`ServerBuilder::build`], which reports every tool that could not be.
#[derive(Debug)]
pub struct ServerBuilder {
    tools: Vec<Tool>,
    registry: Option<ToolRegistry>,
    options: ServerOptions,
    info: Implementation,
}

/// The tools a [`ServerBuilder`] could not register, each with its reason.
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
            registry: None,
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

    /// Serves the tools of an existing registry (shared with other bindings);
    /// the tools added to this builder are registered in it too.
    #[must_use]
    pub fn registry(mut self, registry: ToolRegistry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Sets the options.
    #[must_use]
    pub fn options(mut self, options: ServerOptions) -> Self {
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

    /// Registers every tool added and builds the server; fails, naming each
    /// tool and why, when any could not be registered (and then registers none).
    pub fn build(self) -> Result<Server, BuildError> {
        let registry = self.registry.unwrap_or_default();
        registry
            .register_all(self.tools)
            .map_err(|errors| BuildError { errors })?;
        let state_key = match &self.options.request_state_key {
            Some(bytes) => super::asking::StateKey::new(bytes),
            None => super::asking::StateKey::random(),
        };
        Ok(Server {
            shared: Arc::new(Shared {
                registry,
                options: self.options,
                info: self.info,
                state_key,
            }),
        })
    }
}
