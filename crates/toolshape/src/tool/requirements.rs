//! What a tool needs from its caller to run (secrets, a user id, an
//! authorization token), and what a caller hands over for one call.
//!
//! OTC / OXP carries both (`requirements` in a tool's definition, `context`
//! in a call); a call that lacks what its tool requires is refused before
//! the tool runs. MCP has neither: over MCP such a tool fails with a message
//! naming what is missing, unless the server supplies it.

use std::collections::BTreeMap;
use std::fmt;

/// An authorization a tool requires: a provider's id and the OAuth 2.0 scopes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthorizationRequirement {
    /// The provider's id (e.g. `google`).
    pub id: String,
    /// The OAuth 2.0 scopes, if any.
    pub scopes: Vec<String>,
}

/// What a tool requires from its caller.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Requirements {
    /// Authorization tokens, one per provider.
    pub authorization: Vec<AuthorizationRequirement>,
    /// Secrets, by id.
    pub secrets: Vec<String>,
    /// Whether the tool needs the caller's user id.
    pub user_id: bool,
}

impl Requirements {
    /// Nothing required.
    pub fn new() -> Self {
        Requirements::default()
    }

    /// Requires the secret `id`.
    #[must_use]
    pub fn secret(mut self, id: impl Into<String>) -> Self {
        self.secrets.push(id.into());
        self
    }

    /// Requires the caller's user id.
    #[must_use]
    pub fn user_id(mut self) -> Self {
        self.user_id = true;
        self
    }

    /// Requires a token from the provider `id`, with these scopes.
    #[must_use]
    pub fn authorization<S: Into<String>>(
        mut self,
        id: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.authorization.push(AuthorizationRequirement {
            id: id.into(),
            scopes: scopes.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// Whether nothing is required.
    pub fn is_empty(&self) -> bool {
        self.authorization.is_empty() && self.secrets.is_empty() && !self.user_id
    }

    /// What `credentials` lack of these requirements, if anything.
    pub fn missing(&self, credentials: Option<&Credentials>) -> Option<MissingRequirements> {
        let empty = Credentials::default();
        let given = credentials.unwrap_or(&empty);
        let missing = MissingRequirements {
            authorization: self
                .authorization
                .iter()
                .filter(|a| !given.authorization.contains_key(&a.id))
                .map(|a| a.id.clone())
                .collect(),
            secrets: self
                .secrets
                .iter()
                .filter(|id| !given.secrets.contains_key(*id))
                .cloned()
                .collect(),
            user_id: self.user_id && given.user_id.is_none(),
        };
        (!missing.is_empty()).then_some(missing)
    }
}

/// What a call lacks of its tool's requirements.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MissingRequirements {
    /// Providers whose token is missing.
    pub authorization: Vec<String>,
    /// Secrets missing, by id.
    pub secrets: Vec<String>,
    /// Whether the user id is missing.
    pub user_id: bool,
}

impl MissingRequirements {
    fn is_empty(&self) -> bool {
        self.authorization.is_empty() && self.secrets.is_empty() && !self.user_id
    }
}

impl fmt::Display for MissingRequirements {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.authorization.is_empty() {
            parts.push(format!(
                "authorization from {}",
                self.authorization.join(", ")
            ));
        }
        if !self.secrets.is_empty() {
            parts.push(format!("secret(s) {}", self.secrets.join(", ")));
        }
        if self.user_id {
            parts.push("a user id".to_owned());
        }
        write!(f, "missing {}", parts.join("; "))
    }
}

/// What a caller hands a call: tokens, secrets, its user id. The values
/// never appear in `Debug` output.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Credentials {
    /// Tokens by provider id.
    pub authorization: BTreeMap<String, String>,
    /// Secrets by id.
    pub secrets: BTreeMap<String, String>,
    /// The caller's user id.
    pub user_id: Option<String>,
}

impl Credentials {
    /// No credentials.
    pub fn new() -> Self {
        Credentials::default()
    }

    /// Adds the secret `id`.
    #[must_use]
    pub fn secret(mut self, id: impl Into<String>, value: impl Into<String>) -> Self {
        self.secrets.insert(id.into(), value.into());
        self
    }

    /// Adds a token from the provider `id`.
    #[must_use]
    pub fn token(mut self, id: impl Into<String>, token: impl Into<String>) -> Self {
        self.authorization.insert(id.into(), token.into());
        self
    }

    /// Sets the user id.
    #[must_use]
    pub fn user_id(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = Some(user_id.into());
        self
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field(
                "authorization",
                &self.authorization.keys().collect::<Vec<_>>(),
            )
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("user_id", &self.user_id.as_ref().map(|_| "(set)"))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_names_exactly_what_is_absent() {
        let needs = Requirements::new()
            .secret("API_KEY")
            .user_id()
            .authorization("google", ["mail.read"]);
        let missing = needs.missing(None).unwrap_or_default();
        assert_eq!(missing.secrets, ["API_KEY"]);
        assert_eq!(missing.authorization, ["google"]);
        assert!(missing.user_id);
        let given = Credentials::new()
            .secret("API_KEY", "s3cr3t-value")
            .token("google", "tok-value")
            .user_id("user-value");
        assert_eq!(needs.missing(Some(&given)), None);
        let shown = format!("{given:?}");
        assert!(
            !shown.contains("s3cr3t")
                && !shown.contains("tok-value")
                && !shown.contains("user-value")
        );
    }
}
