//! Line framing, JSON-RPC classification and dispatch, end to end: the
//! input is what a peer writes to a server's stdin. Serving must end
//! cleanly, every line of output must be a JSON-RPC response, and every
//! request and invalid message must be answered exactly once (an
//! independent model of the framing says which), nothing else answered.

#![no_main]

use libfuzzer_sys::fuzz_target;
use toolshape_fuzz::{lines, server};

fuzz_target!(|data: &[u8]| {
    let output = server::serve(data);
    let answers = server::responses(&output);
    let expectation = lines::expected(data, server::MAX_MESSAGE_BYTES);
    lines::check(&expectation, &answers);
});
