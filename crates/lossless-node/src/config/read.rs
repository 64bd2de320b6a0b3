//! Typed reading of a parsed TOML tree: each value is read together with its
//! key path and position, so any refusal names both.

use toml_edit::{Item, Table, TableLike, Value};

use super::error::Fault;

/// A node of the parsed document: a table entry, an array element, or one
/// table of an array of tables.
#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Value(&'a Value),
    Table(&'a Table),
}

/// One value in the document with the key path that leads to it.
#[derive(Clone)]
pub(crate) struct Field<'a> {
    /// The key as written (unquoted); empty for the root and array elements.
    pub name: &'a str,
    /// The full key path, as messages show it: `ports."eth0".pfc.willing`.
    pub path: String,
    /// Offset of the key (used when the value itself has no position, as an
    /// implicit table made by a dotted key or a `[a.b]` header).
    key_at: usize,
    node: Node<'a>,
}

/// The kind of value, as the messages name it.
fn value_kind(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date-time",
        Value::Array(_) => "an array",
        Value::InlineTable(_) => "a table",
    }
}

/// How a key is written in a key path: bare when TOML allows it, quoted otherwise.
pub(crate) fn segment(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_string()
    } else {
        quoted(name)
    }
}

/// A TOML basic string holding `s`.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl<'a> Field<'a> {
    /// The document root.
    pub fn root(root: &'a Table) -> Field<'a> {
        Field {
            name: "",
            path: String::new(),
            key_at: 0,
            node: Node::Table(root),
        }
    }

    /// Offset of the value; for a table made by a `[header]` or a dotted
    /// key, of its key.
    pub fn at(&self) -> usize {
        let span = match self.node {
            Node::Item(Item::Table(_)) => None,
            Node::Item(i) => i.span(),
            Node::Value(v) => v.span(),
            Node::Table(t) => t.span(),
        };
        span.map_or(self.key_at, |s| s.start)
    }

    /// Offset of the key naming this field.
    pub fn key_at(&self) -> usize {
        self.key_at
    }

    pub fn fault(&self, reason: impl Into<String>) -> Fault {
        Fault {
            at: self.at(),
            key: self.path.clone(),
            reason: reason.into(),
        }
    }

    /// Refuses this field's key (pointing at the key, not the value).
    pub fn unknown(&self, expected: &[&str]) -> Fault {
        Fault {
            at: self.key_at,
            key: self.path.clone(),
            reason: format!("unknown key; expected one of: {}", expected.join(", ")),
        }
    }

    /// What kind of value this is, as the messages name it.
    pub fn kind(&self) -> &'static str {
        match self.node {
            Node::Item(Item::Value(v)) | Node::Value(v) => value_kind(v),
            Node::Item(Item::ArrayOfTables(_)) => "an array of tables",
            Node::Item(_) | Node::Table(_) => "a table",
        }
    }

    fn wrong_type(&self, expected: &str) -> Fault {
        self.fault(format!("expected {expected}, found {}", self.kind()))
    }

    fn value(&self) -> Option<&'a Value> {
        match self.node {
            Node::Item(Item::Value(v)) | Node::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn bool(&self) -> Result<bool, Fault> {
        self.value()
            .and_then(Value::as_bool)
            .ok_or_else(|| self.wrong_type("a boolean"))
    }

    pub fn str(&self) -> Result<&'a str, Fault> {
        self.value()
            .and_then(Value::as_str)
            .ok_or_else(|| self.wrong_type("a string"))
    }

    pub fn int(&self) -> Result<i64, Fault> {
        self.value()
            .and_then(Value::as_integer)
            .ok_or_else(|| self.wrong_type("an integer"))
    }

    /// An integer in `0..=max`.
    pub fn uint(&self, max: u64) -> Result<u64, Fault> {
        let v = self.int()?;
        match u64::try_from(v) {
            Ok(v) if v <= max => Ok(v),
            _ => Err(self.fault(format!("{v} is out of range 0..={max}"))),
        }
    }

    /// The entries of a table (a `[header]` table, a dotted-key table or an
    /// inline table), in file order.
    pub fn entries(&self) -> Result<Vec<Field<'a>>, Fault> {
        let table: &'a dyn TableLike = match self.node {
            Node::Item(i) => i.as_table_like(),
            Node::Value(v) => v.as_inline_table().map(|t| t as &dyn TableLike),
            Node::Table(t) => Some(t as &dyn TableLike),
        }
        .ok_or_else(|| self.wrong_type("a table"))?;
        Ok(table
            .iter()
            .map(|(name, item)| Field {
                name,
                path: if self.path.is_empty() {
                    segment(name)
                } else {
                    format!("{}.{}", self.path, segment(name))
                },
                key_at: table
                    .key(name)
                    .and_then(|k| k.span())
                    .map_or(self.at(), |s| s.start),
                node: Node::Item(item),
            })
            .collect())
    }

    /// The same field shown under another key path.
    pub fn with_path(mut self, path: String) -> Field<'a> {
        self.path = path;
        self
    }

    /// The elements of an array, or the tables of an array of tables; each
    /// element's path is this one with `[i]` appended.
    pub fn elements(&self) -> Result<Vec<Field<'a>>, Fault> {
        let nodes: Vec<Node<'a>> = match self.node {
            Node::Item(Item::ArrayOfTables(a)) => a.iter().map(Node::Table).collect(),
            _ => match self.value() {
                Some(Value::Array(a)) => a.iter().map(Node::Value).collect(),
                _ => return Err(self.wrong_type("an array")),
            },
        };
        Ok(nodes
            .into_iter()
            .enumerate()
            .map(|(i, node)| Field {
                name: "",
                path: format!("{}[{i}]", self.path),
                key_at: self.at(),
                node,
            })
            .collect())
    }

    /// An array of exactly eight integers in `0..=255`, with their offsets.
    pub fn eight(&self, what: &str) -> Result<([u8; 8], Vec<usize>), Fault> {
        let elements = self.elements()?;
        if elements.len() != 8 {
            return Err(self.fault(format!(
                "expected 8 values ({what}), found {}",
                elements.len()
            )));
        }
        let mut out = [0u8; 8];
        for (slot, e) in out.iter_mut().zip(&elements) {
            *slot = u8::try_from(e.uint(u8::MAX.into())?).unwrap_or(u8::MAX);
        }
        Ok((out, elements.iter().map(Field::at).collect()))
    }
}
