//! HTTP for the OTC check: JSON in, bounded JSON out.

use serde_json::Value;

use crate::options::Options;

/// An answer: its status and its body, parsed when it is JSON.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) json: Option<Value>,
    /// The body's start, when it is not JSON.
    pub(crate) text: String,
}

/// What went wrong with an exchange.
#[derive(Debug)]
pub(crate) enum Failure {
    /// No answer within the time limit.
    Timeout,
    /// The connection failed (refused, reset).
    Connection(String),
    /// The body is larger than the limit.
    TooLarge(usize),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Timeout => f.write_str("no answer in time"),
            Failure::Connection(detail) => write!(f, "the request failed: {detail}"),
            Failure::TooLarge(limit) => write!(f, "the body is larger than {limit} bytes"),
        }
    }
}

/// A client for one OTC server.
pub(crate) struct Http {
    client: reqwest::Client,
    base: reqwest::Url,
    limit: usize,
}

impl Http {
    /// A client for the server at `base` (`http://host:port`, or with a path prefix).
    pub(crate) fn new(base: &str, options: &Options) -> Result<Http, String> {
        let mut base = reqwest::Url::parse(base).map_err(|e| {
            format!(
                "bad OTC URL {:?}: {e}",
                toolshape_protocol::text::excerpt(base, 200)
            )
        })?;
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let client = reqwest::Client::builder()
            .timeout(options.call_timeout)
            .build()
            .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
        Ok(Http {
            client,
            base,
            limit: options.max_message_bytes,
        })
    }

    fn url(&self, path: &str) -> Result<reqwest::Url, String> {
        self.base
            .join(path)
            .map_err(|e| format!("bad path {path}: {e}"))
    }

    /// `GET path`; an `Err` says the server could not be reached.
    pub(crate) async fn get(&self, path: &str) -> Result<Answer, String> {
        let url = self.url(path)?;
        let request = self.client.get(url.clone());
        self.exchange(request)
            .await
            .map_err(|failure| format!("GET {url}: {failure}"))
    }

    /// `POST path` with `body` as JSON.
    pub(crate) async fn post(&self, path: &str, body: &Value) -> Result<Answer, Failure> {
        let url = self.url(path).map_err(Failure::Connection)?;
        let request = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        self.exchange(request).await
    }

    async fn exchange(&self, request: reqwest::RequestBuilder) -> Result<Answer, Failure> {
        let classify = |error: reqwest::Error| {
            if error.is_timeout() {
                Failure::Timeout
            } else {
                Failure::Connection(error.to_string())
            }
        };
        let mut response = request.send().await.map_err(classify)?;
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(classify)? {
            if body.len() + chunk.len() > self.limit {
                return Err(Failure::TooLarge(self.limit));
            }
            body.extend_from_slice(&chunk);
        }
        let json = serde_json::from_slice(&body).ok();
        let text = if json.is_none() {
            toolshape_protocol::text::excerpt(&String::from_utf8_lossy(&body), 200)
        } else {
            String::new()
        };
        Ok(Answer { status, json, text })
    }
}
