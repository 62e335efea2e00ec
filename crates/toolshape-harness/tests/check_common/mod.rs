//! Shared by the `check_*` integration tests: the hostile server as a
//! check's target, and options checking it quickly.

#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use toolshape_check::{CallPolicy, Options, ProtocolChoice, Target};

use super::client_common::hostile_server_bin;

/// The hostile server started with `args`.
pub fn target(args: &[&str]) -> Target {
    let mut argv = vec![hostile_server_bin().display().to_string()];
    argv.extend(args.iter().map(|a| (*a).to_owned()));
    Target::stdio(&argv).unwrap()
}

/// Checking `protocol`, calling per `calls`, with short call timeouts.
pub fn options(protocol: ProtocolChoice, calls: CallPolicy) -> Options {
    let mut options = Options::default();
    options.protocol = protocol;
    options.calls = calls;
    options.call_timeout = Duration::from_secs(1);
    options.max_call_time = Duration::from_secs(5);
    options
}
