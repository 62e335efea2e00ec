//! Reading a POST body up to the size limit, keeping the first bytes of one
//! that passes it: enough to tell an over-long answer to one of the
//! server's own questions (which then fails that question at once) from an
//! over-long request (refused with its id).

use axum::body::{Body, Bytes, HttpBody};
use tokio_stream::StreamExt;

use crate::transport::lines::PREFIX_BYTES;

/// What reading a body gave.
pub(crate) enum ReadBody {
    /// The whole body, within the limit.
    Whole(Bytes),
    /// A body over the limit: its first bytes (the rest is not read).
    TooLarge(Vec<u8>),
    /// The client's stream failed before the body ended.
    Failed,
    /// The body did not arrive whole in time (`HttpOptions::body_read_timeout`).
    TimedOut,
}

/// Reads `body`, at most `limit` bytes of it. A body that says at once it
/// is longer (its `Content-Length`) is refused after its first chunk; one
/// that a limit outside this server cut short counts as over the limit.
pub(crate) async fn read_limited(body: Body, limit: usize) -> ReadBody {
    let declared = HttpBody::size_hint(&body).lower();
    let said_too_large = declared > u64::try_from(limit).unwrap_or(u64::MAX);
    let mut chunks = body.into_data_stream();
    let mut whole: Vec<u8> = Vec::new();
    let mut first: Option<Bytes> = None;
    while let Some(chunk) = chunks.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(error) if cut_by_a_limit(&error) => {
                return ReadBody::TooLarge(prefix(first.as_deref().unwrap_or(&whole), &[]));
            }
            Err(error) if super::deadline::timed_out(&error) => return ReadBody::TimedOut,
            Err(_) => return ReadBody::Failed,
        };
        let held = whole.len() + first.as_ref().map_or(0, Bytes::len);
        if said_too_large || held + chunk.len() > limit {
            return ReadBody::TooLarge(prefix(first.as_deref().unwrap_or(&whole), &chunk));
        }
        // A body in one chunk (the usual case) is kept without a copy.
        match first.take() {
            None if whole.is_empty() => first = Some(chunk),
            Some(earlier) => {
                whole.reserve(earlier.len() + chunk.len());
                whole.extend_from_slice(&earlier);
                whole.extend_from_slice(&chunk);
            }
            None => whole.extend_from_slice(&chunk),
        }
    }
    match first {
        Some(only) => ReadBody::Whole(only),
        None => ReadBody::Whole(Bytes::from(whole)),
    }
}

/// The first [`PREFIX_BYTES`] of `earlier` then `next`.
fn prefix(earlier: &[u8], next: &[u8]) -> Vec<u8> {
    let mut prefix = earlier[..earlier.len().min(PREFIX_BYTES)].to_vec();
    let wanted = PREFIX_BYTES - prefix.len();
    prefix.extend_from_slice(&next[..wanted.min(next.len())]);
    prefix
}

/// Whether a body's stream failed because a limit around this server (a
/// `RequestBodyLimitLayer`, say) cut it: over the limit, as axum's own
/// extractors took it.
fn cut_by_a_limit(error: &axum::Error) -> bool {
    let error: &(dyn std::error::Error + 'static) = error;
    std::iter::successors(Some(error), |error| error.source())
        .any(|error| error.is::<http_body_util::LengthLimitError>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked(chunks: &[&'static [u8]]) -> Body {
        let chunks: Vec<Result<Bytes, std::io::Error>> = chunks
            .iter()
            .map(|chunk| Ok(Bytes::from_static(chunk)))
            .collect();
        Body::from_stream(tokio_stream::iter(chunks))
    }

    #[tokio::test]
    async fn reads_a_body_within_the_limit_in_any_chunks() {
        let whole: [&'static [u8]; 1] = [b"{\"a\":1}"];
        let split: [&'static [u8]; 3] = [b"{\"a\"", b":1", b"}"];
        for chunks in [&whole[..], &split[..], &[][..]] {
            let expected: Vec<u8> = chunks.concat();
            let ReadBody::Whole(body) = read_limited(chunked(chunks), 7).await else {
                panic!("refused {chunks:?}");
            };
            assert_eq!(body.as_ref(), expected.as_slice());
        }
    }

    #[tokio::test]
    async fn keeps_the_first_bytes_of_a_body_over_the_limit() {
        let ReadBody::TooLarge(prefix) = read_limited(chunked(&[b"0123", b"45678"]), 8).await
        else {
            panic!("not refused");
        };
        assert_eq!(prefix, b"012345678");
        let long: &'static [u8] = Box::leak(vec![b'x'; 2000].into_boxed_slice());
        let ReadBody::TooLarge(prefix) = read_limited(chunked(&[b"{", long]), 1000).await else {
            panic!("not refused");
        };
        assert_eq!(prefix.len(), PREFIX_BYTES);
        assert_eq!(prefix[0], b'{');
    }

    #[tokio::test]
    async fn a_body_cut_by_an_outer_limit_is_over_the_limit() {
        let limited = Body::new(http_body_util::Limited::new(
            chunked(&[b"{\"a\"", b":12345}"]),
            6,
        ));
        let ReadBody::TooLarge(prefix) = read_limited(limited, 1000).await else {
            panic!("not refused");
        };
        assert_eq!(prefix, b"{\"a\"");
        let declared = Body::from(vec![b'x'; 2000]);
        assert!(matches!(
            read_limited(declared, 1000).await,
            ReadBody::TooLarge(_)
        ));
    }
}
