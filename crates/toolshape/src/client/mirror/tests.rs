use super::{is_text_block_of, read_mirrored};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use toolshape_protocol::CallToolResult;
use toolshape_schema::InstanceText;

/// The block as a server would write it: `{"type":"text","text":...}`.
fn written(text: &str) -> String {
    serde_json::to_string(&json!({"type": "text", "text": text})).unwrap()
}

#[test]
fn the_text_of_a_written_block_is_recognised_however_it_is_escaped() {
    let structured = r#"{"a":"x\"y","b":[1,2],"c":"\\ / é 𝄞 	"}"#;
    assert!(is_text_block_of(&written(structured), structured));
    // The same text with other legal escapes, member order and spacing.
    let escaped = r#" { "text" : "{\"a\":\"x\\\"y\",\"b\":[1,2],\"c\":\"\\\\ \/ \u00e9 \ud834\udd1e \t\"}" , "type":"text" } "#;
    assert!(is_text_block_of(escaped, structured));
}

#[test]
fn any_other_block_is_left_to_the_parser() {
    let structured = r#"{"a":1}"#;
    // A different, longer or shorter text.
    assert!(!is_text_block_of(&written(r#"{"a":2}"#), structured));
    assert!(!is_text_block_of(&written(r#"{"a":1} "#), structured));
    assert!(!is_text_block_of(&written(r#"{"a":"#), structured));
    assert!(!is_text_block_of(&written(""), structured));
    // More members, another type, a repeated or missing member.
    let annotated = json!({"type": "text", "text": structured, "annotations": {}});
    assert!(!is_text_block_of(&annotated.to_string(), structured));
    let image = r#"{"type":"image","text":"{\"a\":1}"}"#;
    assert!(!is_text_block_of(image, structured));
    let twice = r#"{"type":"text","text":"{\"a\":1}","text":"{\"a\":1}"}"#;
    assert!(!is_text_block_of(twice, structured));
    assert!(!is_text_block_of(r#"{"text":"{\"a\":1}"}"#, structured));
    // An escaped member name, a lone surrogate, trailing data.
    let escaped_key = r#"{"typ\u0065":"text","text":"{\"a\":1}"}"#;
    assert!(!is_text_block_of(escaped_key, structured));
    assert!(!is_text_block_of(
        r#"{"type":"text","text":"\ud834"}"#,
        "\u{fffd}"
    ));
    let trailing = r#"{"type":"text","text":"{\"a\":1}"}x"#;
    assert!(!is_text_block_of(trailing, structured));
    assert!(!is_text_block_of("", structured));
}

/// A result as a server would write it, mirror first.
fn result(structured: &Value) -> String {
    let text = structured.to_string();
    json!({"content": [{"type": "text", "text": text}], "structuredContent": structured})
        .to_string()
}

#[test]
fn a_usual_result_is_read_in_one_pass() {
    let structured = json!({"a": "x\"y\\", "b": [1, 2.5, null, true], "c": "é 𝄞\t", "d": {}});
    let written = result(&structured);
    let read = read_mirrored(&written).expect("read");
    assert_eq!(read.structured_json, structured.to_string());
    assert_eq!(read.structured.to_value(), structured);
    assert!(!read.is_error);
    assert_eq!(read.result_type, None);
    // Other member orders, spacing, escapes, `isError` and `resultType`.
    let spaced = r#" { "isError" : true , "structuredContent" : {"a": [1]} ,
        "content" : [ { "text" : "{\"a\": [1]}" , "type" : "text" } ],
        "resultType" : "complete" } "#;
    let read = read_mirrored(spaced).expect("read");
    assert_eq!(read.structured_json, r#"{"a": [1]}"#);
    assert!(read.is_error);
    assert_eq!(
        read.result_type,
        Some(toolshape_protocol::ResultType::Complete)
    );
    let escaped = r#"{"content":[{"type":"text","text":"\u005b1,\"\u00e9\ud834\udd1e\"]"}],"structuredContent":[1,"é𝄞"]}"#;
    assert!(read_mirrored(escaped).is_some());
    // Any JSON value (2026-07-28), a scalar too.
    for value in [json!(7), json!("s"), json!(null), json!([{"x": 1}])] {
        assert!(read_mirrored(&result(&value)).is_some(), "{value}");
    }
    // A value with a `structuredContent` of its own, in either order:
    // the result's member is the one read.
    let nested = r#"{"structuredContent":1}"#;
    let block = r#"{"type":"text","text":"{\"structuredContent\":1}"}"#;
    for written in [
        format!(r#"{{"content":[{block}],"structuredContent":{nested}}}"#),
        format!(r#"{{"structuredContent" :{nested},"content":[{block}]}}"#),
    ] {
        let read = read_mirrored(&written).expect("read");
        assert_eq!(read.structured_json, nested, "{written}");
    }
}

#[test]
fn a_meta_of_the_servers_name_alone_is_marked_to_be_cut_out() {
    let info = r#""io.modelcontextprotocol/serverInfo" : {"name":"s","version":"1"}"#;
    let meta = format!(r#""_meta" : {{ {info} }}"#);
    let sc = r#""structuredContent":{"a":1}"#;
    let content = r#""content":[{"type":"text","text":"{\"a\":1}"}]"#;
    for written in [
        format!("{{{meta},{content},{sc}}}"),
        format!("{{{content} , {meta} , {sc}}}"),
        format!("{{{content},{sc}, {meta} }}"),
    ] {
        let read = read_mirrored(&written).expect("read");
        let cut = read.identity.expect("the server's name");
        let rest = format!("{}{}", &written[..cut.start], &written[cut.end..]);
        let rest: Value = serde_json::from_str(&rest).expect(&rest);
        let mut whole: Value = serde_json::from_str(&written).unwrap();
        whole.as_object_mut().unwrap().remove("_meta");
        assert_eq!(rest, whole, "{written}");
    }
    assert!(
        read_mirrored(&result(&json!({"a": 1})))
            .unwrap()
            .identity
            .is_none()
    );
    // A `_meta` with anything else, twice the name, or none, is not cut.
    for other in [
        r#"{}"#.to_owned(),
        format!(r#"{{ {info}, "x": 1 }}"#),
        format!(r#"{{ {info}, {info} }}"#),
        r#"{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}"#.to_owned(),
        "[]".to_owned(),
    ] {
        let written = format!(r#"{{{content},{sc},"_meta":{other}}}"#);
        assert!(read_mirrored(&written).is_none(), "{written}");
    }
    let twice = format!("{{{meta},{content},{sc},{meta}}}");
    assert!(read_mirrored(&twice).is_none());
}

#[test]
fn any_other_result_is_left_to_the_parser() {
    let sc = r#""structuredContent":{"a":1}"#;
    let block = r#"{"type":"text","text":"{\"a\":1}"}"#;
    let other = [
        // Not the mirror, no block, two blocks, another block.
        format!(r#"{{"content":[{{"type":"text","text":"{{\"a\":2}}"}}],{sc}}}"#),
        format!(r#"{{"content":[],{sc}}}"#),
        format!(r#"{{"content":[{block},{block}],{sc}}}"#),
        format!(r#"{{"content":[{{"type":"image","text":"{{\"a\":1}}"}}],{sc}}}"#),
        // No structured content; other or repeated members.
        format!(r#"{{"content":[{block}]}}"#),
        format!(r#"{{"content":[{block}],{sc},"_meta":{{}}}}"#),
        format!(r#"{{"content":[{block}],{sc},{sc}}}"#),
        format!(r#"{{"content":[{block}],{sc},"isError":false,"isError":false}}"#),
        format!(r#"{{"content":[{block}],{sc},"resultType":"input_required"}}"#),
        format!(r#"{{"content":[{block}],{sc},"isError":0}}"#),
        format!(r#"{{"content":[{block}],"struct\u0075redContent":{{"a":1}}}}"#),
        // The name's bytes first at the end of a text (an escaped quote
        // before them), or as a block's member: not where the result's
        // `structuredContent` is.
        format!(r#"{{"content":[{{"type":"text","text":"x\"structuredContent"}}],{sc}}}"#),
        format!(r#"{{"content":[{{"type":"text","structuredContent" : 1}}],{sc}}}"#),
        // The text the start of the value only, or the value and more.
        format!(r#"{{"content":[{{"type":"text","text":"{{\"a\""}}],{sc}}}"#),
        format!(r#"{{"content":[{{"type":"text","text":"{{\"a\":1}}}}"}}],{sc}}}"#),
        format!(r#"{{{sc},"content":[{{"type":"text","text":"{{\"a\":1}}}}"}}]}}"#),
        // Trailing data (a result cut from a message with more members).
        format!(r#"{{"content":[{block}],{sc}}},"x":1"#),
        format!(r#"{{"content":[{block}],{sc}"#),
        // A control character, a bad escape, an unclosed text.
        "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"a\\\":\t1}\"}],\"structuredContent\":{\"a\":\t1}}"
            .to_owned(),
        format!(r#"{{"content":[{{"type":"text","text":"{{\"a\":\u+031}}"}}],{sc}}}"#),
        format!(r#"{{"content":[{{"type":"text","text":"{{\"a\":1}}\x"}}],{sc}}}"#),
        r#"{"content":[{"type":"text","text":"{\"a\":1}"#.to_owned(),
    ];
    for text in &other {
        assert!(read_mirrored(text).is_none(), "{text}");
    }
}

/// Whatever one byte of a usual result is changed to, or with one byte
/// taken out or put in, a result read in one pass is one serde_json
/// reads too, whose one block repeats its `structuredContent` and whose
/// `structuredContent` is the one read.
#[test]
fn a_result_read_in_one_pass_is_one_the_parser_reads_alike() {
    let structured = json!({"k": "a\"\\/\u{1}é", "n": [-1.5e3, 0], "t": true});
    let mut results = vec![result(&structured), result(&json!(["x", 1]))];
    // The block's text escaped otherwise (as `ensure_ascii` writers do).
    results.push(
        r#"{"isError":false,"structuredContent":{"a":"é/"},"content":[{"type":"text","text":"{\"a\":\"\u00e9\/\"}"}]}"#
            .to_owned(),
    );
    let bytes = b" \t\n\"\\{}[],:0aeu/\x01\x7f";
    for written in &results {
        assert!(read_mirrored(written).is_some(), "{written}");
        let mut read = 0;
        for at in 0..=written.len() {
            let mut edits: Vec<Vec<u8>> = Vec::new();
            for &byte in bytes {
                let mut inserted = written.clone().into_bytes();
                inserted.insert(at, byte);
                edits.push(inserted);
                if at < written.len() {
                    let mut replaced = written.clone().into_bytes();
                    replaced[at] = byte;
                    edits.push(replaced);
                }
            }
            if at < written.len() {
                let mut removed = written.clone().into_bytes();
                removed.remove(at);
                edits.push(removed);
            }
            for edit in edits {
                let Ok(text) = String::from_utf8(edit) else {
                    continue;
                };
                let Some(mirrored) = read_mirrored(&text) else {
                    continue;
                };
                read += 1;
                // What the usual reading makes of it: the same.
                let usual: CallToolResult<&RawValue, &RawValue> =
                    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                let structured_json = usual.structured_content.expect("structured").get();
                assert_eq!(structured_json, mirrored.structured_json, "{text}");
                assert_eq!(usual.content.len(), 1, "{text}");
                assert!(is_text_block_of(usual.content[0].get(), structured_json));
                assert_eq!(usual.is_error(), mirrored.is_error, "{text}");
                assert_eq!(usual.result_type, mirrored.result_type, "{text}");
                assert!(usual.meta.is_none(), "{text}");
                let usual_structured = InstanceText::parse(structured_json).expect("read");
                assert_eq!(
                    usual_structured.repeats_member_names(),
                    mirrored.structured.repeats_member_names()
                );
                // And what serde_json makes of the whole.
                let value: Value =
                    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                let known = ["content", "structuredContent", "isError", "resultType"];
                let object = value.as_object().expect("object");
                assert!(object.keys().all(|k| known.contains(&k.as_str())), "{text}");
                let content = value["content"].as_array().expect("content");
                assert_eq!(content.len(), 1, "{text}");
                assert_eq!(content[0]["type"], "text", "{text}");
                assert_eq!(content[0]["text"], mirrored.structured_json, "{text}");
                let structured = &value["structuredContent"];
                assert_eq!(structured, &mirrored.structured.to_value(), "{text}");
                assert_eq!(value["isError"] == true, mirrored.is_error, "{text}");
            }
        }
        // Spacing and same-meaning changes still read.
        assert!(read > written.len() / 4, "{read} of {written}");
    }
}
