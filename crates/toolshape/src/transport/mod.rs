//! Transports: how messages travel. Stdio frames them as newline-delimited
//! JSON; Streamable HTTP carries one per POST, answered as JSON or as an SSE
//! stream. Writes to a peer that stopped reading give up after a while
//! ([`stall`]).

pub(crate) mod lines;
#[cfg(any(feature = "server-http", feature = "client-http"))]
pub(crate) mod sse;
pub(crate) mod stall;
pub(crate) mod stdio;
