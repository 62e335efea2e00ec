//! Paging a list that is worked out per request (resources, templates,
//! prompts): the cursor is the position of the next page, opaque to clients.

use toolshape_protocol::ErrorObject;

const PREFIX: &str = "at:";

/// One page of `items` starting at `cursor`, and the cursor of the next:
/// only the page's items are copied (the others are counted and skipped).
pub(crate) fn page<'a, T, I>(
    items: I,
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorObject>
where
    T: Clone + 'a,
    I: Iterator<Item = &'a T> + Clone,
{
    let count = items.clone().count();
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix(PREFIX)
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= count)
            .ok_or_else(|| ErrorObject::invalid_params("the cursor is not one this server gave"))?,
    };
    let end = start.saturating_add(size.max(1)).min(count);
    let next = (end < count).then(|| format!("{PREFIX}{end}"));
    let page = items.skip(start).take(end - start).cloned().collect();
    Ok((page, next))
}

#[cfg(test)]
mod tests {
    use super::page;

    #[test]
    fn pages_follow_each_other_and_bad_cursors_are_refused() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(items.iter(), None, 2).unwrap_or_default();
        assert_eq!(first, vec![0, 1]);
        let (second, next) = page(items.iter(), next.as_deref(), 2).unwrap_or_default();
        assert_eq!(second, vec![2, 3]);
        let (last, next) = page(items.iter(), next.as_deref(), 2).unwrap_or_default();
        assert_eq!((last, next), (vec![4], None));
        for bad in ["", "at:9", "at:x", "5"] {
            assert!(page(items.iter(), Some(bad), 2).is_err(), "{bad}");
        }
    }

    /// Counts its copies.
    struct Counted<'c>(&'c std::cell::Cell<usize>);

    impl Clone for Counted<'_> {
        fn clone(&self) -> Self {
            self.0.set(self.0.get() + 1);
            Counted(self.0)
        }
    }

    #[test]
    fn a_page_copies_only_its_own_items() {
        let copies = std::cell::Cell::new(0);
        let items: Vec<Counted<'_>> = (0..10_000).map(|_| Counted(&copies)).collect();
        let cursor = format!("at:{}", 9_950);
        let (page, next) = page(items.iter(), Some(&cursor), 100).unwrap_or_default();
        assert_eq!((page.len(), next), (50, None));
        assert_eq!(copies.get(), 50);
    }
}
