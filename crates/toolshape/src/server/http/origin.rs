//! `Origin` and `Host` validation against DNS rebinding: a page on another
//! site must not reach a local endpoint through the browser.

/// Whether `host` (an `Origin`'s or a `Host` header's host, without port or
/// brackets) is a loopback name.
fn is_loopback(host: &str) -> bool {
    matches!(
        host.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "::1"
    )
}

fn is_port(text: &str) -> bool {
    text.parse::<u16>().is_ok()
}

/// Splits `host[:port]` (`[v6]:port` for IPv6); `None` when malformed.
fn split_authority(authority: &str) -> Option<(&str, Option<&str>)> {
    if let Some(bracketed) = authority.strip_prefix('[') {
        let (host, rest) = bracketed.split_once(']')?;
        return match rest {
            "" => Some((host, None)),
            _ => rest
                .strip_prefix(':')
                .filter(|port| is_port(port))
                .map(|port| (host, Some(port))),
        };
    }
    match authority.split_once(':') {
        Some((host, port)) if is_port(port) && !host.is_empty() => Some((host, Some(port))),
        Some(_) => None,
        None if authority.is_empty() => None,
        None => Some((authority, None)),
    }
}

/// Whether a request's `Origin` (when it has one) may use the endpoint:
/// loopback origins always may; others only when listed.
pub(crate) fn is_allowed(origin: &str, allowed: &[String]) -> bool {
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(origin)) {
        return true;
    }
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    split_authority(rest).is_some_and(|(host, _)| is_loopback(host))
}

/// Whether a request's `Host` may use the endpoint: loopback names (any
/// port), and the listed `name` (any port) or `name:port`; `*` allows any.
pub(crate) fn is_allowed_host(header: &str, allowed: &[String]) -> bool {
    let Some((host, port)) = split_authority(header) else {
        return false;
    };
    is_loopback(host)
        || allowed.iter().any(|entry| {
            entry == "*"
                || match split_authority(entry) {
                    Some((name, None)) => name.eq_ignore_ascii_case(host),
                    Some((name, Some(entry_port))) => {
                        name.eq_ignore_ascii_case(host) && port == Some(entry_port)
                    }
                    None => false,
                }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins_pass_foreign_ones_fail() {
        let none: Vec<String> = Vec::new();
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1:8080",
            "http://[::1]:9",
            "https://localhost",
            "http://LOCALHOST:1",
        ] {
            assert!(is_allowed(ok, &none), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io:80",
            "null",
            "file://",
            "http://localhost:99999",
            "http://[::1]x",
        ] {
            assert!(!is_allowed(bad, &none), "{bad}");
        }
        assert!(is_allowed(
            "https://app.example.com",
            &["https://app.example.com".to_owned()]
        ));
    }

    #[test]
    fn loopback_and_listed_hosts_pass_others_fail() {
        let listed = vec!["mcp.example.com".to_owned(), "10.0.0.5:8080".to_owned()];
        for ok in [
            "localhost:8080",
            "127.0.0.1",
            "[::1]:9",
            "MCP.example.com:443",
            "10.0.0.5:8080",
        ] {
            assert!(is_allowed_host(ok, &listed), "{ok}");
        }
        for bad in [
            "evil.example",
            "localhost.evil.example:80",
            "10.0.0.5:9090",
            "127.0.0.1:99999",
            "",
            "[::1",
        ] {
            assert!(!is_allowed_host(bad, &listed), "{bad}");
        }
        assert!(is_allowed_host("anything.example", &["*".to_owned()]));
    }
}
