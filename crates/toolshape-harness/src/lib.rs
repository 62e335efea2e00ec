//! Purpose-made MCP servers and clients for toolshape's own tests,
//! conformance runs and benchmarks; not published. Each binary in
//! `src/bin/` says what it is for:
//!
//! | binary | what |
//! | --- | --- |
//! | `test_server` | tools that sleep, fail, panic, time out, report progress, return every output shape: the stdio integration tests |
//! | `hostile_server` | a server that breaks every rule a client must survive: the client tests |
//! | `conformance_server`, `conformance_client` | what the official conformance suite drives (`conformance/run.sh`) |
//! | `peer_server` | the peers' two tools (`add`, `get_weather_data`) on toolshape: the side-by-side benchmark |
//! | `oauth_test_server` | a test OAuth authorization server that approves at once: the OAuth client tests and the TypeScript SDK interop (`interop/auth/`) |
//! | `echo_baseline`, `canned_baseline` | the benchmark's baselines: a JSON echo, and a process that answers every line with a precomputed response |
