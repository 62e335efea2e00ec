//! Following a paginated listing (`tools/list`, `resources/list`, ...) to its
//! end, within bounds: a server controls how many pages it sends and what is
//! on them, so the client stops at a number of pages, of items and of bytes,
//! and at a cursor it was given before.

use std::collections::HashSet;

use super::error::{ClientError, ClientErrorKind};

/// Most pages one listing follows.
pub(crate) const MAX_PAGES: usize = 10_000;

/// Most tools one listing holds (each is registered and its schemas compiled
/// on use; the OTC client keeps the same bound).
pub(crate) const MAX_TOOLS: usize = 10_000;

/// Most resources, templates or prompts one listing holds.
pub(crate) const MAX_ITEMS: usize = 100_000;

/// Most bytes of results one listing reads, all its pages together, unless
/// one message may be larger (`ClientOptions::max_message_bytes`).
pub(crate) const MAX_LISTING_BYTES: usize = 64 * 1024 * 1024;

/// Which bound a listing went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListingBound {
    /// Pages followed.
    Pages(usize),
    /// Items listed.
    Items(usize),
    /// Bytes of the pages' results together.
    Bytes(usize),
}

impl std::fmt::Display for ListingBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListingBound::Pages(limit) => write!(f, "{limit} pages"),
            ListingBound::Items(limit) => write!(f, "{limit} items"),
            ListingBound::Bytes(limit) => write!(f, "{limit} bytes"),
        }
    }
}

/// The state of one listing as its pages arrive.
pub(crate) struct Pages {
    method: &'static str,
    max_items: usize,
    max_bytes: usize,
    pages: usize,
    items: usize,
    bytes: usize,
    cursors: HashSet<String>,
}

impl Pages {
    /// A listing by `method` of at most `max_items` items, whose pages
    /// together may hold `max_bytes`.
    pub(crate) fn new(method: &'static str, max_items: usize, max_bytes: usize) -> Self {
        Pages {
            method,
            max_items,
            max_bytes,
            pages: 0,
            items: 0,
            bytes: 0,
            cursors: HashSet::new(),
        }
    }

    fn over(&self, bound: ListingBound) -> ClientError {
        ClientErrorKind::ListingOverBounds {
            method: self.method,
            bound,
        }
        .into()
    }

    /// Counts a page's result, `bytes` long, before it is read.
    pub(crate) fn received(&mut self, bytes: usize) -> Result<(), ClientError> {
        self.pages += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.max_bytes {
            return Err(self.over(ListingBound::Bytes(self.max_bytes)));
        }
        Ok(())
    }

    /// Counts the items a page listed.
    pub(crate) fn listed(&mut self, items: usize) -> Result<(), ClientError> {
        self.items = self.items.saturating_add(items);
        if self.items > self.max_items {
            return Err(self.over(ListingBound::Items(self.max_items)));
        }
        Ok(())
    }

    /// Where the next page starts: `None` when the listing is complete.
    /// A cursor given before, or a page past the last allowed, ends it with
    /// an error.
    pub(crate) fn next(&mut self, cursor: Option<String>) -> Result<Option<String>, ClientError> {
        let Some(cursor) = cursor else {
            return Ok(None);
        };
        if self.pages >= MAX_PAGES {
            return Err(self.over(ListingBound::Pages(MAX_PAGES)));
        }
        if !self.cursors.insert(cursor.clone()) {
            return Err(ClientError::invalid(format!(
                "{} repeated a cursor",
                self.method
            )));
        }
        Ok(Some(cursor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(error: ClientError) -> Option<ListingBound> {
        match error.kind() {
            ClientErrorKind::ListingOverBounds { bound, .. } => Some(*bound),
            _ => None,
        }
    }

    #[test]
    fn a_listing_ends_at_a_page_without_a_cursor() {
        let mut pages = Pages::new("tools/list", 10, 100);
        assert!(pages.received(10).is_ok());
        assert!(pages.listed(3).is_ok());
        assert_eq!(pages.next(Some("a".into())).ok(), Some(Some("a".into())));
        assert!(pages.received(10).is_ok());
        assert_eq!(pages.next(None).ok(), Some(None));
    }

    #[test]
    fn every_bound_stops_it() {
        let mut pages = Pages::new("tools/list", 10, 100);
        assert!(pages.listed(10).is_ok());
        assert_eq!(
            pages.listed(1).err().and_then(bound),
            Some(ListingBound::Items(10))
        );
        let mut pages = Pages::new("resources/list", 10, 100);
        assert!(pages.received(100).is_ok());
        assert_eq!(
            pages.received(1).err().and_then(bound),
            Some(ListingBound::Bytes(100))
        );
        let mut pages = Pages::new("prompts/list", usize::MAX, usize::MAX);
        for page in 0..MAX_PAGES {
            assert!(pages.received(1).is_ok());
            let next = pages.next(Some(page.to_string()));
            if page + 1 < MAX_PAGES {
                assert!(next.is_ok(), "page {page}");
            } else {
                assert_eq!(
                    next.err().and_then(bound),
                    Some(ListingBound::Pages(MAX_PAGES))
                );
            }
        }
    }

    #[test]
    fn a_cursor_given_before_stops_it_even_pages_later() {
        let mut pages = Pages::new("resources/list", 10, 100);
        for cursor in ["a", "b"] {
            assert!(pages.received(1).is_ok());
            assert!(pages.next(Some(cursor.into())).is_ok());
        }
        assert!(pages.received(1).is_ok());
        let error = pages.next(Some("a".into())).err();
        assert!(matches!(
            error.as_ref().map(ClientError::kind),
            Some(ClientErrorKind::InvalidResponse(_))
        ));
    }
}
