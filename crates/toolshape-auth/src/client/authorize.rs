//! The authorization request (PKCE S256, `state`, `resource`) and the
//! checks on its response before the code goes anywhere: the redirect is
//! ours, `iss` is the recorded issuer when present or promised (RFC 9207,
//! simple string comparison), `state` matches, no `error`.

use std::collections::BTreeSet;

use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, ClientId, CsrfToken, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
};
use url::Url;

use super::AuthError;
use super::discovery::Discovered;
use super::registration::RegisteredClient;
use crate::fetch::Fetcher;
use crate::metadata::AuthorizationServerMetadata;

/// An authorization request sent, and what its response is checked against.
#[derive(Debug)]
pub(crate) struct Pending {
    pub(crate) url: Url,
    pub(crate) verifier: PkceCodeVerifier,
    state: CsrfToken,
    issuer: String,
    iss_promised: bool,
    redirect_uri: Url,
}

/// The authorization request for `client`, asking for `scopes` (none: the
/// parameter is left out).
pub(crate) fn start(
    fetch: &Fetcher,
    discovered: &Discovered,
    client: &RegisteredClient,
    redirect_uri: &Url,
    scopes: &BTreeSet<String>,
) -> Result<Pending, AuthError> {
    let metadata = &discovered.metadata;
    if !AuthorizationServerMetadata::lists(&metadata.code_challenge_methods_supported, "S256") {
        return Err(AuthError::PkceUnsupported(discovered.issuer.clone()));
    }
    let endpoint = discovered.endpoint(
        fetch,
        &metadata.authorization_endpoint,
        "authorization endpoint",
    )?;
    let oauth = BasicClient::new(ClientId::new(client.client_id.clone()))
        .set_auth_uri(AuthUrl::from_url(endpoint))
        .set_redirect_uri(RedirectUrl::from_url(redirect_uri.clone()));
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = oauth
        .authorize_url(CsrfToken::new_random)
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .set_pkce_challenge(challenge)
        .add_extra_param("resource", discovered.resource.as_str())
        .url();
    Ok(Pending {
        url,
        verifier,
        state,
        issuer: discovered.issuer.clone(),
        iss_promised: metadata.authorization_response_iss_parameter_supported == Some(true),
        redirect_uri: redirect_uri.clone(),
    })
}

impl Pending {
    /// The code of the authorization response `callback`, once it passed
    /// every check.
    pub(crate) fn code(&self, callback: &Url) -> Result<String, AuthError> {
        let refuse = |why: &str| Err(AuthError::Callback(why.to_owned()));
        let expected = &self.redirect_uri;
        if callback.scheme() != expected.scheme()
            || callback.host_str() != expected.host_str()
            || callback.port_or_known_default() != expected.port_or_known_default()
            || callback.path() != expected.path()
        {
            return refuse("it did not come back to the redirect URI");
        }
        let mut single = std::collections::HashMap::new();
        for (name, value) in callback.query_pairs() {
            if single
                .insert(name.clone().into_owned(), value.into_owned())
                .is_some()
            {
                return refuse(&format!("it repeats the parameter {name:?}"));
            }
        }
        let param = |name: &str| single.get(name).map(String::as_str);
        // RFC 9207 §2.4 first: a response that may come from another server
        // is not acted on at all, not even its error.
        match (param("iss"), self.iss_promised) {
            (Some(iss), _) if iss != self.issuer => {
                return Err(AuthError::IssuerMismatch {
                    expected: self.issuer.clone(),
                    found: Some(iss.to_owned()),
                });
            }
            (None, true) => {
                return Err(AuthError::IssuerMismatch {
                    expected: self.issuer.clone(),
                    found: None,
                });
            }
            _ => {}
        }
        if param("state") != Some(self.state.secret().as_str()) {
            return refuse("its state is not the one sent");
        }
        if let Some(error) = param("error") {
            return Err(AuthError::Denied {
                error: error.to_owned(),
                description: param("error_description").map(str::to_owned),
            });
        }
        match param("code") {
            Some(code) if !code.is_empty() => Ok(code.to_owned()),
            _ => refuse("it carries no code"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pending(iss_promised: bool) -> Pending {
        let (_, verifier) = PkceCodeChallenge::new_random_sha256();
        Pending {
            url: Url::parse("https://as.example/authorize").unwrap(),
            verifier,
            state: CsrfToken::new("s1".into()),
            issuer: "https://as.example".into(),
            iss_promised,
            redirect_uri: Url::parse("http://127.0.0.1:5555/callback").unwrap(),
        }
    }

    fn check(p: &Pending, query: &str) -> Result<String, AuthError> {
        let url = Url::parse(&format!("http://127.0.0.1:5555/callback?{query}")).unwrap();
        p.code(&url)
    }

    #[test]
    fn iss_rules_of_rfc_9207() {
        let promised = pending(true);
        let unpromised = pending(false);
        assert_eq!(
            check(&promised, "code=c&state=s1&iss=https%3A%2F%2Fas.example")
                .ok()
                .as_deref(),
            Some("c")
        );
        assert!(matches!(
            check(&promised, "code=c&state=s1"),
            Err(AuthError::IssuerMismatch { found: None, .. })
        ));
        assert_eq!(
            check(&unpromised, "code=c&state=s1").ok().as_deref(),
            Some("c")
        );
        // Compared as strings: a normalisation-equivalent variant is another issuer.
        for wrong in [
            "https%3A%2F%2Fas.example%2F",
            "https%3A%2F%2FAS.example",
            "https%3A%2F%2Fevil.example",
        ] {
            for p in [&promised, &unpromised] {
                assert!(matches!(
                    check(p, &format!("code=c&state=s1&iss={wrong}")),
                    Err(AuthError::IssuerMismatch { found: Some(_), .. })
                ));
            }
        }
        // A mismatched iss hides the error it carries.
        assert!(matches!(
            check(
                &unpromised,
                "error=access_denied&state=s1&iss=https%3A%2F%2Fevil.example"
            ),
            Err(AuthError::IssuerMismatch { .. })
        ));
    }

    #[test]
    fn state_redirect_and_errors() {
        let p = pending(false);
        assert!(matches!(
            check(&p, "code=c&state=other"),
            Err(AuthError::Callback(_))
        ));
        assert!(matches!(check(&p, "code=c"), Err(AuthError::Callback(_))));
        assert!(matches!(
            check(&p, "code=c&code=d&state=s1"),
            Err(AuthError::Callback(_))
        ));
        assert!(matches!(
            check(&p, "error=access_denied&state=s1"),
            Err(AuthError::Denied { .. })
        ));
        let elsewhere = Url::parse("http://127.0.0.1:5556/callback?code=c&state=s1").unwrap();
        assert!(matches!(p.code(&elsewhere), Err(AuthError::Callback(_))));
    }
}
