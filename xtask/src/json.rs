//! The little JSON an mdBook preprocessor needs, with the standard library
//! only: mdBook sends `[context, book]` on stdin and reads the book back, and
//! a preprocessor here only rewrites the chapters' `content` strings.

/// Rewrites, with `f`, every string value of JSON object members named
/// `key`; everything else is copied as it is.
pub(crate) fn rewrite_strings(json: &str, key: &str, f: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(json.len());
    let mut chars = json.char_indices().peekable();
    // The last string, and whether a ':' followed it.
    let mut last_string: Option<String> = None;
    let mut value_of: Option<String> = None;
    while let Some((i, c)) = chars.next() {
        if c != '"' {
            out.push(c);
            if c == ':' {
                value_of = last_string.take();
            } else if !c.is_whitespace() {
                value_of = None;
                last_string = None;
            }
            continue;
        }
        // A string: find its end.
        let mut end = i + 1;
        let mut escaped = false;
        for (j, d) in chars.by_ref() {
            if escaped {
                escaped = false;
            } else if d == '\\' {
                escaped = true;
            } else if d == '"' {
                end = j;
                break;
            }
        }
        let raw = &json[i + 1..end];
        if value_of.as_deref() == Some(key) {
            out.push_str(&quote(&f(&unescape(raw))));
        } else {
            out.push('"');
            out.push_str(raw);
            out.push('"');
        }
        last_string = Some(unescape(raw));
        value_of = None;
    }
    out
}

/// The text of a JSON string's body (without its quotes).
pub(crate) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                if (0xD800..0xDC00).contains(&unit) {
                    // A surrogate pair: the low half follows as \uXXXX.
                    let low: String = chars.by_ref().take(6).collect();
                    let low = low.strip_prefix("\\u").and_then(|h| u32::from_str_radix(h, 16).ok()).unwrap_or(0);
                    let c = 0x10000 + ((unit - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF);
                    out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                } else {
                    out.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// `text` as a JSON string, quotes included.
pub(crate) fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The second element of a top-level JSON array, as text.
pub(crate) fn second_element(json: &str) -> Option<&str> {
    let bytes = json.as_bytes();
    let mut depth = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut start = None;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return start.map(|s| json[s..i].trim());
                }
            }
            b',' if depth == 1 => {
                if start.is_some() {
                    return start.map(|s| json[s..i].trim());
                }
                start = Some(i + 1);
            }
            _ => {}
        }
    }
    None
}

/// A parsed JSON value, for reading a tool's report (golangci-lint's
/// SARIF): objects keep their members in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at a path of member names.
    pub(crate) fn at(&self, path: &[&str]) -> Option<&Value> {
        path.iter().try_fold(self, |v, key| v.get(key))
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        if let Value::String(s) = self { Some(s) } else { None }
    }

    pub(crate) fn as_f64(&self) -> Option<f64> {
        if let Value::Number(n) = self { Some(*n) } else { None }
    }

    pub(crate) fn as_array(&self) -> Option<&[Value]> {
        if let Value::Array(a) = self { Some(a) } else { None }
    }
}

/// Parses a whole JSON document; the error says where it went wrong.
pub(crate) fn parse(json: &str) -> Result<Value, String> {
    let mut parser = Parser { text: json, at: 0 };
    let value = parser.value()?;
    parser.space();
    if parser.at != json.len() {
        return Err(format!("JSON: unexpected text at byte {}", parser.at));
    }
    Ok(value)
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn space(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn expect(&mut self, what: &str) -> Result<(), String> {
        if self.text[self.at..].starts_with(what) {
            self.at += what.len();
            Ok(())
        } else {
            Err(format!("JSON: expected `{what}` at byte {}", self.at))
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.space();
        match self.peek() {
            Some(b'{') => {
                self.at += 1;
                let mut members = Vec::new();
                self.space();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Ok(Value::Object(members));
                }
                loop {
                    self.space();
                    let key = self.string()?;
                    self.space();
                    self.expect(":")?;
                    members.push((key, self.value()?));
                    self.space();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Value::Object(members));
                        }
                        _ => return Err(format!("JSON: expected `,` or `}}` at byte {}", self.at)),
                    }
                }
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                self.space();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    self.space();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Value::Array(items));
                        }
                        _ => return Err(format!("JSON: expected `,` or `]` at byte {}", self.at)),
                    }
                }
            }
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.expect("true").map(|()| Value::Bool(true)),
            Some(b'f') => self.expect("false").map(|()| Value::Bool(false)),
            Some(b'n') => self.expect("null").map(|()| Value::Null),
            Some(b'-' | b'0'..=b'9') => {
                let len = self.text[self.at..]
                    .find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
                    .unwrap_or(self.text.len() - self.at);
                let number = &self.text[self.at..self.at + len];
                self.at += len;
                number.parse().map(Value::Number).map_err(|_| format!("JSON: bad number `{number}`"))
            }
            _ => Err(format!("JSON: expected a value at byte {}", self.at)),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect("\"")?;
        let start = self.at;
        let mut escaped = false;
        for (i, c) in self.text[start..].char_indices() {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                self.at = start + i + 1;
                return Ok(unescape(&self.text[start..start + i]));
            }
        }
        Err(format!("JSON: a string from byte {start} does not end"))
    }
}

#[cfg(test)]
mod tests {
    use super::{Value, parse, quote, rewrite_strings, unescape};

    #[test]
    fn parses_a_document_and_says_where_it_breaks() {
        let doc =
            parse(r#" {"runs": [{"results": [{"ruleId": "a\"b", "line": 12, "ok": true, "x": null}]}], "e": {}} "#)
                .unwrap();
        let result = &doc.get("runs").unwrap().as_array().unwrap()[0].at(&["results"]).unwrap().as_array().unwrap()[0];
        assert_eq!(result.get("ruleId").and_then(Value::as_str), Some("a\"b"));
        assert_eq!(result.get("line").and_then(Value::as_f64), Some(12.0));
        assert_eq!(result.get("ok"), Some(&Value::Bool(true)));
        assert_eq!(doc.get("e"), Some(&Value::Object(vec![])));
        assert!(parse(r#"{"a": [1, 2}"#).unwrap_err().contains("byte 11"));
        assert!(parse(r#"{"a": 1} x"#).is_err());
    }

    #[test]
    fn rewrites_only_the_named_members_and_round_trips_escapes() {
        let json = r#"{"name":"a\tb","content":"x\n\"y\"\u00e9","sub":{"content":"z"}}"#;
        let out = rewrite_strings(json, "content", |s| format!("[{s}]"));
        assert_eq!(out, r#"{"name":"a\tb","content":"[x\n\"y\"é]","sub":{"content":"[z]"}}"#);
        assert_eq!(unescape(&quote("tab\t\\ \u{1}")[1..quote("tab\t\\ \u{1}").len() - 1]), "tab\t\\ \u{1}");
    }
}
