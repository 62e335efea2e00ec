//! Transports: how messages travel. Stdio frames them as newline-delimited
//! JSON; Streamable HTTP carries one per POST, answered as JSON or as an SSE
//! stream.

pub(crate) mod lines;
#[cfg(any(feature = "server-http", feature = "client-http"))]
pub(crate) mod sse;
pub(crate) mod stdio;
