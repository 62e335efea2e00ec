//! What applying one subschema at one instance location costs: at the
//! location itself, per child of the instance, and the chain it heads.

use crate::walk::{ChildGroup, Key};

/// The cost of applying one subschema at one instance location.
#[derive(Debug, Clone, Default)]
pub(super) struct Cost<'r> {
    /// Evaluations at this location itself.
    pub(super) here: u64,
    /// Per property name: what a child of that name costs (`properties`).
    /// Subschemas applied at the same location add up per name, so branches
    /// that recurse into differently named properties do not compound. The
    /// names are borrowed from the schemas, kept sorted (merged in one pass).
    named: Vec<(&'r str, u64)>,
    /// What any property costs on top (`patternProperties`,
    /// `additionalProperties`, `unevaluatedProperties`, `propertyNames`).
    any_property: u64,
    /// The worst a single item of an array instance costs.
    pub(super) array_child: u64,
    /// The longest chain of subschemas applied here, this one included.
    pub(super) chain: usize,
}

impl<'r> Cost<'r> {
    pub(super) fn leaf() -> Self {
        Cost {
            here: 1,
            chain: 1,
            ..Cost::default()
        }
    }

    /// The worst case for a chain-shaped instance: this location and its worst child.
    /// A location is either an object or an array, never both.
    pub(super) fn total(&self) -> u64 {
        let worst_named = self.named.iter().map(|(_, cost)| *cost).max().unwrap_or(0);
        let object_child = worst_named.saturating_add(self.any_property);
        self.here.saturating_add(object_child.max(self.array_child))
    }

    /// Adds a subschema applied at the same location, inside this one: its
    /// children apply to the same children.
    pub(super) fn add_in_place(&mut self, other: &Cost<'r>) {
        self.here = self.here.saturating_add(other.here);
        self.chain = self.chain.max(other.chain.saturating_add(1));
        if self.named.is_empty() {
            self.named.clone_from(&other.named);
        } else if !other.named.is_empty() {
            self.named = merge(&self.named, &other.named, u64::saturating_add);
        }
        self.any_property = self.any_property.saturating_add(other.any_property);
        self.array_child = self.array_child.saturating_add(other.array_child);
    }

    /// Takes the worse of this cost and `other`, part by part: an upper
    /// bound of either, for a place that applies one of the two.
    pub(super) fn max_with(&mut self, other: &Cost<'r>) {
        self.here = self.here.max(other.here);
        self.chain = self.chain.max(other.chain);
        self.named = merge(&self.named, &other.named, u64::max);
        self.any_property = self.any_property.max(other.any_property);
        self.array_child = self.array_child.max(other.array_child);
    }

    /// Adds what a child subschema costs, by the group of children it applies to.
    pub(super) fn add_child(
        &mut self,
        group: ChildGroup,
        key: Option<Key<'r>>,
        cost: u64,
        items: &mut (u64, u64),
    ) {
        match (group, key) {
            (ChildGroup::Property, Some(Key::Name(name))) => {
                match self.named.binary_search_by(|(known, _)| (*known).cmp(name)) {
                    Ok(at) => self.named[at].1 = self.named[at].1.max(cost),
                    Err(at) => self.named.insert(at, (name, cost)),
                }
            }
            (ChildGroup::Property | ChildGroup::PatternProperty | ChildGroup::OtherProperty, _) => {
                self.any_property = self.any_property.saturating_add(cost);
            }
            (ChildGroup::Item, _) => items.0 = items.0.max(cost),
            (ChildGroup::OtherItem, _) => items.1 = items.1.saturating_add(cost),
        }
    }
}

/// Two sorted per-name costs combined name by name (a name only one has
/// keeps its cost).
fn merge<'r>(
    a: &[(&'r str, u64)],
    b: &[(&'r str, u64)],
    combine: fn(u64, u64) -> u64,
) -> Vec<(&'r str, u64)> {
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => match x.0.cmp(y.0) {
                std::cmp::Ordering::Less => a.next().copied(),
                std::cmp::Ordering::Greater => b.next().copied(),
                std::cmp::Ordering::Equal => {
                    let (x, y) = (a.next(), b.next());
                    x.zip(y).map(|(x, y)| (x.0, combine(x.1, y.1)))
                }
            },
            (Some(_), None) => a.next().copied(),
            (None, Some(_)) => b.next().copied(),
            (None, None) => None,
        };
        match next {
            Some(entry) => merged.push(entry),
            None => return merged,
        }
    }
}
