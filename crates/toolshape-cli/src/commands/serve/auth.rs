//! `serve --http --auth-issuer ...`: the endpoint behind `toolshape_auth`'s
//! bearer-token layer, with the protected-resource metadata beside it.

use std::io::Read;
use std::net::SocketAddr;
use std::sync::Arc;

use toolshape_auth::server::{BearerAuth, JwksVerifier};

use super::ServeAuthArgs;

/// Largest key set file read, in bytes.
const MAX_JWKS_FILE_BYTES: u64 = 1024 * 1024;

/// The protection the flags ask for (none without --auth-issuer).
pub(super) fn protection(
    args: &ServeAuthArgs,
    bound: SocketAddr,
    path: &str,
) -> Result<Option<BearerAuth>, String> {
    let Some(issuer) = &args.auth_issuer else {
        return Ok(None);
    };
    let resource = match &args.auth_resource {
        Some(resource) => resource.clone(),
        None if bound.ip().is_unspecified() => {
            return Err(format!(
                "bound to {bound}, the endpoint's public URI is unknown: give --auth-resource \
                 (the URL clients reach it at, e.g. https://mcp.example.com{path})"
            ));
        }
        None => format!("http://{bound}{path}"),
    };
    let mut verifier =
        JwksVerifier::new(issuer, &resource).map_err(|e| format!("--auth-issuer: {e}"))?;
    if args.auth_allow_http {
        verifier = verifier.allow_http().map_err(|e| e.to_string())?;
    }
    if let Some(url) = &args.auth_jwks_url {
        verifier = verifier
            .jwks_url(url)
            .map_err(|e| format!("--auth-jwks-url: {e}"))?;
    }
    if let Some(file) = &args.auth_jwks_file {
        let text = read_bounded(file)?;
        verifier = verifier
            .jwks_json(&text)
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let mut builder = BearerAuth::builder(&resource)
        .map_err(|e| format!("--auth-resource: {e}"))?
        .authorization_server(issuer)
        .verifier(Arc::new(verifier))
        .resource_name("toolshape workspace")
        .required_scopes(args.auth_scope.iter().cloned());
    for entry in &args.auth_tool_scope {
        let Some((tool, scopes)) = entry.split_once('=') else {
            return Err(format!(
                "--auth-tool-scope {entry:?}: write TOOL=SCOPE[,SCOPE...]"
            ));
        };
        let scopes: Vec<&str> = scopes.split([',', ' ']).filter(|s| !s.is_empty()).collect();
        if tool.is_empty() || scopes.is_empty() {
            return Err(format!(
                "--auth-tool-scope {entry:?}: write TOOL=SCOPE[,SCOPE...]"
            ));
        }
        builder = builder.tool_scopes(tool, scopes);
    }
    builder.build().map(Some).map_err(|e| e.to_string())
}

fn read_bounded(path: &std::path::Path) -> Result<String, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    file.take(MAX_JWKS_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > MAX_JWKS_FILE_BYTES {
        return Err(format!(
            "{}: larger than {MAX_JWKS_FILE_BYTES} bytes",
            path.display()
        ));
    }
    Ok(text)
}
