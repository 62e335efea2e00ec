#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The client against the hostile server (a child process) listing pages
//! of new tools without end (`--endless`): the listing stops at the client's
//! bounds with a typed error, and the connection goes on.

mod client_common;

use toolshape::client::{ClientError, ClientErrorKind, ListingBound};

use client_common::connect_hostile as hostile;

/// A server that pages without end is stopped at the client's bounds: a
/// listing of more tools than it keeps, of more bytes, or of more pages.
#[tokio::test]
async fn an_endless_listing_stops_at_the_bounds() {
    let cases: [(&[&str], ListingBound); 3] = [
        (
            &["--endless", "10", "--page-size", "1000"],
            ListingBound::Items(10_000),
        ),
        (
            &["--endless", "1048576", "--page-size", "10"],
            ListingBound::Bytes(64 * 1024 * 1024),
        ),
        (
            &["--endless", "0", "--page-size", "1"],
            ListingBound::Pages(10_000),
        ),
    ];
    for (args, expected) in cases {
        let client = hostile(args).await;
        let over = |error: ClientError| match error.kind() {
            ClientErrorKind::ListingOverBounds { method, bound } => {
                assert_eq!((*method, *bound), ("tools/list", expected), "{args:?}");
            }
            other => panic!("{args:?}: {other}"),
        };
        over(client.list_tools().await.unwrap_err());
        // The connection goes on; a call, which needs the tool's listed
        // schemas, lists again and fails the same way.
        over(client.call_tool("ok", None).await.unwrap_err());
    }
}
