//! The engine: configuration, compilation and the compiled-schema cache.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use jsonschema::{PatternOptions, Validator};
use referencing::Registry;
use serde_json::Value;

use crate::budget::Runaways;
use crate::cache::Cache;
use crate::compiled::CompiledSchema;
use crate::error::{SchemaError, SchemaErrorKind};
use crate::format::FormatMode;
use crate::limits::Limits;
use crate::listing::CompileBudget;
use crate::meta::CustomValidators;
use crate::metaschema::MetaSchemas;
#[cfg(feature = "network")]
use crate::network::NetworkPolicy;
use crate::precheck::{self, PatternPolicy};
use crate::report::excerpt;
use crate::resolve::{self, Retriever};
use crate::text::TextJson;
use crate::{cost, meta};

/// Stack of the thread a schema is compiled on: hostile nesting cannot
/// overflow it (the cost estimate's 20,000 frames took about 4 KiB each in
/// a debug build: 64 MiB overflowed; only the pages touched are memory).
const COMPILE_STACK: usize = 256 * 1024 * 1024;

/// Whose schemas an engine compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trust {
    /// Schemas this process wrote itself: validation runs inline, without a time budget.
    Trusted,
    /// Schemas a peer sent: large validations run on a worker under the time budget.
    Untrusted,
}

/// Compiles schemas into reusable validators, within [`Limits`], and caches them
/// by content. Cheap to clone; clones share the cache.
///
/// ```
/// use serde_json::json;
/// let engine = toolshape_schema::SchemaEngine::builder().build();
/// let schema = engine.compile(&json!({"type": "array", "items": {"type": "integer"}}))?;
/// assert!(schema.validate(&json!([1, 2])).is_ok());
/// assert!(schema.validate(&json!(["x"])).is_err());
/// # Ok::<(), toolshape_schema::SchemaError>(())
/// ```
#[derive(Clone)]
pub struct SchemaEngine {
    inner: Arc<Inner>,
    /// What this handle's untrusted compiles draw on, if anything.
    budget: Option<CompileBudget>,
}

struct Inner {
    limits: Arc<Limits>,
    trust: Trust,
    formats: FormatMode,
    patterns: Patterns,
    documents: Result<Registry<'static>, SchemaError>,
    /// The URIs the registered documents are held at.
    held: Vec<String>,
    meta_schemas: MetaSchemas,
    custom_meta: CustomValidators,
    retriever: Retriever,
    cache: Cache,
    runaways: Arc<Runaways>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Patterns {
    Linear,
    Backtracking { limit: usize },
}

impl std::fmt::Debug for SchemaEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaEngine")
            .field("limits", &self.inner.limits)
            .field("trust", &self.inner.trust)
            .field("cached", &self.inner.cache.len())
            .finish_non_exhaustive()
    }
}

impl Default for SchemaEngine {
    fn default() -> Self {
        SchemaEngine::builder().build()
    }
}

impl SchemaEngine {
    /// Starts configuring an engine: untrusted, default limits, formats asserted
    /// ([`FormatMode::Assert`]), linear-time patterns only, no network.
    pub fn builder() -> SchemaEngineBuilder {
        SchemaEngineBuilder::default()
    }

    /// The limits this engine holds schemas and validations to.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// How many compiled schemas (and refusals) the cache holds.
    pub fn cached(&self) -> usize {
        self.inner.cache.len()
    }

    /// This engine (sharing its cache and settings) with its untrusted
    /// compiles drawing on `budget`: for compiling one peer's listing
    /// together (see [`CompileBudget`]). A trusted engine ignores it.
    #[must_use]
    pub fn with_budget(&self, budget: CompileBudget) -> SchemaEngine {
        SchemaEngine {
            inner: Arc::clone(&self.inner),
            budget: Some(budget),
        }
    }

    /// Compiles `schema`, or returns the cached result of compiling an equal one.
    pub fn compile(&self, schema: &Value) -> Result<Arc<CompiledSchema>, SchemaError> {
        let footprint = precheck::footprint(schema, self.inner.limits.max_schema_bytes)?;
        if let Some(outcome) = self.inner.cache.get(footprint.hash, schema) {
            return outcome;
        }
        let budget = self
            .budget
            .as_ref()
            .filter(|_| self.inner.trust == Trust::Untrusted);
        let remaining = budget.map(CompileBudget::remaining);
        if let (Some(budget), Some(Duration::ZERO)) = (budget, remaining) {
            return Err(SchemaErrorKind::ListingTooCostly {
                budget_ms: budget.limit().as_millis(),
            }
            .into());
        }
        let schema = Arc::new(schema.clone());
        let started = Instant::now();
        let outcome = self
            .compile_on_large_stack(&schema, remaining)
            .map(Arc::new);
        if let Some(budget) = budget {
            budget.spend(started.elapsed());
        }
        // Patterns cut short by what was left of the budget: the budget's
        // refusal, not the schema's.
        let outcome = match (outcome, budget) {
            (Err(error), Some(budget))
                if matches!(error.kind(), SchemaErrorKind::PatternsTooCostly { .. })
                    && remaining.is_some_and(|left| left < self.inner.limits.pattern_budget) =>
            {
                Err(SchemaErrorKind::ListingTooCostly {
                    budget_ms: budget.limit().as_millis(),
                }
                .into())
            }
            (outcome, _) => outcome,
        };
        // A refusal for time taken may be the machine's load: tried again.
        let timed = outcome.as_ref().is_err_and(|error| {
            matches!(
                error.kind(),
                SchemaErrorKind::PatternsTooCostly { .. }
                    | SchemaErrorKind::ListingTooCostly { .. }
            )
        });
        if !timed {
            self.inner
                .cache
                .insert(footprint.hash, Arc::clone(&schema), outcome.clone());
        }
        outcome
    }

    /// Compiles on a thread of its own; `remaining`: what is left of the
    /// budget, which the schema's patterns may take at most.
    fn compile_on_large_stack(
        &self,
        schema: &Arc<Value>,
        remaining: Option<Duration>,
    ) -> Result<CompiledSchema, SchemaError> {
        std::thread::scope(|scope| {
            let compiler = std::thread::Builder::new()
                .name("toolshape-compile".into())
                .stack_size(COMPILE_STACK)
                .spawn_scoped(scope, || self.compile_uncached(schema, remaining))
                .map_err(|e| {
                    SchemaErrorKind::Compile(format!("cannot start the compiler thread: {e}"))
                })?;
            compiler.join().unwrap_or_else(|_| {
                Err(
                    SchemaErrorKind::Compile("the validator library failed on this schema".into())
                        .into(),
                )
            })
        })
    }

    fn compile_uncached(
        &self,
        schema: &Arc<Value>,
        remaining: Option<Duration>,
    ) -> Result<CompiledSchema, SchemaError> {
        let inner = &*self.inner;
        let documents = inner.documents.as_ref().map_err(Clone::clone)?;
        let declared = inner.meta_schemas.declared(schema)?;
        let dialect = declared.dialect;
        let policy = match inner.patterns {
            Patterns::Linear => PatternPolicy::LinearOnly,
            Patterns::Backtracking { .. } => PatternPolicy::AllowBacktracking,
        };
        // Only a peer's schema is held to the pattern budget: an
        // application's own (a debug build compiles regexes slowly) is not.
        let pattern_budget = match inner.trust {
            Trust::Untrusted => remaining.map_or(inner.limits.pattern_budget, |left| {
                left.min(inner.limits.pattern_budget)
            }),
            Trust::Trusted => Duration::MAX,
        };
        let mut structure =
            precheck::check_structure(schema, &inner.limits, policy, pattern_budget)?;
        match declared.custom {
            None => meta::check(schema, dialect, &inner.limits)?,
            Some(custom) => {
                inner
                    .custom_meta
                    .check(schema, custom, dialect, documents, &inner.limits)?;
            }
        }

        let draft = dialect.draft();
        resolve::check_ids(schema, &inner.held)?;
        let (registry, base) = resolve::prepare(documents, schema, draft, &inner.retriever)?;
        let walked = std::mem::take(&mut structure.walked);
        let estimate = cost::estimate(
            schema,
            &registry.resolver(base),
            draft,
            &inner.limits,
            &walked,
        )?;
        // What references reach beyond the walk is held to its bounds too.
        for (subschema, path) in &estimate.referenced {
            structure.referenced(subschema, path)?;
        }

        // Both validators are built on the registry prepared above, with
        // nothing more to fetch: what was fetched once (and estimated) is
        // what they validate against, however a host answers a second time.
        let validator =
            self.build_validator::<jsonschema::json::SerdeJson>(schema, draft, &registry)?;
        // An untrusted schema validates what a peer sent, read from its text:
        // the same schema compiled for that text, read without a `Value`.
        let text_validator = match inner.trust {
            Trust::Untrusted => Some(Arc::new(
                self.build_validator::<TextJson>(schema, draft, &registry)?,
            )),
            Trust::Trusted => None,
        };

        Ok(CompiledSchema {
            validator: Arc::new(validator),
            text_validator,
            schema: Arc::clone(schema),
            dialect,
            expansion: estimate.expansion,
            chain: estimate.chain,
            superlinear: estimate.superlinear,
            trust: inner.trust,
            limits: Arc::clone(&inner.limits),
            runaways: Arc::clone(&inner.runaways),
            quarantined_until: AtomicU64::new(0),
        })
    }

    /// The validator of `schema` for instances in the representation `F`,
    /// with the engine's settings, its references resolved in `registry`
    /// (prepared: nothing is fetched here).
    fn build_validator<F: jsonschema::json::Json>(
        &self,
        schema: &Value,
        draft: referencing::Draft,
        registry: &Registry<'_>,
    ) -> Result<Validator<F>, SchemaError> {
        let inner = &*self.inner;
        let options = jsonschema::options_for::<F>()
            .with_draft(draft)
            .with_registry(registry)
            .with_retriever(Retriever::offline());
        let options = match inner.formats.assert_formats() {
            Some(assert) => options.should_validate_formats(assert),
            None => options,
        };
        let options = match inner.patterns {
            Patterns::Linear => options.with_pattern_options(PatternOptions::regex()),
            Patterns::Backtracking { limit } => {
                options.with_pattern_options(PatternOptions::fancy_regex().backtrack_limit(limit))
            }
        };
        options.build(schema).map_err(|error| match error.kind() {
            jsonschema::error::ValidationErrorKind::Referencing(e) => resolve::map_error(e),
            _ => SchemaErrorKind::Compile(excerpt(&error.masked().to_string(), 300)).into(),
        })
    }
}

/// Configures a [`SchemaEngine`].
#[derive(Debug)]
pub struct SchemaEngineBuilder {
    limits: Limits,
    trust: Trust,
    formats: FormatMode,
    patterns: Patterns,
    documents: Vec<(String, Value)>,
    #[cfg(feature = "network")]
    network: Option<NetworkPolicy>,
    cache_capacity: usize,
}

impl Default for SchemaEngineBuilder {
    fn default() -> Self {
        SchemaEngineBuilder {
            limits: Limits::default(),
            trust: Trust::Untrusted,
            formats: FormatMode::Assert,
            patterns: Patterns::Linear,
            documents: Vec::new(),
            #[cfg(feature = "network")]
            network: None,
            cache_capacity: 1024,
        }
    }
}

impl SchemaEngineBuilder {
    /// Sets the limits.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets whose schemas these are (untrusted by default).
    #[must_use]
    pub fn trust(mut self, trust: Trust) -> Self {
        self.trust = trust;
        self
    }

    /// Sets how `format` is treated: asserted in every dialect
    /// ([`FormatMode::Assert`], the default), only annotated
    /// ([`FormatMode::Annotate`]), or as each dialect specifies
    /// ([`FormatMode::DialectDefault`]).
    #[must_use]
    pub fn format_mode(mut self, mode: FormatMode) -> Self {
        self.formats = mode;
        self
    }

    /// Asserts `format` (date, date-time, email, uri, ...) when true, the
    /// default; only annotates it when false. Shorthand for
    /// [`SchemaEngineBuilder::format_mode`] with [`FormatMode::Assert`] or
    /// [`FormatMode::Annotate`].
    #[must_use]
    pub fn validate_formats(self, yes: bool) -> Self {
        self.format_mode(if yes {
            FormatMode::Assert
        } else {
            FormatMode::Annotate
        })
    }

    /// Accepts patterns that need backtracking, run with at most `limit` backtracking steps.
    /// By default only linear-time patterns are accepted.
    #[must_use]
    pub fn allow_backtracking_patterns(mut self, limit: usize) -> Self {
        self.patterns = Patterns::Backtracking { limit };
        self
    }

    /// Registers a document under `uri`, for `$ref`s to resolve to. Nothing is fetched.
    ///
    /// A schema's `$schema` may name a registered document (by `uri` or by its
    /// root `$id`) as a custom meta-schema: the schema is then checked against
    /// that document, compiled in the dialect the document's own `$schema`
    /// declares, with the vocabularies its `$vocabulary` lists. A meta-schema
    /// that requires a vocabulary the engine does not implement is refused.
    #[must_use]
    pub fn document(mut self, uri: impl Into<String>, document: Value) -> Self {
        self.documents.push((uri.into(), document));
        self
    }

    /// Lets remote references be fetched under `policy`. Off by default.
    /// Only with the `network` Cargo feature.
    #[cfg(feature = "network")]
    #[must_use]
    pub fn network(mut self, policy: NetworkPolicy) -> Self {
        self.network = Some(policy);
        self
    }

    /// Sets how many compiled schemas the cache keeps (1024 by default; 0 turns it off).
    #[must_use]
    pub fn cache_capacity(mut self, capacity: usize) -> Self {
        self.cache_capacity = capacity;
        self
    }

    /// Builds the engine, or says which registered document is unusable.
    pub fn try_build(self) -> Result<SchemaEngine, SchemaError> {
        let engine = self.build();
        match &engine.inner.documents {
            Ok(_) => Ok(engine),
            Err(error) => Err(error.clone()),
        }
    }

    /// Builds the engine. If a registered document is unusable, every compile
    /// reports why; [`SchemaEngineBuilder::try_build`] reports it at once.
    pub fn build(self) -> SchemaEngine {
        #[cfg(feature = "network")]
        let retriever = Retriever::new(self.network.map(Arc::new));
        #[cfg(not(feature = "network"))]
        let retriever = Retriever::offline();
        SchemaEngine {
            inner: Arc::new(Inner {
                limits: Arc::new(self.limits),
                trust: self.trust,
                formats: self.formats,
                patterns: self.patterns,
                meta_schemas: MetaSchemas::new(&self.documents),
                custom_meta: CustomValidators::default(),
                held: self.documents.iter().map(|(uri, _)| uri.clone()).collect(),
                documents: resolve::documents(self.documents),
                retriever,
                cache: Cache::new(self.cache_capacity),
                runaways: Arc::default(),
            }),
            budget: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::InstanceText;
    use crate::resolve::tests::Served;

    /// An engine whose remote references are answered by `served`.
    fn engine_fetching_from(served: &Arc<Served>) -> SchemaEngine {
        let mut engine = SchemaEngine::builder().build();
        let Some(inner) = Arc::get_mut(&mut engine.inner) else {
            panic!("a new engine is not shared");
        };
        inner.retriever.served = Some(Arc::clone(served));
        engine
    }

    /// A remote document is fetched once per compile, and the one fetched
    /// is the one both validators (and the cost estimate) use, even when
    /// its host answers differently the next time.
    #[test]
    fn a_remote_reference_is_fetched_once_and_validated_as_fetched() {
        let served = Arc::new(Served::new(vec![
            json!({"type": "integer"}),
            json!({"type": "string"}),
        ]));
        let engine = engine_fetching_from(&served);
        let schema = json!({"$ref": "https://schemas.example.com/n.json"});
        let compiled = engine.compile(&schema).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(served.fetches(), 1);
        assert!(compiled.validate(&json!(1)).is_ok());
        assert!(compiled.validate(&json!("one")).is_err());
        let text = |json| InstanceText::parse(json).unwrap_or_else(|e| panic!("{e}"));
        assert!(compiled.validate_text(&text("1")).is_ok());
        assert!(compiled.validate_text(&text(r#""one""#)).is_err());
    }
}
