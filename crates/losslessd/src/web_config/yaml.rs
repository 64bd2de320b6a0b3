//! A YAML document as a tree whose every node keeps its line, so a web configuration's
//! mistakes are named at `file:line` (yaml-rust2's event parser gives the marks; its
//! `Yaml` tree drops them).

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A node and the line it starts on (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub line: usize,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A scalar and whether it was quoted (a quoted `true` is a string).
    Scalar {
        text: String,
        quoted: bool,
    },
    Seq(Vec<Node>),
    /// Keys in the file's order; a key appears once.
    Map(Vec<(Key, Node)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub name: String,
    pub line: usize,
}

/// What makes a document unreadable, and the line where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub what: String,
}

impl Node {
    /// A plain empty scalar or `null`/`~`: YAML's null.
    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar { text, quoted: false }
            if text.is_empty() || text == "~" || text == "null" || text == "Null" || text == "NULL")
    }
}

/// Parses one document. An empty file is an empty map (as YAML's empty document is
/// null, which a configuration reads as "nothing set"). Anchors, aliases, tags and
/// more than one document are refused: a configuration file needs none of them.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut b, true).map_err(|e| SyntaxError {
        line: e.marker().line(),
        what: e.info().to_string(),
    })?;
    if let Some(e) = b.error {
        return Err(e);
    }
    if b.documents > 1 {
        return Err(SyntaxError {
            line: b.second_document_line,
            what: "more than one YAML document: the file holds one".to_string(),
        });
    }
    Ok(b.root.unwrap_or(Node {
        line: 1,
        value: Value::Map(Vec::new()),
    }))
}

enum Open {
    Seq(Node),
    /// The map, and the key read whose value is awaited.
    Map(Node, Option<Key>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    root: Option<Node>,
    documents: usize,
    second_document_line: usize,
    error: Option<SyntaxError>,
}

impl Builder {
    fn fail(&mut self, line: usize, what: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(SyntaxError {
                line,
                what: what.into(),
            });
        }
    }

    /// A finished node: the value of the open collection's next slot.
    fn place(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Open::Seq(seq)) => {
                if let Value::Seq(items) = &mut seq.value {
                    items.push(node);
                }
            }
            Some(Open::Map(map, pending)) => match pending.take() {
                None => {
                    let Value::Scalar { text, .. } = node.value else {
                        let line = node.line;
                        self.fail(line, "a key must be a plain word, not a list or a map");
                        return;
                    };
                    let Value::Map(entries) = &map.value else {
                        return;
                    };
                    if let Some((first, _)) = entries.iter().find(|(k, _)| k.name == text) {
                        let what = format!("{text:?} appears twice (first at line {})", first.line);
                        self.fail(node.line, what);
                        return;
                    }
                    *pending = Some(Key {
                        name: text,
                        line: node.line,
                    });
                }
                Some(key) => {
                    if let Value::Map(entries) = &mut map.value {
                        entries.push((key, node));
                    }
                }
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let line = mark.line();
        match ev {
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents == 2 {
                    self.second_document_line = line;
                }
            }
            Event::Alias(_) => self.fail(line, "aliases (*name) are not taken here"),
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 {
                    self.fail(line, "anchors (&name) are not taken here");
                }
                if tag.is_some() {
                    self.fail(line, "tags (!name) are not taken here");
                }
                let quoted = !matches!(style, TScalarStyle::Plain);
                self.place(Node {
                    line,
                    value: Value::Scalar { text, quoted },
                });
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                if anchor != 0 {
                    self.fail(line, "anchors (&name) are not taken here");
                }
                if tag.is_some() {
                    self.fail(line, "tags (!name) are not taken here");
                }
                let open = if matches!(ev, Event::SequenceStart(..)) {
                    Open::Seq(Node {
                        line,
                        value: Value::Seq(Vec::new()),
                    })
                } else {
                    Open::Map(
                        Node {
                            line,
                            value: Value::Map(Vec::new()),
                        },
                        None,
                    )
                };
                self.stack.push(open);
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(Open::Seq(node) | Open::Map(node, _)) = self.stack.pop() {
                    self.place(node);
                }
            }
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(n: &Node) -> &[(Key, Node)] {
        match &n.value {
            Value::Map(m) => m,
            _ => &[],
        }
    }

    #[test]
    fn every_key_and_value_keeps_its_line() {
        let doc = parse("a:\n  b: 1\n  c:\n    - x\n    - \"y\"\nd: true\n").expect("parses");
        let top = map(&doc);
        assert_eq!(top.len(), 2);
        assert_eq!((top[0].0.name.as_str(), top[0].0.line), ("a", 1));
        let a = map(&top[0].1);
        assert_eq!(
            (a[0].0.name.as_str(), a[0].0.line, a[0].1.line),
            ("b", 2, 2)
        );
        let Value::Seq(items) = &a[1].1.value else {
            panic!("c is a list: {:?}", a[1].1);
        };
        assert_eq!(items.iter().map(|i| i.line).collect::<Vec<_>>(), [4, 5]);
        assert_eq!(
            items[1].value,
            Value::Scalar {
                text: "y".into(),
                quoted: true
            }
        );
        assert_eq!(top[1].0.line, 6);
    }

    #[test]
    fn what_a_configuration_never_needs_is_refused_at_its_line() {
        for (text, line, words) in [
            ("a: 1\na: 2\n", 2, "appears twice"),
            ("a: &x 1\nb: *x\n", 1, "anchors"),
            ("a: !!str 1\n", 1, "tags"),
            ("a: 1\n---\nb: 2\n", 2, "more than one"),
            ("a: [1, 2\n", 2, ""),
            ("a:\n  - b\n c: 1\n", 3, ""),
        ] {
            let e = parse(text).expect_err(text);
            assert_eq!(e.line, line, "{text:?}: {e:?}");
            assert!(e.what.contains(words), "{text:?}: {e:?}");
        }
        assert_eq!(parse("").expect("empty").value, Value::Map(Vec::new()));
    }
}
