//! Content blocks: the unstructured part of a tool result.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::meta::Meta;
use crate::serde_util::serialize_opt_js_number;
use crate::tools::Icon;
use crate::version::ProtocolVersion;

/// Who a piece of content is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

/// Hints for clients about how to use or display content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who the content is for (`user`, `assistant` or both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most important).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_opt_js_number"
    )]
    pub priority: Option<f64>,
    /// ISO 8601 time of the last modification, e.g. `2025-05-03T14:30:00Z`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// Text content (`"type": "text"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Optional annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Base64-encoded binary content with a MIME type: the body of image
/// (`"type": "image"`) and audio (`"type": "audio"`) blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BinaryContent {
    /// Base64-encoded bytes.
    pub data: String,
    /// MIME type, e.g. `image/png` or `audio/wav`.
    pub mime_type: String,
    /// Optional annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Image content (`"type": "image"`).
pub type ImageContent = BinaryContent;
/// Audio content (`"type": "audio"`, 2025-03-26 on).
pub type AudioContent = BinaryContent;

/// A link to a resource (`"type": "resource_link"`, 2025-06-18 on).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource URI.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes of the raw content, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons (2025-11-25 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Optional annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Resource contents embedded in a tool result (`"type": "resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The contents (text or blob).
    pub resource: ResourceContents,
    /// Optional annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Text resource contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Binary resource contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BlobResourceContents {
    /// The resource URI.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded bytes.
    pub blob: String,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// A text block's content.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

impl BinaryContent {
    /// Base64 `data` of type `mime_type`.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

impl ResourceLink {
    /// A link to `uri`, named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: None,
            annotations: None,
            meta: None,
        }
    }
}

impl EmbeddedResource {
    /// Embedded `resource` contents.
    pub fn new(resource: ResourceContents) -> Self {
        Self {
            resource,
            annotations: None,
            meta: None,
        }
    }
}

impl TextResourceContents {
    /// The text of the resource at `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
        }
    }
}

impl BlobResourceContents {
    /// The base64 bytes of the resource at `uri`.
    pub fn new(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            blob: blob.into(),
            meta: None,
        }
    }
}

/// The contents of a resource: text or a base64 blob, told apart by which
/// of `text` / `blob` is present.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text contents.
    Text(TextResourceContents),
    /// Binary contents.
    Blob(BlobResourceContents),
}

impl<'de> Deserialize<'de> for ResourceContents {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.get("text").is_some() {
            TextResourceContents::deserialize(value)
                .map(Self::Text)
                .map_err(D::Error::custom)
        } else if value.get("blob").is_some() {
            BlobResourceContents::deserialize(value)
                .map(Self::Blob)
                .map_err(D::Error::custom)
        } else {
            Err(D::Error::custom(
                "resource contents need a `text` or a `blob` field",
            ))
        }
    }
}

/// One block of a tool result's `content`, tagged by its `type` field.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"type": "text"`.
    Text(TextContent),
    /// `"type": "image"`.
    Image(ImageContent),
    /// `"type": "audio"`.
    Audio(AudioContent),
    /// `"type": "resource_link"`.
    ResourceLink(ResourceLink),
    /// `"type": "resource"`.
    Resource(EmbeddedResource),
    /// A block whose `type` this crate does not know (a newer revision or
    /// an extension), kept verbatim so it survives a round trip (a client
    /// reads it as it came). No revision's `schema.json` has it, so a
    /// toolshape server sends it to no peer: left out of a tool result with
    /// a value, a text block in its place otherwise
    /// ([`is_known_to`](Self::is_known_to) is false for every revision).
    Unknown(Value),
}

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }

    /// The `type` tag of this block.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Text(_) => "text",
            Self::Image(_) => "image",
            Self::Audio(_) => "audio",
            Self::ResourceLink(_) => "resource_link",
            Self::Resource(_) => "resource",
            Self::Unknown(value) => value.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// Whether a peer on `version` knows this kind of block: audio came
    /// with 2025-03-26, resource links with 2025-06-18. A block of a kind
    /// this crate does not know is in no revision's schema it knows of, so
    /// it counts as known to none: each revision's content is a closed list
    /// of kinds, and a strict peer rejects the whole message over one block.
    pub fn is_known_to(&self, version: ProtocolVersion) -> bool {
        match self {
            Self::Audio(_) => version.has_audio_content(),
            Self::ResourceLink(_) => version.has_resource_links(),
            Self::Text(_) | Self::Image(_) | Self::Resource(_) => true,
            Self::Unknown(_) => false,
        }
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(content) => Some(&content.text),
            _ => None,
        }
    }
}

/// Writes `{"type": tag, ...inner}`.
#[derive(Serialize)]
struct Tagged<'a, T> {
    #[serde(rename = "type")]
    tag: &'static str,
    #[serde(flatten)]
    inner: &'a T,
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(inner) => Tagged { tag: "text", inner }.serialize(serializer),
            Self::Image(inner) => Tagged {
                tag: "image",
                inner,
            }
            .serialize(serializer),
            Self::Audio(inner) => Tagged {
                tag: "audio",
                inner,
            }
            .serialize(serializer),
            Self::ResourceLink(inner) => Tagged {
                tag: "resource_link",
                inner,
            }
            .serialize(serializer),
            Self::Resource(inner) => Tagged {
                tag: "resource",
                inner,
            }
            .serialize(serializer),
            Self::Unknown(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Some(tag) = value.get("type") else {
            return Err(D::Error::missing_field("type"));
        };
        let block = match tag.as_str() {
            Some("text") => TextContent::deserialize(value).map(Self::Text),
            Some("image") => BinaryContent::deserialize(value).map(Self::Image),
            Some("audio") => BinaryContent::deserialize(value).map(Self::Audio),
            Some("resource_link") => ResourceLink::deserialize(value).map(Self::ResourceLink),
            Some("resource") => EmbeddedResource::deserialize(value).map(Self::Resource),
            Some(_) => return Ok(Self::Unknown(value)),
            None => return Err(D::Error::custom("content block `type` must be a string")),
        };
        block.map_err(D::Error::custom)
    }
}
