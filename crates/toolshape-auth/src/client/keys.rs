//! Keys the client signs with: its own key for `private_key_jwt` client
//! authentication (RFC 7523 §2.2), and the DPoP proof key (RFC 9449),
//! generated per token.

use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, EllipticCurveKeyParameters,
    EllipticCurveKeyType, Jwk,
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Map, Value, json};
use url::Url;

use crate::jose::{b64url, now, random_id, sha256};

/// Why a key cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The algorithm is not one this key type signs with.
    #[error(
        "unsupported signing algorithm {0:?} (use ES256, ES384, RS256, RS384, RS512, PS256, PS384, PS512 or EdDSA)"
    )]
    Algorithm(String),
    /// The PEM text is not a private key of that type.
    #[error("the key is not a PEM private key for {algorithm}: {source}")]
    Pem {
        /// The algorithm asked for.
        algorithm: String,
        /// The cause.
        #[source]
        source: jsonwebtoken::errors::Error,
    },
    /// Signing failed.
    #[error("signing failed: {0}")]
    Sign(#[source] jsonwebtoken::errors::Error),
    /// The system random generator failed.
    #[error("the system random number generator failed")]
    Random,
    /// A DPoP key could not be made or loaded.
    #[error("the DPoP key is unusable")]
    Dpop,
}

/// The client's private key for `private_key_jwt`: it signs a short-lived
/// assertion (`iss` = `sub` = the client id, `aud` = the authorization
/// server's issuer) for each token request.
#[derive(Clone)]
pub struct SigningKey {
    algorithm: Algorithm,
    key: EncodingKey,
    key_id: Option<String>,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A PEM private key (PKCS#8; PKCS#1 for RSA) that signs with
    /// `algorithm` (`ES256`, `RS256`...).
    pub fn from_pem(pem: &[u8], algorithm: &str) -> Result<Self, KeyError> {
        let parsed: Algorithm = algorithm
            .parse()
            .map_err(|_| KeyError::Algorithm(algorithm.to_owned()))?;
        let pem_error = |source| KeyError::Pem {
            algorithm: algorithm.to_owned(),
            source,
        };
        let key = match parsed {
            Algorithm::ES256 | Algorithm::ES384 => {
                EncodingKey::from_ec_pem(pem).map_err(pem_error)?
            }
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem).map_err(pem_error)?,
            Algorithm::EdDSA => EncodingKey::from_ed_pem(pem).map_err(pem_error)?,
            _ => return Err(KeyError::Algorithm(algorithm.to_owned())),
        };
        // Sign once now: a key of the wrong type fails here, not at the first request.
        let probe = SigningKey {
            algorithm: parsed,
            key,
            key_id: None,
        };
        probe.sign(&json!({"probe": true}))?;
        Ok(probe)
    }

    /// Names the key (`kid` of the assertions' header).
    #[must_use]
    pub fn key_id(mut self, kid: impl Into<String>) -> Self {
        self.key_id = Some(kid.into());
        self
    }

    /// The signing algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// A client assertion for a token request to `audience`.
    pub(crate) fn client_assertion(
        &self,
        client_id: &str,
        audience: &str,
    ) -> Result<String, KeyError> {
        let issued = now();
        let jti = random_id(18).ok_or(KeyError::Random)?;
        self.sign(&json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": issued,
            "exp": issued + 120,
            "jti": jti,
        }))
    }

    fn sign(&self, claims: &Value) -> Result<String, KeyError> {
        let mut header = Header::new(self.algorithm);
        header.kid.clone_from(&self.key_id);
        jsonwebtoken::encode(&header, claims, &self.key).map_err(KeyError::Sign)
    }
}

/// A P-256 key proving possession of DPoP-bound tokens.
#[derive(Clone)]
pub(crate) struct DpopKey {
    pkcs8: Vec<u8>,
    key: EncodingKey,
    jwk: Jwk,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey(ES256)")
    }
}

impl DpopKey {
    /// A fresh key.
    pub(crate) fn generate() -> Result<Self, KeyError> {
        let document =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| KeyError::Random)?;
        Self::from_pkcs8(document.as_ref())
    }

    /// A key saved with [`DpopKey::pkcs8`].
    pub(crate) fn from_pkcs8(pkcs8: &[u8]) -> Result<Self, KeyError> {
        let pair = EcdsaKeyPair::from_pkcs8(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8,
            &SystemRandom::new(),
        )
        .map_err(|_| KeyError::Dpop)?;
        let point = pair.public_key().as_ref();
        // An uncompressed point: 0x04, x (32 bytes), y (32 bytes).
        if point.len() != 65 || point[0] != 4 {
            return Err(KeyError::Dpop);
        }
        let jwk = Jwk {
            common: CommonParameters::default(),
            algorithm: AlgorithmParameters::EllipticCurve(EllipticCurveKeyParameters {
                key_type: EllipticCurveKeyType::EC,
                curve: EllipticCurve::P256,
                x: b64url(&point[1..33]),
                y: b64url(&point[33..65]),
            }),
        };
        Ok(DpopKey {
            pkcs8: pkcs8.to_vec(),
            key: EncodingKey::from_ec_der(pkcs8),
            jwk,
        })
    }

    /// The private key as PKCS#8, for a token store.
    pub(crate) fn pkcs8(&self) -> &[u8] {
        &self.pkcs8
    }

    /// A proof for one request (RFC 9449 §4.2): `htm`, `htu` (without query
    /// and fragment), a fresh `jti`, `iat`, and when given the access
    /// token's hash (`ath`) and the server's `nonce`.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, KeyError> {
        let mut target = url.clone();
        target.set_query(None);
        target.set_fragment(None);
        let mut claims = Map::new();
        claims.insert("jti".into(), random_id(18).ok_or(KeyError::Random)?.into());
        claims.insert("htm".into(), method.into());
        claims.insert("htu".into(), target.as_str().into());
        claims.insert("iat".into(), now().into());
        if let Some(token) = access_token {
            claims.insert("ath".into(), b64url(sha256(token.as_bytes())).into());
        }
        if let Some(nonce) = nonce {
            claims.insert("nonce".into(), nonce.into());
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &Value::Object(claims), &self.key).map_err(KeyError::Sign)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dpop_proof_verifies_with_its_embedded_key() -> Result<(), Box<dyn std::error::Error>> {
        let key = DpopKey::generate()?;
        let url = Url::parse("https://mcp.example.com/mcp?x=1#f")?;
        let proof = key.proof("POST", &url, Some("tok"), Some("n-1"))?;
        let header = jsonwebtoken::decode_header(&proof)?;
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.ok_or("no jwk")?;
        let decoding = jsonwebtoken::DecodingKey::from_jwk(&jwk)?;
        let mut validation = jsonwebtoken::Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let claims =
            jsonwebtoken::decode::<Map<String, Value>>(&proof, &decoding, &validation)?.claims;
        assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["nonce"], "n-1");
        assert_eq!(claims["ath"], b64url(sha256(b"tok")));
        // Saved and loaded, it is the same key.
        let again = DpopKey::from_pkcs8(key.pkcs8())?;
        assert_eq!(again.jwk, key.jwk);
        // Every proof is fresh.
        assert_ne!(proof, key.proof("POST", &url, Some("tok"), Some("n-1"))?);
        Ok(())
    }
}
