//! Answering a server's elicitation at the terminal (`toolshape call`):
//! the question and each field of the form on stderr, the answers read from
//! stdin. Offered (the `elicitation` capability declared) only when stdin is
//! a terminal; otherwise the client declares nothing and a tool that asks
//! gets the server's clear "the client cannot answer" error.

use std::io::{IsTerminal, Write};

use crate::output::quoted;
use serde_json::{Map, Value, json};
use toolshape::client::ClientBuilder;
use toolshape::protocol::ErrorObject;
use toolshape::protocol::asks::{ElicitAction, ElicitParams, ElicitResult};

/// Tries per field before the form is declined.
const MAX_TRIES: usize = 3;

/// `builder`, answering elicitations at the terminal when stdin is one.
pub(crate) fn at_terminal(builder: ClientBuilder) -> ClientBuilder {
    if !std::io::stdin().is_terminal() {
        return builder;
    }
    builder.on_elicit(true, |params| async move {
        tokio::task::spawn_blocking(move || ask(&params))
            .await
            .map_err(|e| ErrorObject::internal_error(e.to_string()))?
    })
}

/// One line typed at the terminal, without its line end (`None` at end of
/// input).
fn read_line() -> Option<String> {
    super::terminal::next_line_blocking()
}

/// Writes `text` to stderr, the server's words in it made safe to show.
fn say(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = write!(stderr, "{}", crate::output::shown(text));
    let _ = stderr.flush();
}

fn answer(action: ElicitAction) -> Result<ElicitResult, ErrorObject> {
    let mut result = ElicitResult::accept(Map::new());
    result.action = action;
    result.content = None;
    Ok(result)
}

/// The answer to a yes / no / cancel question, from what was typed; `None`
/// for anything else (asked again). Empty is the default, yes.
fn choice(typed: &str) -> Option<ElicitAction> {
    match typed.trim().to_lowercase().as_str() {
        "" | "y" | "yes" => Some(ElicitAction::Accept),
        "n" | "no" => Some(ElicitAction::Decline),
        "c" | "cancel" => Some(ElicitAction::Cancel),
        _ => None,
    }
}

/// Asks `prompt` until the answer is yes, no or cancel (a few tries, then
/// cancel; the end of input cancels too).
fn choose(prompt: &str) -> ElicitAction {
    for _ in 0..MAX_TRIES {
        say(prompt);
        let Some(line) = read_line() else {
            return ElicitAction::Cancel;
        };
        match choice(&line) {
            Some(action) => return action,
            None => say("  answer y (yes), n (no) or c (cancel)\n"),
        }
    }
    ElicitAction::Cancel
}

fn ask(params: &ElicitParams) -> Result<ElicitResult, ErrorObject> {
    say(&format!("\nThe server asks: {}\n", quoted(&params.message)));
    if let Some(url) = &params.url {
        say(&format!("Open this address to continue: {}\n", quoted(url)));
        return answer(choose("Done? [Y]es / [n]o / [c]ancel: "));
    }
    match choose("Answer? [Y]es / [n]o (decline) / [c]ancel: ") {
        ElicitAction::Accept => {}
        other => return answer(other),
    }
    let schema = params.requested_schema.clone().unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let needed = required.contains(&name.as_str());
        match field(name, property, needed) {
            Field::Value(value) => {
                content.insert(name.clone(), value);
            }
            Field::Skipped => {}
            Field::GaveUp => return answer(ElicitAction::Decline),
            Field::Cancelled => return answer(ElicitAction::Cancel),
        }
    }
    Ok(ElicitResult::accept(content))
}

enum Field {
    Value(Value),
    Skipped,
    /// No answer that fits in [`MAX_TRIES`]: the form is declined.
    GaveUp,
    /// The input ended.
    Cancelled,
}

/// Asks for one field until the answer fits it (a few tries).
fn field(name: &str, property: &Value, required: bool) -> Field {
    let kind = property
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    let options = choices(property);
    let default = property.get("default");
    let mut hint = kind.to_owned();
    if !options.is_empty() {
        hint = format!("one of {}", options.join(", "));
    }
    if let Some(default) = default {
        hint.push_str(&format!("; default {default}"));
    }
    if required {
        hint.push_str("; required");
    }
    let label = property
        .get("title")
        .or_else(|| property.get("description"))
        .and_then(Value::as_str)
        .unwrap_or(name);
    for _ in 0..MAX_TRIES {
        say(&format!("  {} ({}): ", quoted(label), quoted(&hint)));
        let Some(line) = read_line() else {
            return Field::Cancelled;
        };
        let line = line.trim();
        if line.is_empty() {
            if let Some(default) = default {
                return Field::Value(default.clone());
            }
            if !required {
                return Field::Skipped;
            }
            say("  an answer is required\n");
            continue;
        }
        match parse(kind, line, &options) {
            Ok(value) => return Field::Value(value),
            Err(problem) => say(&format!("  {problem}\n")),
        }
    }
    Field::GaveUp
}

/// The allowed values of an enum field (`enum`, `oneOf` of `const`s, or an
/// array's items).
fn choices(property: &Value) -> Vec<String> {
    let items = property.get("items").unwrap_or(property);
    if let Some(values) = items.get("enum").and_then(Value::as_array) {
        return values.iter().map(plain).collect();
    }
    items
        .get("oneOf")
        .or_else(|| items.get("anyOf"))
        .and_then(Value::as_array)
        .map(|options| {
            options
                .iter()
                .filter_map(|option| option.get("const"))
                .map(plain)
                .collect()
        })
        .unwrap_or_default()
}

fn plain(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

fn parse(kind: &str, line: &str, options: &[String]) -> Result<Value, String> {
    let one = |text: &str| -> Result<Value, String> {
        if !options.is_empty() && !options.iter().any(|option| option == text) {
            return Err(format!("choose one of {}", options.join(", ")));
        }
        Ok(json!(text))
    };
    match kind {
        "boolean" => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(json!(true)),
            "n" | "no" | "false" => Ok(json!(false)),
            _ => Err("answer yes or no".into()),
        },
        "integer" => line
            .parse::<i64>()
            .map(|n| json!(n))
            .map_err(|_| "a whole number, please".into()),
        "number" => line
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map(|n| json!(n))
            .ok_or_else(|| "a number, please".into()),
        "array" => line
            .split(',')
            .map(|item| one(item.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        _ => one(line),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use toolshape::protocol::asks::ElicitAction;

    use super::{choice, choices, parse};

    #[test]
    fn yes_no_and_cancel_in_any_case_and_nothing_else() {
        for (typed, expected) in [
            ("", Some(ElicitAction::Accept)),
            ("Y", Some(ElicitAction::Accept)),
            (" yes ", Some(ElicitAction::Accept)),
            ("N", Some(ElicitAction::Decline)),
            ("NO", Some(ElicitAction::Decline)),
            ("No", Some(ElicitAction::Decline)),
            ("Cancel", Some(ElicitAction::Cancel)),
            ("c", Some(ElicitAction::Cancel)),
            ("nope", None),
            ("yess", None),
        ] {
            assert_eq!(choice(typed), expected, "{typed:?}");
        }
    }

    #[test]
    fn answers_are_parsed_by_the_fields_type() {
        assert_eq!(parse("boolean", "yes", &[]), Ok(json!(true)));
        assert_eq!(parse("integer", "42", &[]), Ok(json!(42)));
        assert!(parse("integer", "4.2", &[]).is_err());
        assert!(parse("number", "NaN", &[]).is_err());
        let options = choices(&json!({"type": "string", "enum": ["a", "b"]}));
        assert_eq!(parse("string", "b", &options), Ok(json!("b")));
        assert!(parse("string", "c", &options).is_err());
        let titled = choices(&json!({"oneOf": [{"const": "x", "title": "X"}, {"const": "y"}]}));
        assert_eq!(titled, ["x", "y"]);
        let many = choices(&json!({"type": "array", "items": {"enum": ["p", "q"]}}));
        assert_eq!(parse("array", "p, q", &many), Ok(json!(["p", "q"])));
    }
}
