//! A test authorization server (OAuth 2.1) on loopback, for the OAuth
//! tests and the interop run with the official TypeScript SDK client. Test
//! infrastructure, not a product: it approves every authorization request
//! at once (no login page), keeps everything in memory, and signs JWT
//! access tokens with an ES256 key made at start.
//!
//! ```text
//! oauth_test_server [--port N] [--token-lifetime SECS] [--scope S]... [--client ID:SECRET]...
//! ```
//!
//! Prints `listening on http://127.0.0.1:<port>` on stdout once ready. It
//! serves RFC 8414 metadata, a JWK Set (`/jwks`), dynamic registration
//! (`/register`), `/authorize` (PKCE S256 required, `iss` in the redirect),
//! `/token` (authorization code, refresh token, client credentials; the
//! `resource` parameter required and made the token's `aud`), and `/stats`
//! (how many of each request it answered).

mod endpoints;
mod state;

use std::process::ExitCode;
use std::sync::Arc;

use tokio::net::TcpListener;

use state::{Options, State};

fn usage() -> ExitCode {
    eprintln!(
        "usage: oauth_test_server [--port N] [--token-lifetime SECS] [--scope S]... [--client ID:SECRET]..."
    );
    ExitCode::from(2)
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut options = Options::default();
    let mut port = 0u16;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let Some(value) = args.next() else {
            return usage();
        };
        match flag.as_str() {
            "--port" => match value.parse() {
                Ok(parsed) => port = parsed,
                Err(_) => return usage(),
            },
            "--token-lifetime" => match value.parse() {
                Ok(parsed) => options.token_lifetime = parsed,
                Err(_) => return usage(),
            },
            "--scope" => options.scopes.push(value),
            "--client" => match value.split_once(':') {
                Some((id, secret)) => options.clients.push((id.to_owned(), secret.to_owned())),
                None => return usage(),
            },
            _ => return usage(),
        }
    }
    let listener = match TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("oauth_test_server: cannot listen: {error}");
            return ExitCode::FAILURE;
        }
    };
    let issuer = match listener.local_addr() {
        Ok(address) => format!("http://{address}"),
        Err(error) => {
            eprintln!("oauth_test_server: {error}");
            return ExitCode::FAILURE;
        }
    };
    let state = match State::new(issuer.clone(), options) {
        Ok(state) => Arc::new(state),
        Err(error) => {
            eprintln!("oauth_test_server: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("listening on {issuer}");
    let app = endpoints::router(state);
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("oauth_test_server: {error}");
            ExitCode::FAILURE
        }
    }
}
