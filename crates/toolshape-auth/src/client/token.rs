//! Token requests. The standard grants (authorization code with PKCE,
//! refresh, client credentials) go through the `oauth2` crate; the JWT
//! bearer and token exchange grants it lacks are built here. Every request
//! goes through [`TokenHttp`]: bounded, no redirects, the `resource`
//! parameter (RFC 8707), and, for DPoP, a fresh proof with the server's
//! latest nonce (one retry on `use_dpop_nonce`, RFC 9449 §8).

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use oauth2::basic::{BasicClient, BasicTokenResponse};
use oauth2::{
    AsyncHttpClient, AuthType, AuthorizationCode, ClientId, ClientSecret, EndpointNotSet,
    EndpointSet, HttpRequest, HttpResponse, PkceCodeVerifier, RedirectUrl, RefreshToken,
    RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use serde::Deserialize;
use url::Url;

use super::AuthError;
use super::config::TokenAuthMethod;
use super::keys::{DpopKey, KeyError};
use super::registration::RegisteredClient;
use crate::Secret;
use crate::fetch::{FetchError, Fetcher};

/// The grant type of JWT assertions (RFC 7523 §2.1).
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The grant type of token exchange (RFC 8693 §2.1).
pub(crate) const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A token as the token endpoint issued it.
#[derive(Debug)]
pub(crate) struct Issued {
    pub(crate) access_token: Secret,
    pub(crate) token_type: String,
    pub(crate) refresh_token: Option<Secret>,
    pub(crate) expires_in: Option<u64>,
}

impl From<BasicTokenResponse> for Issued {
    fn from(response: BasicTokenResponse) -> Self {
        Issued {
            access_token: Secret::new(response.access_token().secret().clone()),
            token_type: response.token_type().as_ref().to_owned(),
            refresh_token: response
                .refresh_token()
                .map(|t| Secret::new(t.secret().clone())),
            expires_in: response.expires_in().map(|d| d.as_secs()),
        }
    }
}

/// One token endpoint, used by one client for one resource.
#[derive(Debug)]
pub(crate) struct TokenEndpoint<'a> {
    pub(crate) fetch: &'a Fetcher,
    pub(crate) url: Url,
    pub(crate) issuer: &'a str,
    pub(crate) resource: &'a str,
    pub(crate) client: &'a RegisteredClient,
    pub(crate) dpop: Option<&'a DpopKey>,
    pub(crate) nonce: &'a Mutex<Option<String>>,
}

type Oauth2Client =
    BasicClient<EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;
/// Form parameters added to an `oauth2` request.
type ExtraParams = Vec<(&'static str, String)>;

impl TokenEndpoint<'_> {
    fn http(&self) -> TokenHttp {
        TokenHttp {
            fetch: self.fetch.clone(),
            dpop: self.dpop.cloned(),
            nonce: Arc::new(Mutex::new(lock(self.nonce).clone())),
        }
    }

    /// Sends a request through [`TokenHttp`] and keeps the nonce it learnt.
    async fn through<T>(&self, send: impl AsyncFnOnce(&TokenHttp) -> T) -> T {
        let http = self.http();
        let outcome = send(&http).await;
        let learnt = lock(&http.nonce).clone();
        if learnt.is_some() {
            *lock(self.nonce) = learnt;
        }
        outcome
    }

    /// The `oauth2` client and the extra parameters its authentication needs.
    fn oauth2(&self) -> Result<(Oauth2Client, ExtraParams), AuthError> {
        let client = &self.client;
        let mut oauth = BasicClient::new(ClientId::new(client.client_id.clone()))
            .set_token_uri(TokenUrl::from_url(self.url.clone()));
        let mut extra = Vec::new();
        match client.method {
            TokenAuthMethod::ClientSecretBasic | TokenAuthMethod::ClientSecretPost => {
                let secret = client.secret.as_ref().ok_or(AuthError::NoIdentity)?;
                oauth = oauth
                    .set_client_secret(ClientSecret::new(secret.expose().to_owned()))
                    .set_auth_type(if client.method == TokenAuthMethod::ClientSecretBasic {
                        AuthType::BasicAuth
                    } else {
                        AuthType::RequestBody
                    });
            }
            TokenAuthMethod::PrivateKeyJwt => {
                let key = client.key.as_ref().ok_or(AuthError::NoIdentity)?;
                oauth = oauth.set_auth_type(AuthType::RequestBody);
                extra.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()));
                extra.push((
                    "client_assertion",
                    key.client_assertion(&client.client_id, self.issuer)?,
                ));
            }
            TokenAuthMethod::None => oauth = oauth.set_auth_type(AuthType::RequestBody),
        }
        extra.push(("resource", self.resource.to_owned()));
        Ok((oauth, extra))
    }

    /// Redeems an authorization code.
    pub(crate) async fn code(
        &self,
        code: String,
        verifier: PkceCodeVerifier,
        redirect_uri: &Url,
    ) -> Result<Issued, AuthError> {
        let (oauth, extra) = self.oauth2()?;
        let oauth = oauth.set_redirect_uri(RedirectUrl::from_url(redirect_uri.clone()));
        let mut request = oauth
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier);
        for (name, value) in &extra {
            request = request.add_extra_param(*name, value.as_str());
        }
        let answer = self
            .through(async |http| request.request_async(http).await)
            .await;
        self.issued(answer)
    }

    /// Renews a token.
    pub(crate) async fn refresh(&self, refresh_token: &Secret) -> Result<Issued, AuthError> {
        let (oauth, extra) = self.oauth2()?;
        let refresh = RefreshToken::new(refresh_token.expose().to_owned());
        let mut request = oauth.exchange_refresh_token(&refresh);
        for (name, value) in &extra {
            request = request.add_extra_param(*name, value.as_str());
        }
        let answer = self
            .through(async |http| request.request_async(http).await)
            .await;
        self.issued(answer)
    }

    /// A token for the client itself.
    pub(crate) async fn client_credentials(
        &self,
        scopes: &BTreeSet<String>,
    ) -> Result<Issued, AuthError> {
        let (oauth, extra) = self.oauth2()?;
        let mut request = oauth
            .exchange_client_credentials()
            .add_scopes(scopes.iter().cloned().map(Scope::new));
        for (name, value) in &extra {
            request = request.add_extra_param(*name, value.as_str());
        }
        let answer = self
            .through(async |http| request.request_async(http).await)
            .await;
        self.issued(answer)
    }

    /// A token for a JWT assertion (RFC 7523 §2.1).
    pub(crate) async fn jwt_bearer(
        &self,
        assertion: &Secret,
        scopes: &BTreeSet<String>,
    ) -> Result<Issued, AuthError> {
        let mut form = vec![
            ("grant_type", JWT_BEARER.to_owned()),
            ("assertion", assertion.expose().to_owned()),
            ("resource", self.resource.to_owned()),
        ];
        if let Some(scope) = join(scopes) {
            form.push(("scope", scope));
        }
        let mut headers = http::HeaderMap::new();
        self.authenticate(&mut form, &mut headers)?;
        let url = self.url.clone();
        let answer = self
            .through(async |http| form_post(http, &url, form, headers).await)
            .await;
        parse_issued(&self.url, answer)
    }

    /// The client's authentication, hand-written for the grants `oauth2` lacks.
    fn authenticate(
        &self,
        form: &mut Vec<(&'static str, String)>,
        headers: &mut http::HeaderMap,
    ) -> Result<(), AuthError> {
        let client = &self.client;
        match client.method {
            TokenAuthMethod::None => form.push(("client_id", client.client_id.clone())),
            TokenAuthMethod::ClientSecretPost => {
                let secret = client.secret.as_ref().ok_or(AuthError::NoIdentity)?;
                form.push(("client_id", client.client_id.clone()));
                form.push(("client_secret", secret.expose().to_owned()));
            }
            TokenAuthMethod::ClientSecretBasic => {
                let secret = client.secret.as_ref().ok_or(AuthError::NoIdentity)?;
                headers.insert(
                    http::header::AUTHORIZATION,
                    basic(&client.client_id, secret.expose())?,
                );
            }
            TokenAuthMethod::PrivateKeyJwt => {
                let key = client.key.as_ref().ok_or(AuthError::NoIdentity)?;
                form.push(("client_id", client.client_id.clone()));
                form.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()));
                form.push((
                    "client_assertion",
                    key.client_assertion(&client.client_id, self.issuer)?,
                ));
            }
        }
        Ok(())
    }

    fn issued(
        &self,
        answer: Result<
            BasicTokenResponse,
            RequestTokenError<TokenHttpError, oauth2::basic::BasicErrorResponse>,
        >,
    ) -> Result<Issued, AuthError> {
        let detail = match answer {
            Ok(response) => return Ok(response.into()),
            Err(RequestTokenError::ServerResponse(error)) => {
                let mut detail = error.error().as_ref().to_owned();
                if let Some(description) = error.error_description() {
                    detail.push_str(&format!(" ({description})"));
                }
                detail
            }
            Err(RequestTokenError::Request(TokenHttpError::Key(error))) => return Err(error.into()),
            Err(RequestTokenError::Request(error)) => error.to_string(),
            Err(RequestTokenError::Parse(error, _)) => format!("not a token response: {error}"),
            Err(RequestTokenError::Other(other)) => other,
        };
        Err(AuthError::Token {
            url: self.url.to_string(),
            detail,
        })
    }
}

/// Exchanges the user's ID token at the identity provider for an identity
/// assertion grant (ID-JAG) meant for `audience` (SEP-990, RFC 8693).
pub(crate) async fn exchange_id_token(
    fetch: &Fetcher,
    endpoint: &Url,
    client: &RegisteredClient,
    id_token: &Secret,
    audience: &str,
    resource: &str,
    scopes: &BTreeSet<String>,
) -> Result<Secret, AuthError> {
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE.to_owned()),
        ("requested_token_type", ID_JAG_TYPE.to_owned()),
        ("subject_token", id_token.expose().to_owned()),
        ("subject_token_type", ID_TOKEN_TYPE.to_owned()),
        ("audience", audience.to_owned()),
        ("resource", resource.to_owned()),
    ];
    if let Some(scope) = join(scopes) {
        form.push(("scope", scope));
    }
    let nonce = Mutex::new(None);
    let at_idp = TokenEndpoint {
        fetch,
        url: endpoint.clone(),
        issuer: audience,
        resource,
        client,
        dpop: None,
        nonce: &nonce,
    };
    let mut headers = http::HeaderMap::new();
    at_idp.authenticate(&mut form, &mut headers)?;
    let answer = at_idp
        .through(async |http| form_post(http, endpoint, form, headers).await)
        .await;
    #[derive(Deserialize)]
    struct Exchanged {
        access_token: String,
        #[serde(default)]
        issued_token_type: Option<String>,
    }
    let response = answer.map_err(|error| token_error(endpoint, error.to_string()))?;
    if response.status() != 200 {
        return Err(token_error(
            endpoint,
            error_text(response.status().as_u16(), response.body()),
        ));
    }
    let exchanged: Exchanged = serde_json::from_slice(response.body())
        .map_err(|e| token_error(endpoint, format!("not a token exchange response: {e}")))?;
    if exchanged
        .issued_token_type
        .as_deref()
        .is_some_and(|t| t != ID_JAG_TYPE)
    {
        return Err(token_error(
            endpoint,
            "the identity provider issued another kind of token".into(),
        ));
    }
    Ok(Secret::new(exchanged.access_token))
}

fn parse_issued(
    url: &Url,
    answer: Result<HttpResponse, TokenHttpError>,
) -> Result<Issued, AuthError> {
    let response = match answer {
        Ok(response) => response,
        Err(TokenHttpError::Key(error)) => return Err(error.into()),
        Err(error) => return Err(token_error(url, error.to_string())),
    };
    if response.status() != 200 {
        return Err(token_error(
            url,
            error_text(response.status().as_u16(), response.body()),
        ));
    }
    serde_json::from_slice::<BasicTokenResponse>(response.body())
        .map(Issued::from)
        .map_err(|e| token_error(url, format!("not a token response: {e}")))
}

/// `error (error_description)` of an OAuth error body, or the status.
fn error_text(status: u16, body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct OauthError {
        error: String,
        #[serde(default)]
        error_description: Option<String>,
    }
    match serde_json::from_slice::<OauthError>(body) {
        Ok(e) => match e.error_description {
            Some(d) => format!("{} ({d})", e.error),
            None => e.error,
        },
        Err(_) => format!("HTTP {status}"),
    }
}

fn token_error(url: &Url, detail: String) -> AuthError {
    AuthError::Token {
        url: url.to_string(),
        detail,
    }
}

/// `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1).
fn basic(id: &str, secret: &str) -> Result<http::HeaderValue, AuthError> {
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let value = format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", encode(id), encode(secret)))
    );
    http::HeaderValue::from_str(&value).map_err(|_| AuthError::NoIdentity)
}

pub(crate) fn join(scopes: &BTreeSet<String>) -> Option<String> {
    (!scopes.is_empty()).then(|| {
        scopes
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    })
}

async fn form_post(
    http: &TokenHttp,
    url: &Url,
    form: Vec<(&'static str, String)>,
    mut headers: http::HeaderMap,
) -> Result<HttpResponse, TokenHttpError> {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    headers.insert(
        http::header::ACCEPT,
        http::HeaderValue::from_static("application/json"),
    );
    let mut request = http::Request::builder()
        .method(http::Method::POST)
        .uri(url.as_str());
    if let Some(all) = request.headers_mut() {
        all.extend(headers);
    }
    let request = request
        .body(body.into_bytes())
        .map_err(|e| TokenHttpError::Request(e.to_string()))?;
    http.send(request).await
}

/// Why a token request could not be sent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenHttpError {
    #[error(transparent)]
    Fetch(#[from] FetchError),
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("{0}")]
    Request(String),
}

/// The HTTP client of token requests (owning what it uses: `oauth2`
/// borrows it for any lifetime).
pub(crate) struct TokenHttp {
    fetch: Fetcher,
    dpop: Option<DpopKey>,
    nonce: Arc<Mutex<Option<String>>>,
}

impl<'c> AsyncHttpClient<'c> for TokenHttp {
    type Error = TokenHttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, TokenHttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(self.send(request))
    }
}

impl TokenHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TokenHttpError> {
        let url = Url::parse(&request.uri().to_string())
            .map_err(|e| TokenHttpError::Request(format!("bad token endpoint URL: {e}")))?;
        self.fetch.check(&url)?;
        let (parts, body) = request.into_parts();
        let mut retried = false;
        loop {
            let mut builder = self
                .fetch
                .client()
                .request(parts.method.clone(), url.clone())
                .headers(parts.headers.clone())
                .body(body.clone());
            if let Some(key) = &self.dpop {
                let nonce = lock(&self.nonce).clone();
                builder = builder.header(
                    "DPoP",
                    key.proof(parts.method.as_str(), &url, None, nonce.as_deref())?,
                );
            }
            let answer = self.fetch.send(&url, builder).await?;
            let fresh_nonce = answer
                .headers
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if let Some(nonce) = &fresh_nonce {
                *lock(&self.nonce) = Some(nonce.clone());
            }
            let wants_nonce = answer.status == 400
                && fresh_nonce.is_some()
                && serde_json::from_slice::<serde_json::Value>(&answer.body)
                    .ok()
                    .is_some_and(|v| v["error"] == "use_dpop_nonce");
            if self.dpop.is_some() && wants_nonce && !retried {
                retried = true;
                continue;
            }
            let mut response = http::Response::builder().status(answer.status);
            if let Some(all) = response.headers_mut() {
                all.extend(answer.headers);
            }
            return response
                .body(answer.body)
                .map_err(|e| TokenHttpError::Request(e.to_string()));
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
