//! One module per subcommand.

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
pub(crate) mod terminal;
pub(crate) mod tools;
pub(crate) mod visits;
