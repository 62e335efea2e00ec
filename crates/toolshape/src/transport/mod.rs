//! Transports: how messages travel. Stdio frames them as newline-delimited JSON.

pub(crate) mod lines;
