//! Origin validation against DNS rebinding.

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
    let host = if let Some(bracketed) = rest.strip_prefix('[') {
        match bracketed.split_once(']') {
            Some((host, port)) if port.is_empty() || is_port(port) => host,
            _ => return false,
        }
    } else {
        match rest.split_once(':') {
            Some((host, port)) if is_port(port) => host,
            Some(_) => return false,
            None => rest,
        }
    };
    matches!(
        host.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "::1"
    )
}

fn is_port(text: &str) -> bool {
    text.strip_prefix(':')
        .unwrap_or(text)
        .parse::<u16>()
        .is_ok()
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
}
