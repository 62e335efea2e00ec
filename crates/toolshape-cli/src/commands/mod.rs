//! One module per subcommand.

/// The most seconds any time flag takes (a year): a longer one would
/// overflow the clock's arithmetic, and means "no limit" anyway.
pub(crate) const MAX_SECONDS: u64 = 365 * 24 * 60 * 60;

pub(crate) mod ask;
pub(crate) mod bench;
pub(crate) mod call;
pub(crate) mod check;
pub(crate) mod connect;
pub(crate) mod fronts;
pub(crate) mod headers;
pub(crate) mod oauth;
pub(crate) mod otc;
pub(crate) mod proxy;
pub(crate) mod serve;
pub(crate) mod signals;
pub(crate) mod terminal;
pub(crate) mod tools;
pub(crate) mod visits;
