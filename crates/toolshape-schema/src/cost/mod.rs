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

mod location;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use referencing::{Draft, Resolver, ResourceRef};
use serde_json::Value;

use crate::error::{SchemaError, SchemaErrorKind};
use crate::limits::Limits;
use crate::report::excerpt;
use crate::walk::{self, Applies, push_segment};
use location::Cost;

/// Deepest the estimator itself may recurse; it runs on a thread with a large stack.
const MAX_FRAMES: usize = 20_000;

/// Longest chain of subschemas applied at one instance location (each
/// inside the one before, through `$ref`s or in-place keywords): a
/// validation recurses that deep at each level of the instance.
pub(crate) const MAX_CHAIN: usize = 256;

/// What a schema may cost to validate, worked out before it is compiled.
pub(crate) struct Estimate<'r> {
    /// Worst-case subschema evaluations per instance location.
    pub(crate) expansion: u64,
    /// Longest chain of subschemas applied at any one instance location
    /// (a validation recurses at most this deep, plus one, per level of
    /// the instance).
    pub(crate) chain: usize,
    /// Whether it holds a keyword whose work grows faster than the
    /// instance (`uniqueItems`, a `regex` format).
    pub(crate) superlinear: bool,
    /// The subschemas met only through references, outside the places
    /// the walk of the document reaches (not in `walked`), with a path to each.
    pub(crate) referenced: Vec<(&'r Value, String)>,
}

/// Estimates the worst-case evaluations per instance location of the
/// schema `root`; `walked` holds the addresses of the subschemas the walk
/// of its document met.
pub(crate) fn estimate<'r>(
    root: &'r Value,
    resolver: &Resolver<'r>,
    draft: Draft,
    limits: &Limits,
    walked: &'r HashSet<usize>,
) -> Result<Estimate<'r>, SchemaError> {
    let mut anchors = Anchors::default();
    anchors.collect(root, resolver, draft, 0)?;
    let mut estimator = Estimator {
        memo: HashMap::new(),
        on_stack: HashSet::new(),
        limit: limits.max_expansion,
        max_steps: limits.max_estimate_steps,
        frames: 0,
        in_place: 0,
        pointer: String::new(),
        anchors,
        group_costs: HashMap::new(),
        walked,
        met: HashSet::new(),
        referenced: Vec::new(),
        max_referenced: limits.max_subschemas.saturating_sub(walked.len()),
        superlinear: false,
        longest_chain: 0,
    };
    let cost = estimator.cost(root, resolver, draft, limits.max_instance_depth)?;
    Ok(Estimate {
        expansion: cost.total(),
        chain: estimator.longest_chain,
        superlinear: estimator.superlinear,
        referenced: estimator.referenced,
    })
}

/// What one evaluation of `schema` costs at its location beyond the
/// evaluation itself: a comparison per `enum` value and per `required`
/// name, and a `multipleOf` that is not a whole number (exact decimal
/// arithmetic on any float).
fn keyword_weight(schema: &serde_json::Map<String, Value>) -> u64 {
    let listed = |keyword: &str| match schema.get(keyword) {
        Some(Value::Array(values)) => values.len() as u64,
        _ => 0,
    };
    let fraction = match schema.get("multipleOf") {
        Some(Value::Number(number)) if number.as_u64().is_none() => 64,
        _ => 0,
    };
    listed("enum")
        .saturating_add(listed("required"))
        .saturating_add(fraction)
}

/// Whether `schema` holds a keyword whose work grows faster than the
/// instance it checks.
fn is_superlinear(schema: &serde_json::Map<String, Value>) -> bool {
    schema.get("uniqueItems") == Some(&Value::Bool(true))
        || schema.get("format").and_then(Value::as_str) == Some("regex")
}

/// Each subschema's cost at each instance depth is computed once and shared
/// (a recursive schema such as the meta-schema is met at every depth).
struct Estimator<'r> {
    memo: HashMap<(usize, usize), Rc<Cost<'r>>>,
    on_stack: HashSet<(usize, usize)>,
    limit: u64,
    /// Most costs worked out (memo entries) before the schema is refused.
    max_steps: usize,
    frames: usize,
    /// How many subschemas deep the estimate is at the current instance
    /// location (the chain it is in, bounded by [`MAX_CHAIN`]).
    in_place: usize,
    pointer: String,
    anchors: Anchors<'r>,
    /// The worst cost of each group of anchors at each depth, worked out
    /// once: every dynamic reference to the group shares it.
    group_costs: HashMap<(Group<'r>, usize), Option<Rc<Cost<'r>>>>,
    /// The addresses of the subschemas the walk of the document met.
    walked: &'r HashSet<usize>,
    /// The addresses of the subschemas met here.
    met: HashSet<usize>,
    /// Those met here and not by the walk, with a path to each.
    referenced: Vec<(&'r Value, String)>,
    /// The most of those before the subschema limit is passed.
    max_referenced: usize,
    /// Whether a subschema met holds a superlinear keyword.
    superlinear: bool,
    /// The longest chain of any subschema met (at any instance location).
    longest_chain: usize,
}

/// The anchors a dynamic reference may land on in some other scope.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Group<'r> {
    /// Every resource root with `$recursiveAnchor: true`.
    Recursive,
    /// Every `$dynamicAnchor` of this name.
    Dynamic(&'r str),
}

/// The resolver inside `node` when it has an `$id` of its own (its
/// references resolve against it); `None` when it has none.
fn within<'r>(
    node: &'r Value,
    draft: Draft,
    resolver: &Resolver<'r>,
) -> Result<Option<Resolver<'r>>, SchemaError> {
    if node.get(draft.id_keyword()).is_none() {
        return Ok(None);
    }
    resolver
        .in_subresource(ResourceRef::new(node, draft))
        .map(Some)
        .map_err(|e| SchemaErrorKind::Unresolvable(excerpt(&e.to_string(), 200)).into())
}

/// A subschema with what it takes to estimate it: the resolver for its
/// place (its base URI) and its draft.
#[derive(Clone)]
struct Placed<'r> {
    schema: &'r Value,
    resolver: Resolver<'r>,
    draft: Draft,
}

/// Where the document's dynamic references may land, whatever the dynamic
/// scope: every resource root with `$recursiveAnchor: true` (2019-09) and
/// every subschema with a `$dynamicAnchor` (2020-12), by name. A cost is
/// memoized per subschema and depth, not per dynamic scope, so a dynamic
/// reference counts as the worst of all the places it could land (the
/// engine compiles one target per scope it meets).
#[derive(Default)]
struct Anchors<'r> {
    recursive: Vec<Placed<'r>>,
    dynamic: HashMap<&'r str, Vec<Placed<'r>>>,
}

impl<'r> Anchors<'r> {
    fn collect(
        &mut self,
        node: &'r Value,
        resolver: &Resolver<'r>,
        draft: Draft,
        depth: usize,
    ) -> Result<(), SchemaError> {
        let Value::Object(map) = node else {
            return Ok(());
        };
        if depth > MAX_FRAMES {
            return Err(SchemaErrorKind::TooDeep {
                limit: MAX_FRAMES,
                at: String::new(),
            }
            .into());
        }
        let draft = draft.detect(node);
        let is_resource = depth == 0 || map.contains_key(draft.id_keyword());
        let scoped = within(node, draft, resolver)?;
        let resolver = scoped.as_ref().unwrap_or(resolver);
        let placed = || Placed {
            schema: node,
            resolver: resolver.clone(),
            draft,
        };
        // Each in the one draft that has it, as the engine reads them.
        if draft == Draft::Draft201909
            && is_resource
            && map.get("$recursiveAnchor") == Some(&Value::Bool(true))
        {
            self.recursive.push(placed());
        }
        if draft == Draft::Draft202012
            && let Some(Value::String(name)) = map.get("$dynamicAnchor")
        {
            self.dynamic
                .entry(name.as_str())
                .or_default()
                .push(placed());
        }
        let mut result = Ok(());
        walk::for_each_subschema(map, |edge| {
            if result.is_ok() {
                result = self.collect(edge.schema, resolver, draft, depth + 1);
            }
        });
        result
    }
}

impl<'r> Estimator<'r> {
    /// What a `$recursiveRef` costs where it stands. Only draft 2019-09 has
    /// the keyword (elsewhere the engine ignores it), and only as `#`, any
    /// other value is refused. The engine reads `#` through the dynamic
    /// scope (the outermost resource with `$recursiveAnchor`), or, when a
    /// `$ref` to the same resource was compiled first, as that `$ref`'s
    /// target: the worse of the two counts.
    fn recursive_ref(
        &mut self,
        reference: &str,
        resolver: &Resolver<'r>,
        draft: Draft,
        depth: usize,
    ) -> Result<Option<Rc<Cost<'r>>>, SchemaError> {
        if draft != Draft::Draft201909 {
            return Ok(None);
        }
        if reference != "#" {
            return Err(SchemaErrorKind::UndefinedRecursiveRef {
                value: excerpt(reference, 100),
                at: excerpt(&self.pointer, 200),
            }
            .into());
        }
        let mut places = Vec::new();
        let mut anchored = false;
        let targets = [resolver.lookup("#"), resolver.lookup_recursive_ref()];
        for resolved in targets.into_iter().flatten() {
            let (schema, resolver, draft) = resolved.into_inner();
            anchored |= schema.get("$recursiveAnchor") == Some(&Value::Bool(true));
            places.push(Placed {
                schema,
                resolver,
                draft,
            });
        }
        // Only a root with `$recursiveAnchor` sends it on through the scope.
        let group = anchored.then_some(Group::Recursive);
        self.worst_of(places, group, depth)
    }

    /// What a `$ref` or `$dynamicRef` costs where it stands: its target in
    /// this dynamic scope, and, for a reference to an anchor by a name some
    /// `$dynamicAnchor` has, every subschema with that anchor (its target in
    /// some other scope: a lookup that meets a dynamic anchor goes through
    /// the scope, whichever keyword made it).
    fn by_reference(
        &mut self,
        reference: &str,
        resolver: &Resolver<'r>,
        depth: usize,
    ) -> Result<Option<Rc<Cost<'r>>>, SchemaError> {
        let name = reference.rsplit_once('#').map(|(_, fragment)| fragment);
        let name = name.filter(|name| !name.is_empty() && !name.starts_with('/'));
        // The group's own name, borrowed from the schema like its anchors.
        let group = name
            .and_then(|name| self.anchors.dynamic.get_key_value(name))
            .map(|(name, _)| Group::Dynamic(name));
        let target = resolver.lookup(reference).ok().map(|resolved| {
            let (schema, resolver, draft) = resolved.into_inner();
            Placed {
                schema,
                resolver,
                draft,
            }
        });
        match (target, group) {
            // The usual reference: its one target, shared as it is.
            (Some(target), None) => Ok(Some(self.cost(
                target.schema,
                &target.resolver,
                target.draft,
                depth,
            )?)),
            (target, group) => self.worst_of(target.into_iter().collect(), group, depth),
        }
    }

    /// The worst cost, at `depth`, of the places a reference may land: the
    /// `places` looked up here and the anchors of `group`. A place met
    /// twice is a memo hit.
    fn worst_of(
        &mut self,
        places: Vec<Placed<'r>>,
        group: Option<Group<'r>>,
        depth: usize,
    ) -> Result<Option<Rc<Cost<'r>>>, SchemaError> {
        let mut worst: Option<Cost<'r>> = None;
        let mut costs = Vec::with_capacity(places.len() + 1);
        for place in places {
            costs.push(self.cost(place.schema, &place.resolver, place.draft, depth)?);
        }
        if let Some(group) = group
            && let Some(cost) = self.group_cost(group, depth)?
        {
            costs.push(cost);
        }
        for cost in costs {
            match &mut worst {
                Some(worst) => worst.max_with(&cost),
                None => worst = Some(Cost::clone(&cost)),
            }
        }
        Ok(worst.map(Rc::new))
    }

    /// The worst cost of a group's anchors at `depth`, worked out once.
    fn group_cost(
        &mut self,
        group: Group<'r>,
        depth: usize,
    ) -> Result<Option<Rc<Cost<'r>>>, SchemaError> {
        if let Some(known) = self.group_costs.get(&(group, depth)) {
            return Ok(known.clone());
        }
        let places: Vec<Placed<'r>> = match group {
            Group::Recursive => self.anchors.recursive.clone(),
            Group::Dynamic(name) => self.anchors.dynamic.get(name).cloned().unwrap_or_default(),
        };
        let worst = self.worst_of(places, None, depth)?;
        self.group_costs.insert((group, depth), worst.clone());
        Ok(worst)
    }

    /// Notes the subschema `node` (its map `map`) as met: one the walk of
    /// the document did not meet is kept, with a short path to it, for its
    /// count and patterns to be checked ([`Estimate::referenced`]).
    fn meet(
        &mut self,
        node: &'r Value,
        map: &serde_json::Map<String, Value>,
    ) -> Result<(), SchemaError> {
        let address = std::ptr::from_ref(node) as usize;
        if self.met.insert(address) && !self.walked.contains(&address) {
            if self.referenced.len() >= self.max_referenced {
                return Err(SchemaErrorKind::TooManySubschemas {
                    limit: self.walked.len().saturating_add(self.max_referenced),
                }
                .into());
            }
            self.referenced.push((node, excerpt(&self.pointer, 200)));
        }
        self.superlinear |= is_superlinear(map);
        Ok(())
    }

    /// Meets `root` and every subschema it reaches, through its keywords
    /// and references, without estimating them (each once).
    fn meet_all(
        &mut self,
        root: &'r Value,
        resolver: &Resolver<'r>,
        draft: Draft,
    ) -> Result<(), SchemaError> {
        let mut pending = vec![(root, resolver.clone(), draft)];
        while let Some((node, resolver, draft)) = pending.pop() {
            let Value::Object(map) = node else { continue };
            if self.met.contains(&(std::ptr::from_ref(node) as usize)) {
                continue;
            }
            self.meet(node, map)?;
            let draft = draft.detect(node);
            let resolver = within(node, draft, &resolver)?.unwrap_or(resolver);
            for (_, reference) in walk::references(map) {
                if let Ok(resolved) = resolver.lookup(reference) {
                    let (target, target_resolver, target_draft) = resolved.into_inner();
                    pending.push((target, target_resolver, target_draft));
                }
            }
            walk::for_each_subschema(map, |edge| {
                pending.push((edge.schema, resolver.clone(), draft));
            });
        }
        Ok(())
    }

    fn cost(
        &mut self,
        node: &'r Value,
        resolver: &Resolver<'r>,
        draft: Draft,
        depth: usize,
    ) -> Result<Rc<Cost<'r>>, SchemaError> {
        let Value::Object(map) = node else {
            return Ok(Rc::new(Cost::leaf()));
        };
        let key = (std::ptr::from_ref(node) as usize, depth);
        if let Some(cost) = self.memo.get(&key) {
            return Ok(Rc::clone(cost));
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

        self.meet(node, map)?;
        let draft = draft.detect(node);
        let scoped = within(node, draft, resolver)?;
        let resolver = scoped.as_ref().unwrap_or(resolver);

        let mut cost = Cost::leaf();
        cost.here = cost.here.saturating_add(keyword_weight(map));
        // Each subschema below at this location is one more in the chain.
        self.in_place += 1;
        if self.in_place > MAX_CHAIN {
            return Err(SchemaErrorKind::ReferenceChainTooLong {
                limit: MAX_CHAIN,
                at: excerpt(&self.pointer, 200),
            }
            .into());
        }
        for (keyword, reference) in walk::references(map) {
            let len = self.pointer.len();
            push_segment(&mut self.pointer, keyword);
            let target_cost = match keyword {
                "$recursiveRef" => self.recursive_ref(reference, resolver, draft, depth)?,
                // Only 2020-12 has it; elsewhere the engine ignores it.
                "$dynamicRef" if draft != Draft::Draft202012 => None,
                // `$ref` and `$dynamicRef` (either may meet a dynamic
                // anchor); an unresolvable one is reported by the compiler.
                _ => self.by_reference(reference, resolver, depth)?,
            };
            self.pointer.truncate(len);
            if let Some(target_cost) = target_cost {
                cost.add_in_place(&target_cost);
            }
        }

        let mut items = (0u64, 0u64);
        let mut result = Ok(());
        walk::for_each_subschema(map, |edge| {
            if result.is_err() {
                return;
            }
            let len = self.pointer.len();
            edge.push_pointer(&mut self.pointer);
            match edge.applies {
                Applies::InPlace => match self.cost(edge.schema, resolver, draft, depth) {
                    Ok(child) => cost.add_in_place(&child),
                    Err(e) => result = Err(e),
                },
                Applies::Child(group) if depth > 0 => {
                    // A child of the instance starts a chain of its own.
                    let chained = std::mem::take(&mut self.in_place);
                    match self.cost(edge.schema, resolver, draft, depth - 1) {
                        Ok(child) => cost.add_child(group, edge.key, child.total(), &mut items),
                        Err(e) => result = Err(e),
                    }
                    self.in_place = chained;
                }
                // Past the deepest instance: not estimated, but compiled by
                // the validator all the same, so met.
                Applies::Child(_) => result = self.meet_all(edge.schema, resolver, draft),
                Applies::Definition => {}
            }
            self.pointer.truncate(len);
        });
        result?;
        cost.array_child = cost
            .array_child
            .saturating_add(items.0.saturating_add(items.1));

        self.frames -= 1;
        self.in_place -= 1;
        self.on_stack.remove(&key);
        // (Memo hits do not count in `in_place`: the chain assembled from
        // them is checked here.)
        if cost.chain > MAX_CHAIN {
            return Err(SchemaErrorKind::ReferenceChainTooLong {
                limit: MAX_CHAIN,
                at: excerpt(&self.pointer, 200),
            }
            .into());
        }
        self.longest_chain = self.longest_chain.max(cost.chain);
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
        let cost = Rc::new(cost);
        self.memo.insert(key, Rc::clone(&cost));
        if self.memo.len() > self.max_steps {
            return Err(SchemaErrorKind::EstimateTooCostly {
                limit: self.max_steps,
            }
            .into());
        }
        Ok(cost)
    }
}
