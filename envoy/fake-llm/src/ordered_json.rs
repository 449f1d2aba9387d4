//! JSON written with its keys in the order given: the providers' own order.
//! serde_json's `Value` sorts object keys (unless a feature is switched on
//! for the whole workspace), and a fake that sorts keys would hide a filter
//! that re-serializes what it forwards.

use std::fmt;

use serde_json::Value;

/// A JSON value whose objects keep their key order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A non-negative integer.
    UInt(u64),
    /// A number with a fraction.
    Float(f64),
    /// A number as serde_json read it (from a request).
    Num(serde_json::Number),
    /// A string (escaped when written).
    Str(String),
    /// An array.
    Arr(Vec<Json>),
    /// An object, keys in writing order.
    Obj(Vec<(String, Json)>),
}

impl Json {
    /// Sets `key` on an object: replaced in place when present, appended
    /// otherwise. Does nothing on a non-object.
    pub fn set(&mut self, key: &str, value: impl Into<Json>) {
        if let Json::Obj(fields) = self {
            let value = value.into();
            match fields.iter_mut().find(|(name, _)| name == key) {
                Some((_, slot)) => *slot = value,
                None => fields.push((key.to_owned(), value)),
            }
        }
    }
}

impl Json {
    /// The value pretty-printed as Google's REST front end writes a Gemini
    /// JSON-array stream's elements: two-space indents, `"key": value`.
    pub fn pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(&mut out, 0);
        out
    }

    fn write_pretty(&self, out: &mut String, depth: usize) {
        let indent = |out: &mut String, depth: usize| {
            out.push('\n');
            out.push_str(&"  ".repeat(depth));
        };
        match self {
            Json::Arr(items) if !items.is_empty() => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    item.write_pretty(out, depth + 1);
                }
                indent(out, depth);
                out.push(']');
            }
            Json::Obj(fields) if !fields.is_empty() => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    indent(out, depth + 1);
                    out.push_str(&Json::Str(key.clone()).to_string());
                    out.push_str(": ");
                    value.write_pretty(out, depth + 1);
                }
                indent(out, depth);
                out.push('}');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
}

fn write_str(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    let escaped = serde_json::to_string(text).map_err(|_| fmt::Error)?;
    f.write_str(&escaped)
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{b}"),
            Json::UInt(n) => write!(f, "{n}"),
            Json::Float(x) => {
                let number = serde_json::Number::from_f64(*x).ok_or(fmt::Error)?;
                write!(f, "{number}")
            }
            Json::Num(number) => write!(f, "{number}"),
            Json::Str(text) => write_str(f, text),
            Json::Arr(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Json::Obj(fields) => {
                f.write_str("{")?;
                for (i, (key, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write_str(f, key)?;
                    write!(f, ":{value}")?;
                }
                f.write_str("}")
            }
        }
    }
}

impl From<&str> for Json {
    fn from(text: &str) -> Self {
        Json::Str(text.to_owned())
    }
}

impl From<String> for Json {
    fn from(text: String) -> Self {
        Json::Str(text)
    }
}

impl From<&String> for Json {
    fn from(text: &String) -> Self {
        Json::Str(text.clone())
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Self {
        Json::Bool(b)
    }
}

impl From<u64> for Json {
    fn from(n: u64) -> Self {
        Json::UInt(n)
    }
}

impl From<usize> for Json {
    fn from(n: usize) -> Self {
        Json::UInt(n as u64)
    }
}

impl From<f64> for Json {
    fn from(x: f64) -> Self {
        Json::Float(x)
    }
}

impl From<Vec<Json>> for Json {
    fn from(items: Vec<Json>) -> Self {
        Json::Arr(items)
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(value: Option<T>) -> Self {
        value.map_or(Json::Null, Into::into)
    }
}

/// A serde_json value (from a request): its objects come in serde_json's
/// (sorted) order.
impl From<&Value> for Json {
    fn from(value: &Value) -> Self {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Num(n.clone()),
            Value::String(s) => Json::Str(s.clone()),
            Value::Array(items) => Json::Arr(items.iter().map(Json::from).collect()),
            Value::Object(map) => Json::Obj(
                map.iter()
                    .map(|(k, v)| (k.clone(), Json::from(v)))
                    .collect(),
            ),
        }
    }
}

/// An object with keys in the order written: `jobj! {"a": 1u64, "b": "x"}`.
#[macro_export]
macro_rules! jobj {
    () => { $crate::ordered_json::Json::Obj(Vec::new()) };
    ($($key:literal : $value:expr),+ $(,)?) => {
        $crate::ordered_json::Json::Obj(vec![
            $(($key.to_owned(), $crate::ordered_json::Json::from($value))),+
        ])
    };
}

/// An array: `jarr![jobj! {...}, "x"]`.
#[macro_export]
macro_rules! jarr {
    () => { $crate::ordered_json::Json::Arr(Vec::new()) };
    ($($value:expr),+ $(,)?) => {
        $crate::ordered_json::Json::Arr(vec![$($crate::ordered_json::Json::from($value)),+])
    };
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keeps_key_order_and_escapes() {
        let mut value = jobj! {
            "type": "x",
            "b": 2u64,
            "a": jarr!["q\"uote\n", true, Json::Null],
            "f": 1.5,
            "e": jobj! {},
        };
        assert_eq!(
            value.to_string(),
            r#"{"type":"x","b":2,"a":["q\"uote\n",true,null],"f":1.5,"e":{}}"#
        );
        value.set("b", 3u64);
        value.set("z", "last");
        assert_eq!(
            value.to_string(),
            r#"{"type":"x","b":3,"a":["q\"uote\n",true,null],"f":1.5,"e":{},"z":"last"}"#
        );
    }

    #[test]
    fn pretty_indents_and_round_trips() {
        let value = jobj! {"a": jarr![1u64, jobj! {"b": "x"}], "e": jarr![], "o": jobj! {}};
        let pretty = value.pretty();
        assert_eq!(
            pretty,
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"x\"\n    }\n  ],\n  \"e\": [],\n  \"o\": {}\n}"
        );
        let parsed: Value = serde_json::from_str(&pretty).unwrap();
        assert_eq!(parsed.to_string(), value.to_string());
    }

    #[test]
    fn from_serde_value_round_trips() {
        let value: Value =
            serde_json::from_str(r#"{"k":[1,-2,0.5,"s",null,{"n":false}]}"#).unwrap();
        let text = Json::from(&value).to_string();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }
}
