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

#[cfg(test)]
mod tests {
    use super::{quote, rewrite_strings, unescape};

    #[test]
    fn rewrites_only_the_named_members_and_round_trips_escapes() {
        let json = r#"{"name":"a\tb","content":"x\n\"y\"\u00e9","sub":{"content":"z"}}"#;
        let out = rewrite_strings(json, "content", |s| format!("[{s}]"));
        assert_eq!(out, r#"{"name":"a\tb","content":"[x\n\"y\"é]","sub":{"content":"[z]"}}"#);
        assert_eq!(unescape(&quote("tab\t\\ \u{1}")[1..quote("tab\t\\ \u{1}").len() - 1]), "tab\t\\ \u{1}");
    }
}
