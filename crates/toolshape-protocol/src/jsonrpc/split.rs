//! Finding a success response's id and result by its layout, without
//! reading the result: a reader that parses the result anyway (into the
//! type it expects) then reads it once instead of twice.

use super::id::RequestId;

/// A success response whose members lie as most servers write them:
/// `jsonrpc` (exactly `"2.0"`) and `id`, each once and in either order, then
/// `result`, which runs to the message's closing brace. Whitespace between
/// tokens is allowed; member names with escapes, any other member, or any
/// other order give `None` (read such a message with [`classify`]).
///
/// **The result text is not checked.** It is the result only if it parses
/// as exactly one JSON value: then the message is exactly
/// `{"jsonrpc":"2.0","id":ID,"result":RESULT}`. When it does not parse (the
/// message may still be valid, with more members after `result`), read the
/// whole message with [`classify`].
///
/// [`classify`]: super::classify
pub fn split_success(message: &str) -> Option<(RequestId, &str)> {
    let mut rest = skip_space(message).strip_prefix('{')?;
    let (mut version, mut id) = (false, None);
    loop {
        let (key, after) = plain_key(rest)?;
        let after = skip_space(skip_space(after).strip_prefix(':')?);
        match key {
            "jsonrpc" if !version => {
                rest = after.strip_prefix(r#""2.0""#)?;
                version = true;
            }
            "id" if id.is_none() => {
                let mut values = serde_json::Deserializer::from_str(after).into_iter();
                id = Some(values.next()?.ok()?);
                rest = after.get(values.byte_offset()..)?;
            }
            "result" if version => {
                let body = space_trimmed_end(space_trimmed_end(after).strip_suffix('}')?);
                return (!body.is_empty()).then_some((id?, body));
            }
            _ => return None,
        }
        rest = skip_space(rest).strip_prefix(',')?;
    }
}

/// JSON's whitespace: not the whole of Unicode's, as `str::trim` has it.
const SPACE: [char; 4] = [' ', '\t', '\n', '\r'];

fn skip_space(text: &str) -> &str {
    text.trim_start_matches(SPACE)
}

fn space_trimmed_end(text: &str) -> &str {
    text.trim_end_matches(SPACE)
}

/// A member name without escapes at the start of `text` (after optional
/// whitespace), and what follows its closing quote.
fn plain_key(text: &str) -> Option<(&str, &str)> {
    let text = skip_space(text).strip_prefix('"')?;
    let end = text.find(['"', '\\'])?;
    (text.as_bytes().get(end) == Some(&b'"')).then(|| (&text[..end], &text[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_id_and_the_result_of_the_usual_layouts() {
        let message = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        assert_eq!(
            split_success(message),
            Some((RequestId::Number(7), r#"{"content":[]}"#))
        );
        let spaced = " { \"id\" : \"a\\\"1\" , \"jsonrpc\" : \"2.0\" , \"result\" : [1, 2] } \r";
        assert_eq!(
            split_success(spaced),
            Some((RequestId::String("a\"1".into()), "[1, 2]"))
        );
    }

    #[test]
    fn any_other_layout_is_left_to_classify() {
        for message in [
            // result first, or a member before or between
            r#"{"result":{},"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","x":0,"id":1,"result":{}}"#,
            // a repeated, missing or wrong member
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            // an escaped member name, no result text, no closing brace
            r#"{"jsonrpc":"2.0","id":1,"res\u0075lt":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result": }"#,
            r#"{"jsonrpc":"2.0","id":1,"result":0"#,
            "",
            "[]",
            // whitespace JSON does not allow
            "\u{a0}{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\u{2028}",
        ] {
            assert_eq!(split_success(message), None, "{message}");
        }
    }

    #[test]
    fn what_follows_the_result_or_is_missing_shows_when_the_text_is_parsed() {
        // Valid messages with members after `result`: the text cut is not
        // one JSON value, which is how a reader tells it must classify.
        for message in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":1},"_x":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":"}"},"error":{"b":"}"}}"#,
            // and an invalid one, its closing brace missing
            r#"{"jsonrpc":"2.0","id":1,"result":{}"#,
        ] {
            let (_, text) = split_success(message).expect("the layout");
            assert!(serde_json::from_str::<serde::de::IgnoredAny>(text).is_err());
        }
    }
}
