//! A revision whose handshake failed: refused (the revision unsupported),
//! or failed as no server should (it exited, hung, broke the connection:
//! a finding once another revision is checked).

use toolshape::client::{ClientErrorKind, TransportError};
use toolshape_protocol::ProtocolVersion;

use super::session::{self, OpenError};
use super::{Run, listing, messages};
use crate::finding::{Document, Finding, Location};
use crate::report::{RevisionOutcome, RevisionStatus};
use crate::rules::Rule;

impl Run<'_> {
    /// The outcome of the revision `requested` (`None`: whichever would
    /// have been negotiated; `label` names it) whose handshake failed with
    /// `error`, and its findings.
    pub(super) fn failed_handshake(
        &mut self,
        requested: Option<ProtocolVersion>,
        label: &str,
        error: OpenError,
    ) -> RevisionOutcome {
        if error.dropped > 0 {
            self.findings
                .push(session::flood("the handshake", error.dropped).revision(requested));
        }
        match requested {
            Some(version) => self.handshake_messages(version, error.messages),
            // No revision agreed: what is not JSON at all (logs written to
            // stdout, the likeliest reason a server never seems to answer)
            // is still a finding.
            None => {
                for bytes in &error.messages {
                    let parsed = messages::parse(bytes);
                    if !matches!(parsed, messages::Parsed::Json(_)) {
                        self.findings.extend(messages::unparsable(
                            None,
                            &parsed,
                            "the handshake",
                            None,
                        ));
                    }
                }
            }
        }
        let detail = format!("{label}: {}", error.error);
        let status = match error.error.kind() {
            // A refusal, including a bare `4xx` over HTTP (what a server of
            // the other era answers, by the spec's compatibility matrix).
            _ if requested.is_none() => RevisionStatus::Unreachable,
            ClientErrorKind::Protocol(_) | ClientErrorKind::InvalidResponse(_) => {
                RevisionStatus::Unsupported
            }
            ClientErrorKind::Transport(refusal) if refusal.is_era_refusal() => {
                RevisionStatus::Unsupported
            }
            // What no server should do: exit, hang, break the connection
            // (counted for a server that answered another revision, so a
            // connection refused means it went away; a status such as a
            // `5xx` is no finding of its own).
            ClientErrorKind::Timeout(_)
            | ClientErrorKind::Transport(TransportError::Closed | TransportError::Http(_)) => {
                let what = format!("the {label} handshake");
                let (rule, message, _) = listing::failure(&error.error, &what, "");
                self.failed_handshakes.push(
                    Finding::new(rule, Location::new(Document::Server, ""), message)
                        .revision(requested),
                );
                RevisionStatus::Unreachable
            }
            _ => RevisionStatus::Unreachable,
        };
        if status == RevisionStatus::Unsupported {
            self.findings.push(
                Finding::new(
                    Rule::RevisionUnsupported,
                    Location::new(Document::Server, ""),
                    detail.clone(),
                )
                .revision(requested),
            );
        }
        RevisionOutcome {
            requested: label.to_owned(),
            negotiated: None,
            status,
            detail: Some(detail),
        }
    }
}
