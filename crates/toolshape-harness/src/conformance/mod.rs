//! What the official conformance suite's server scenarios call beyond the
//! plain tools: tools that ask the client (on handshake sessions and as
//! 2026-07-28 input_required rounds, with the keys the suite reads),
//! prompts, resources, a template and completions. Shapes and texts follow
//! the suite's scenario descriptions.

mod asking;
mod surface;

pub use asking::tools as asking_tools;
pub use surface::{IDS_IN_ALL, WATCHED, prompts, resource_events, resource_templates, resources};

/// A 1x1 red PNG.
pub const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
