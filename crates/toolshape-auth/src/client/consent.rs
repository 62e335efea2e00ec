//! How the user's consent is obtained in the authorization code flow: the
//! [`Consent`] shows the authorization URL (a browser) and hands back the
//! redirect the authorization server sent the user to.

use std::time::Duration;

use toolshape::client::AuthFuture;
use url::Url;

use crate::fetch::Fetcher;

/// Asks the user (or an automaton) to authorize, and returns the callback.
pub trait Consent: Send + Sync + std::fmt::Debug + 'static {
    /// The redirect URI to register and send with the authorization request.
    fn redirect_uri(&self) -> &Url;

    /// Sends the user to `authorization_url` and waits for the authorization
    /// server to redirect back: returns that redirect's full URL (with its
    /// `code`, `state`, `iss` or `error` parameters). The client checks it.
    fn authorize<'a>(&'a self, authorization_url: &'a Url) -> AuthFuture<'a, Url>;
}

/// Consent without a user: requests the authorization URL itself and takes
/// the redirect the authorization server answers with. For tests and
/// automation against an authorization server that approves at once; a
/// real one shows a login page instead, which this reports as an error.
#[derive(Debug)]
pub struct HeadlessConsent {
    redirect_uri: Url,
    fetch: Fetcher,
}

impl HeadlessConsent {
    /// Consent that claims `redirect_uri` (nothing listens there; the
    /// redirect is read from the authorization server's answer).
    pub fn new(redirect_uri: &str) -> Result<Self, super::AuthError> {
        let redirect_uri =
            Url::parse(redirect_uri).map_err(|_| super::AuthError::Url(redirect_uri.to_owned()))?;
        let fetch = Fetcher::new(Duration::from_secs(30), false).map_err(super::AuthError::Http)?;
        Ok(HeadlessConsent {
            redirect_uri,
            fetch,
        })
    }
}

impl Consent for HeadlessConsent {
    fn redirect_uri(&self) -> &Url {
        &self.redirect_uri
    }

    fn authorize<'a>(&'a self, authorization_url: &'a Url) -> AuthFuture<'a, Url> {
        Box::pin(async move {
            self.fetch.check(authorization_url)?;
            let request = self.fetch.client().get(authorization_url.clone());
            let answer = self.fetch.send(authorization_url, request).await?;
            let location = answer
                .headers
                .get(http::header::LOCATION)
                .and_then(|value| value.to_str().ok());
            match (answer.status, location) {
                (300..=399, Some(location)) => Ok(authorization_url.join(location)?),
                (status, _) => Err(format!(
                    "the authorization endpoint answered {status} without a redirect (it wants a user: use an interactive consent)"
                )
                .into()),
            }
        })
    }
}
