//! Reference resolution: registered documents, and a retriever that fetches
//! nothing unless an explicit network policy allows it.

use std::fmt;
#[cfg(feature = "network")]
use std::sync::Arc;

use referencing::{Draft, Registry, ResourceRef, Retrieve, Uri};
use serde_json::Value;

use crate::error::{SchemaError, SchemaErrorKind};
#[cfg(feature = "network")]
use crate::network::NetworkPolicy;
use crate::report::excerpt;

/// The base URI of a document that declares none, as the validator uses it.
pub(crate) const DEFAULT_BASE: &str = "json-schema:///";

/// The error a refused retrieval carries, recognised by type when mapping errors.
#[derive(Debug)]
pub(crate) struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("fetching references is not allowed")
    }
}

impl std::error::Error for Refused {}

/// Resolves references the registry does not hold: refuses them, or (with the
/// `network` feature) fetches them under the network policy when one is configured.
#[derive(Clone, Default)]
pub(crate) struct Retriever {
    #[cfg(feature = "network")]
    network: Option<Arc<NetworkPolicy>>,
    /// In tests, a host that answers every fetch, counting them.
    #[cfg(test)]
    pub(crate) served: Option<std::sync::Arc<tests::Served>>,
}

impl Retriever {
    /// A retriever that refuses every reference.
    pub(crate) fn offline() -> Self {
        Retriever::default()
    }

    /// A retriever that fetches what `network` allows, or refuses everything without a policy.
    #[cfg(feature = "network")]
    pub(crate) fn new(network: Option<Arc<NetworkPolicy>>) -> Self {
        Retriever {
            network,
            #[cfg(test)]
            served: None,
        }
    }
}

impl Retrieve for Retriever {
    #[cfg_attr(not(feature = "network"), allow(unused_variables))]
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        #[cfg(test)]
        if let Some(served) = &self.served {
            return Ok(served.answer());
        }
        #[cfg(feature = "network")]
        if let Some(policy) = &self.network
            && policy.allows(uri)
        {
            return policy.fetch(uri);
        }
        Err(Box::new(Refused))
    }
}

/// Maps a resolution error to a schema error; refusals name their URI.
pub(crate) fn map_error(error: &referencing::Error) -> SchemaError {
    match error {
        referencing::Error::Unretrievable { uri, source }
            if source.downcast_ref::<Refused>().is_some() =>
        {
            SchemaErrorKind::RemoteReference {
                uri: excerpt(uri, 300),
            }
            .into()
        }
        other => SchemaErrorKind::Unresolvable(excerpt(&other.to_string(), 300)).into(),
    }
}

/// Registers `schema` on top of the `documents` registered ahead of time, so that
/// every reference it makes is resolved (and every remote one refused) now.
pub(crate) fn prepare<'a>(
    documents: &'a Registry<'static>,
    schema: &'a Value,
    draft: Draft,
    retriever: &Retriever,
) -> Result<(Registry<'a>, Uri<String>), SchemaError> {
    let resource = ResourceRef::new(schema, draft);
    let base = resource.id().unwrap_or(DEFAULT_BASE);
    let base = referencing::uri::from_str(base).map_err(|e| map_error(&e))?;
    let registry = documents
        .add(base.as_str(), resource)
        .and_then(|builder| builder.retriever(retriever.clone()).draft(draft).prepare())
        .map_err(|e| map_error(&e))?;
    Ok((registry, base))
}

/// Refuses a schema one of whose resources takes a URI a document is held
/// at already: under `json-schema.org` (the specification's meta-schemas,
/// which the validator library holds) or one of `held` (the documents
/// registered with the engine). The library cannot tell the two documents
/// apart (it fails on such a schema), and neither could a reader.
pub(crate) fn check_ids(schema: &Value, held: &[String]) -> Result<(), SchemaError> {
    // (value, whether it sits where a schema does, its base URI): instance
    // data under `const`, `enum`, `default` and `examples` is not looked
    // into; what sits under a keyword no dialect knows is, object by object
    // (a reference may point there).
    let root = referencing::uri::from_str(DEFAULT_BASE).map_err(|e| map_error(&e))?;
    let mut resources = std::collections::HashSet::new();
    let mut pending = vec![(schema, true, root)];
    while let Some((value, is_schema, base)) = pending.pop() {
        match value {
            Value::Object(members) => {
                let mut base = base;
                if let Some(Value::String(id)) = members.get("$id") {
                    let bare = id.trim_end_matches('#');
                    let reserved = ["http://json-schema.org/", "https://json-schema.org/"]
                        .iter()
                        .any(|namespace| bare.starts_with(namespace));
                    if reserved || held.iter().any(|uri| uri.trim_end_matches('#') == bare) {
                        return Err(SchemaErrorKind::Unresolvable(format!(
                            "$id {:?} names a document the engine already holds (a meta-schema or a registered document)", excerpt(bare, 300)
                        ))
                        .into());
                    }
                    // Two resources at one URI: the library cannot tell
                    // them apart either (it fails on such a schema).
                    if is_schema
                        && !id.starts_with('#')
                        && let Ok(resolved) = referencing::uri::resolve_against(&base.borrow(), id)
                    {
                        let resolved: Uri<String> = if resolved.has_fragment() {
                            resolved.strip_fragment().into()
                        } else {
                            resolved
                        };
                        if !resources.insert(resolved.as_str().to_owned()) {
                            return Err(SchemaErrorKind::Unresolvable(format!(
                                "two resources of the schema take the URI {:?}",
                                excerpt(resolved.as_str(), 300)
                            ))
                            .into());
                        }
                        base = resolved;
                    }
                }
                if !is_schema {
                    pending.extend(members.values().map(|member| (member, false, base.clone())));
                    continue;
                }
                crate::walk::for_each_subschema(members, |edge| {
                    pending.push((edge.schema, true, base.clone()));
                });
                for (keyword, member) in members {
                    let data =
                        matches!(keyword.as_str(), "const" | "enum" | "default" | "examples");
                    if !data && !crate::walk::holds_subschemas(keyword) {
                        pending.push((member, false, base.clone()));
                    }
                }
            }
            Value::Array(items) => {
                pending.extend(items.iter().map(|item| (item, is_schema, base.clone())));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Builds the registry of documents registered ahead of time. Nothing is fetched.
pub(crate) fn documents(documents: Vec<(String, Value)>) -> Result<Registry<'static>, SchemaError> {
    let mut builder = Registry::new().retriever(Retriever::offline());
    for (uri, document) in documents {
        builder = builder.add(uri, document).map_err(|e| map_error(&e))?;
    }
    builder.prepare().map_err(|e| map_error(&e))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Mutex;

    use serde_json::Value;

    /// A host that answers each fetch with the next of its documents (the
    /// last one again once they run out), for any URI.
    #[derive(Debug, Default)]
    pub(crate) struct Served {
        documents: Vec<Value>,
        fetches: Mutex<usize>,
    }

    impl Served {
        pub(crate) fn new(documents: Vec<Value>) -> Self {
            Served {
                documents,
                fetches: Mutex::new(0),
            }
        }

        pub(crate) fn fetches(&self) -> usize {
            *self.fetches.lock().unwrap_or_else(|e| e.into_inner())
        }

        pub(super) fn answer(&self) -> Value {
            let mut fetches = self.fetches.lock().unwrap_or_else(|e| e.into_inner());
            let document = self.documents.get(*fetches).or(self.documents.last());
            *fetches += 1;
            document.cloned().unwrap_or(Value::Bool(true))
        }
    }
}
