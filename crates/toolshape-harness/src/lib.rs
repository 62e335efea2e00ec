//! Purpose-made MCP servers and clients for toolshape's own tests,
//! conformance runs and benchmarks; not published. Each binary in
//! `src/bin/` says what it is for:
//!
//! | binary | what |
//! | --- | --- |
//! | `test_server` | tools that sleep, block, fail, panic, time out, report progress, return every output shape: the stdio integration tests |
//! | `hostile_server` | a server that breaks every rule a client must survive (and answers twice, floods, dies, stops reading): the client tests; with `--check-defects`, one planted defect per rule of `toolshape check` (its tests) |
//! | `wide_server` | 20 read-only tools (`--tools N`): timing `toolshape check` (`scripts/check-bench.sh`) |
//! | `conformance_server`, `conformance_client` | what the official conformance suite drives (`conformance/run.sh`) |
//! | `peer_server` | the peers' two tools (`add`, `get_weather_data`) on toolshape: the side-by-side benchmark |
//! | `soak` | the soaks of `scripts/soak.sh`: a million pipelined stdio calls, HTTP clients by the dozen, abandoned sessions, every call accounted for and the server's memory measured |
//! | `oauth_test_server` | a test OAuth authorization server that approves at once: the OAuth client tests and the TypeScript SDK interop (`interop/auth/`) |
//! | `echo_baseline`, `canned_baseline` | the benchmark's baselines: a JSON echo, and a process that answers every line with a precomputed response |

pub mod asking;
pub mod changing;
pub mod conformance;
pub mod early_roots;
pub mod url_elicitation;
