//! [`CompileBudget`]: the compile time a batch of a peer's schemas (one
//! listing of its tools) may take together.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The compile time one batch of untrusted schemas may take together: a
/// peer's tool listing, whose schemas a gateway or an audit compiles one
/// after another. Each schema is bounded on its own ([`crate::Limits`]),
/// but a hostile peer can list 10,000 tools whose schemas each stay just
/// within those bounds (patterns that take most of
/// [`crate::Limits::pattern_budget`] to compile, say): hours of compiling.
///
/// An engine given a budget ([`crate::SchemaEngine::with_budget`]) adds
/// the time each compile of an untrusted schema takes to it; once it is
/// spent, a schema not already compiled (in the engine's cache) is refused
/// at once ([`crate::SchemaErrorKind::ListingTooCostly`], not cached, so a
/// later batch may compile it), and a schema's patterns get no more than
/// what is left. A batch then takes at most its budget and one schema's
/// compile. Clones share what was spent, so several engines (or threads)
/// can draw on one budget. Trusted engines ignore it.
///
/// ```
/// use std::time::Duration;
/// use toolshape_schema::{CompileBudget, SchemaEngine};
/// let budget = CompileBudget::new(Duration::from_secs(30));
/// let engine = SchemaEngine::default().with_budget(budget.clone());
/// engine.compile(&serde_json::json!({"type": "object"}))?;
/// assert!(!budget.is_spent());
/// # Ok::<(), toolshape_schema::SchemaError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CompileBudget {
    limit: Duration,
    spent: Arc<Mutex<Duration>>,
}

impl CompileBudget {
    /// A budget of `limit` of compile time, none of it spent.
    pub fn new(limit: Duration) -> CompileBudget {
        CompileBudget {
            limit,
            spent: Arc::default(),
        }
    }

    /// The whole budget.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// The compile time spent so far.
    pub fn spent(&self) -> Duration {
        *self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What is left (zero once spent).
    pub fn remaining(&self) -> Duration {
        self.limit.saturating_sub(self.spent())
    }

    /// Whether nothing is left.
    pub fn is_spent(&self) -> bool {
        self.remaining().is_zero()
    }

    /// Adds `took` to what was spent.
    pub(crate) fn spend(&self, took: Duration) {
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        *spent = spent.saturating_add(took);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{SchemaEngine, SchemaErrorKind, Trust};

    fn refused_for_the_budget(outcome: Result<Arc<crate::CompiledSchema>, crate::SchemaError>) {
        match outcome {
            Err(error) => assert!(
                matches!(error.kind(), SchemaErrorKind::ListingTooCostly { .. }),
                "{error}"
            ),
            Ok(_) => panic!("compiled past the budget"),
        }
    }

    #[test]
    fn a_spent_budget_refuses_what_is_not_compiled_yet_and_only_that() {
        let engine = SchemaEngine::default();
        let compiled = json!({"type": "object", "x-n": 1});
        engine.compile(&compiled).expect("compiles");
        let spent = CompileBudget::new(Duration::ZERO);
        let listing = engine.with_budget(spent.clone());
        // Already in the cache: no compile time to draw.
        listing.compile(&compiled).expect("cached");
        let fresh = json!({"type": "object", "x-n": 2});
        refused_for_the_budget(listing.compile(&fresh));
        // Not cached: without the budget (a later listing) it compiles.
        engine.compile(&fresh).expect("compiled later");
        // A trusted engine (an application's own schemas) ignores budgets.
        let trusted = SchemaEngine::builder().trust(Trust::Trusted).build();
        trusted
            .with_budget(spent)
            .compile(&json!({"type": "string"}))
            .expect("trusted");
    }

    #[test]
    fn compiles_draw_on_the_budget_and_patterns_get_only_what_is_left() {
        let engine = SchemaEngine::default();
        let budget = CompileBudget::new(Duration::from_secs(3600));
        engine
            .with_budget(budget.clone())
            .compile(&json!({"type": "string", "pattern": "^a+$"}))
            .expect("compiles");
        assert!(budget.spent() > Duration::ZERO);
        // A pattern that takes far longer than a microsecond to compile,
        // with a microsecond left: the budget's refusal, not the pattern's.
        let almost = CompileBudget::new(Duration::from_micros(1));
        let costly = json!({"type": "string", "pattern": "^(\\p{L}|\\p{N}){64}$"});
        refused_for_the_budget(engine.with_budget(almost.clone()).compile(&costly));
        assert!(almost.is_spent());
        // With time left it compiles (the refusal was not cached).
        engine
            .compile(&costly)
            .expect("compiles without the budget");
    }

    #[test]
    fn clones_share_what_was_spent() {
        let budget = CompileBudget::new(Duration::from_millis(10));
        let clone = budget.clone();
        clone.spend(Duration::from_millis(4));
        assert_eq!(budget.remaining(), Duration::from_millis(6));
        budget.spend(Duration::from_millis(7));
        assert!(clone.is_spent());
        assert_eq!(clone.remaining(), Duration::ZERO);
        budget.spend(Duration::MAX);
        assert_eq!(budget.spent(), Duration::MAX);
    }
}
