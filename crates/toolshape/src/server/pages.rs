//! Paging a list that is worked out per request (resources, templates,
//! prompts): the cursor is the position of the next page, opaque to clients.

use toolshape_protocol::ErrorObject;

const PREFIX: &str = "at:";

/// One page of `items` starting at `cursor`, and the cursor of the next.
pub(crate) fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix(PREFIX)
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= items.len())
            .ok_or_else(|| ErrorObject::invalid_params("the cursor is not one this server gave"))?,
    };
    let end = start.saturating_add(size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| format!("{PREFIX}{end}"));
    Ok((items[start..end].to_vec(), next))
}

#[cfg(test)]
mod tests {
    use super::page;

    #[test]
    fn pages_follow_each_other_and_bad_cursors_are_refused() {
        let items: Vec<u32> = (0..5).collect();
        let (first, next) = page(&items, None, 2).unwrap_or_default();
        assert_eq!(first, vec![0, 1]);
        let (second, next) = page(&items, next.as_deref(), 2).unwrap_or_default();
        assert_eq!(second, vec![2, 3]);
        let (last, next) = page(&items, next.as_deref(), 2).unwrap_or_default();
        assert_eq!((last, next), (vec![4], None));
        for bad in ["", "at:9", "at:x", "5"] {
            assert!(page(&items, Some(bad), 2).is_err(), "{bad}");
        }
    }
}
