//! The expansion-cost estimate: how many subschema evaluations one instance
//! location may cost in the worst case.
//!
//! Every branch of `allOf`/`anyOf`/`oneOf` counts (a failing instance tries them
//! all), references are followed, and recursion is unrolled one instance level
//! at a time down to the deepest instance a validation accepts. Subschemas that
//! apply to children of the instance count once per group of children that can
//! coincide (a property cannot match two `properties` entries, but it can match
//! several `patternProperties`). A chain of levels whose two branches each refer
//! to the level below doubles per level and is caught; so is recursion whose
//! fan-out multiplies per instance level. A reference cycle that never descends
//! into the instance would recurse forever, and is refused outright.

use std::collections::{HashMap, HashSet};

use referencing::{Draft, Resolver, ResourceRef};
use serde_json::Value;

use crate::error::{SchemaError, SchemaErrorKind};
use crate::report::excerpt;
use crate::walk::{self, Applies, ChildGroup, push_segment};

/// Deepest the estimator itself may recurse; it runs on a thread with a large stack.
const MAX_FRAMES: usize = 20_000;

/// Estimates the worst-case evaluations per instance location of the schema `root`.
pub(crate) fn estimate(
    root: &Value,
    resolver: &Resolver<'_>,
    draft: Draft,
    instance_depth: usize,
    limit: u64,
) -> Result<u64, SchemaError> {
    let mut estimator = Estimator {
        memo: HashMap::new(),
        on_stack: HashSet::new(),
        limit,
        frames: 0,
        pointer: String::new(),
    };
    Ok(estimator
        .cost(root, resolver, draft, instance_depth)?
        .total())
}

struct Estimator {
    memo: HashMap<(usize, usize), Cost>,
    on_stack: HashSet<(usize, usize)>,
    limit: u64,
    frames: usize,
    pointer: String,
}

/// The cost of applying one subschema at one instance location.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    /// Evaluations at this location itself.
    here: u64,
    /// The worst a single property of an object instance costs.
    object_child: u64,
    /// The worst a single item of an array instance costs.
    array_child: u64,
}

impl Cost {
    /// The worst case for a chain-shaped instance: this location and its worst child.
    /// A location is either an object or an array, never both.
    fn total(self) -> u64 {
        self.here
            .saturating_add(self.object_child.max(self.array_child))
    }

    /// Adds a subschema applied at the same location: its children apply to the same children.
    fn add_in_place(&mut self, other: Cost) {
        self.here = self.here.saturating_add(other.here);
        self.object_child = self.object_child.saturating_add(other.object_child);
        self.array_child = self.array_child.saturating_add(other.array_child);
    }
}

#[derive(Default)]
struct ChildCosts {
    property: u64,
    pattern_properties: u64,
    other_properties: u64,
    item: u64,
    other_items: u64,
}

impl ChildCosts {
    fn add(&mut self, group: ChildGroup, cost: u64) {
        match group {
            ChildGroup::Property => self.property = self.property.max(cost),
            ChildGroup::PatternProperty => {
                self.pattern_properties = self.pattern_properties.saturating_add(cost)
            }
            ChildGroup::OtherProperty => {
                self.other_properties = self.other_properties.saturating_add(cost)
            }
            ChildGroup::Item => self.item = self.item.max(cost),
            ChildGroup::OtherItem => self.other_items = self.other_items.saturating_add(cost),
        }
    }

    /// The most one property of an object instance costs.
    fn object_child(&self) -> u64 {
        self.property
            .saturating_add(self.pattern_properties)
            .saturating_add(self.other_properties)
    }

    /// The most one item of an array instance costs.
    fn array_child(&self) -> u64 {
        self.item.saturating_add(self.other_items)
    }
}

impl Estimator {
    fn cost(
        &mut self,
        node: &Value,
        resolver: &Resolver<'_>,
        draft: Draft,
        depth: usize,
    ) -> Result<Cost, SchemaError> {
        let Value::Object(map) = node else {
            return Ok(Cost {
                here: 1,
                ..Cost::default()
            });
        };
        let key = (std::ptr::from_ref(node) as usize, depth);
        if let Some(cost) = self.memo.get(&key) {
            return Ok(*cost);
        }
        if !self.on_stack.insert(key) {
            return Err(SchemaErrorKind::ReferenceCycle {
                at: excerpt(&self.pointer, 200),
            }
            .into());
        }
        self.frames += 1;
        if self.frames > MAX_FRAMES {
            return Err(SchemaErrorKind::TooDeep {
                limit: MAX_FRAMES,
                at: excerpt(&self.pointer, 200),
            }
            .into());
        }

        // A subschema with its own `$id` resolves its references against it.
        let draft = draft.detect(node);
        let scoped;
        let resolver = if map.contains_key(draft.id_keyword()) {
            scoped = resolver
                .in_subresource(ResourceRef::new(node, draft))
                .map_err(|e| SchemaErrorKind::Unresolvable(excerpt(&e.to_string(), 200)))?;
            &scoped
        } else {
            resolver
        };

        let mut cost = Cost {
            here: 1,
            ..Cost::default()
        };
        for (keyword, reference) in walk::references(map) {
            // Unresolvable references are reported by the compiler proper.
            let Ok(resolved) = resolver.lookup(reference) else {
                continue;
            };
            let (target, target_resolver, target_draft) = resolved.into_inner();
            let len = self.pointer.len();
            push_segment(&mut self.pointer, keyword);
            let target_cost = self.cost(target, &target_resolver, target_draft, depth)?;
            self.pointer.truncate(len);
            cost.add_in_place(target_cost);
        }

        let mut children = ChildCosts::default();
        let mut result = Ok(());
        walk::for_each_subschema(map, |edge| {
            if result.is_err() {
                return;
            }
            let len = self.pointer.len();
            edge.push_pointer(&mut self.pointer);
            match edge.applies {
                Applies::InPlace => match self.cost(edge.schema, resolver, draft, depth) {
                    Ok(child) => cost.add_in_place(child),
                    Err(e) => result = Err(e),
                },
                Applies::Child(group) if depth > 0 => {
                    match self.cost(edge.schema, resolver, draft, depth - 1) {
                        Ok(child) => children.add(group, child.total()),
                        Err(e) => result = Err(e),
                    }
                }
                Applies::Child(_) | Applies::Definition => {}
            }
            self.pointer.truncate(len);
        });
        result?;
        cost.object_child = cost.object_child.saturating_add(children.object_child());
        cost.array_child = cost.array_child.saturating_add(children.array_child());

        self.frames -= 1;
        self.on_stack.remove(&key);
        if cost.total() > self.limit {
            return Err(SchemaErrorKind::ExpansionTooCostly {
                limit: self.limit,
                at: excerpt(
                    if self.pointer.is_empty() {
                        "/"
                    } else {
                        &self.pointer
                    },
                    200,
                ),
            }
            .into());
        }
        self.memo.insert(key, cost);
        Ok(cost)
    }
}
