#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `LoopbackConsent` over real sockets: an idle connection (a browser's
//! speculative one) and other paths do not hold up the callback, an
//! absolute-form request target is not taken for it, a callback with
//! another `state` is discarded and the wait goes on, and the callback's URL
//! comes back whole.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolshape_auth::client::{Consent, LoopbackConsent};

async fn get(address: &str, target: &str) -> String {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let request = format!("GET {target} HTTP/1.1\r\nhost: {address}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer
}

#[tokio::test]
async fn the_callback_comes_through_idle_and_stray_connections() {
    let consent = LoopbackConsent::bind(0)
        .unwrap()
        .open_browser(false)
        .timeout(Duration::from_secs(20));
    let redirect = consent.redirect_uri().clone();
    assert_eq!(redirect.path(), "/callback");
    assert_eq!(redirect.host_str(), Some("127.0.0.1"));
    let address = format!("127.0.0.1:{}", redirect.port().unwrap());
    let authorization = url::Url::parse("https://as.example/authorize?x=1&state=s-1").unwrap();

    let browser = {
        let address = address.clone();
        tokio::spawn(async move {
            // Opened ahead and never used.
            let _idle = TcpStream::connect(&address).await.unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
            let stray = get(&address, "/favicon.ico").await;
            assert!(stray.starts_with("HTTP/1.1 404"), "{stray}");
            let absolute = get(&address, "http://evil.example/callback?code=bad").await;
            assert!(absolute.starts_with("HTTP/1.1 404"), "{absolute}");
            let network_path = get(&address, "//evil.example/callback?code=bad&state=s-1").await;
            assert!(network_path.starts_with("HTTP/1.1 404"), "{network_path}");
            // Another authorization's callback (or a guess) is discarded.
            let stale = get(&address, "/callback?code=old&state=s-0").await;
            assert!(stale.starts_with("HTTP/1.1 400"), "{stale}");
            let stateless = get(&address, "/callback?error=access_denied").await;
            assert!(stateless.starts_with("HTTP/1.1 400"), "{stateless}");
            let done = get(
                &address,
                "/callback?code=c-1&state=s-1&iss=https%3A%2F%2Fas.example",
            )
            .await;
            assert!(done.starts_with("HTTP/1.1 200"), "{done}");
            // Kept until the consent finished.
            tokio::time::sleep(Duration::from_millis(500)).await;
        })
    };
    let started = Instant::now();
    let callback = consent.authorize(&authorization).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "held up for {:?}",
        started.elapsed()
    );
    let pairs: Vec<(String, String)> = callback.query_pairs().into_owned().collect();
    assert_eq!(
        pairs,
        [
            ("code".to_owned(), "c-1".to_owned()),
            ("state".to_owned(), "s-1".to_owned()),
            ("iss".to_owned(), "https://as.example".to_owned()),
        ]
    );
    browser.await.unwrap();
}
