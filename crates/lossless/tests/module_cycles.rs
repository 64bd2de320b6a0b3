#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! No import circles between the modules of a crate: within every crate of the
//! workspace, the modules' references to each other (`use crate::..`, `crate::..`
//! and `super::..` paths anywhere in the code) point one way. Two modules that each
//! reach into the other are one module split in the wrong place, or a shared type
//! that wants a module of its own below both.
//!
//! The rules:
//! - a module is a file under the crate's `src/` (`a/b.rs` and `a/b/mod.rs` are
//!   `a::b`; `lib.rs` and `main.rs` the root); `src/bin/` is left out, and so is a
//!   file that is a `#[cfg(test)]` module;
//! - a reference to `crate::a::b::C` is an edge to the longest prefix that is a
//!   module (`a::b`); `super::` and `self::` are resolved from where they are written
//!   (inline modules included); a path that names no module is no edge;
//! - an edge between a module and its own ancestor or descendant is no edge (a
//!   parent declares and re-exports its children);
//! - `#[cfg(test)]` items (the `mod tests` blocks) and comments do not count;
//!   paths inside macro invocations do.
//!
//! The circles still in the tree are listed in [`KNOWN`], and what is found must
//! match it exactly: a new circle fails, and one broken must be taken off the list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The import circles the tree still has, per crate: each one's modules (`::`-joined
/// paths from the crate root). Break one, and take it off.
const KNOWN: &[(&str, &[&str])] = &[];

type Module = Vec<String>;

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, `bin/` directly under the crate's `src/` left out.
fn rs_files(src: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let p = entry.path();
        if p.is_dir() {
            if p != src.join("bin") {
                rs_files(src, &p, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module a file is: `a/b.rs` and `a/b/mod.rs` are `[a, b]`, `lib.rs` is `[]`.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main") {
        parts.clear();
    } else if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts
}

/// `#[cfg(test)]`, `#[cfg(all(test, ..))]`: compiled for the tests only.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if !a.path().is_ident("cfg") {
            return false;
        }
        let Ok(list) = a.meta.require_list() else {
            return false;
        };
        let tokens = list.tokens.to_string();
        let words: Vec<&str> = tokens
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        words.contains(&"test") && !words.contains(&"not") && !words.contains(&"any")
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// What one file refers to: absolute module paths (not yet cut to a module), and the
/// `#[cfg(test)] mod x;` files it declares.
struct FileRefs {
    /// Where the visitor is: the file's module, then any inline modules.
    at: Module,
    refs: BTreeSet<Module>,
    test_modules: Vec<Module>,
}

impl FileRefs {
    /// The absolute path `segments` names from here, if it starts at `crate`,
    /// `super` or `self`.
    fn add(&mut self, segments: &[String]) {
        let Some(first) = segments.first() else {
            return;
        };
        let abs = match first.as_str() {
            "crate" => segments[1..].to_vec(),
            "self" => self.at.iter().chain(&segments[1..]).cloned().collect(),
            "super" => {
                let mut base = self.at.clone();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                base
            }
            _ => return,
        };
        self.refs.insert(abs);
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.add(prefix);
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.add(prefix);
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.add(prefix),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for FileRefs {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if is_test_only(item_attrs(item)) {
            if let syn::Item::Mod(m) = item {
                if m.content.is_none() {
                    let mut file = self.at.clone();
                    file.push(m.ident.to_string());
                    self.test_modules.push(file);
                }
            }
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.at.push(m.ident.to_string());
        syn::visit::visit_item_mod(self, m);
        self.at.pop();
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => return syn::visit::visit_impl_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.add(&segments);
        syn::visit::visit_path(self, p);
    }

    /// A macro's tokens are not parsed; the paths in them are read from its text
    /// (`crate :: a :: b`).
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let text = m.tokens.to_string();
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            if matches!(words[i], "crate" | "super" | "self") {
                let mut segments = vec![words[i].to_string()];
                let mut j = i + 1;
                while j + 1 < words.len() && words[j] == "::" {
                    let w = words[j + 1];
                    if !w.chars().all(|c| c.is_alphanumeric() || c == '_') {
                        break;
                    }
                    segments.push(w.to_string());
                    j += 2;
                }
                if segments.len() > 1 {
                    self.add(&segments);
                }
                i = j;
            } else {
                i += 1;
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

/// One crate's module graph: every module, and the modules each refers to.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    rs_files(src, src, &mut files);
    let mut parsed = Vec::new();
    let mut test_only: Vec<Module> = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let ast = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()));
        let mut v = FileRefs {
            at: module_of(src, file),
            refs: BTreeSet::new(),
            test_modules: Vec::new(),
        };
        v.visit_file(&ast);
        test_only.append(&mut v.test_modules);
        parsed.push((module_of(src, file), v.refs));
    }
    let modules: BTreeSet<Module> = parsed
        .iter()
        .map(|(m, _)| m.clone())
        .filter(|m| !test_only.iter().any(|t| m.starts_with(t)))
        .collect();
    let mut g: BTreeMap<Module, BTreeSet<Module>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for (m, refs) in parsed {
        if !modules.contains(&m) {
            continue;
        }
        for r in refs {
            let Some(to) = (0..=r.len())
                .rev()
                .map(|k| r[..k].to_vec())
                .find(|p| modules.contains(p))
            else {
                continue;
            };
            if to.starts_with(&m) || m.starts_with(&to) {
                continue;
            }
            g.get_mut(&m).unwrap().insert(to);
        }
    }
    g
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(g: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<BTreeSet<Module>> {
    struct Tarjan<'a> {
        g: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<BTreeSet<Module>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a Module) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in &self.g[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = BTreeSet::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on.remove(w);
                    comp.insert(w.clone());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = Tarjan {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "(crate root)".to_string()
    } else {
        m.join("::")
    }
}

#[test]
fn no_module_imports_itself_round_a_circle() {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(crates_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    crates.sort();
    assert!(crates.len() > 10, "the workspace's crates: {crates:?}");
    let mut found: BTreeSet<(String, BTreeSet<String>)> = BTreeSet::new();
    let mut report = String::new();
    for dir in &crates {
        let krate = dir.file_name().unwrap().to_string_lossy().into_owned();
        let g = graph(&dir.join("src"));
        for comp in circles(&g) {
            let names: BTreeSet<String> = comp.iter().map(name).collect();
            let known = KNOWN.iter().any(|(k, mods)| {
                *k == krate && mods.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>() == names
            });
            if !known {
                let list: Vec<&str> = names.iter().map(String::as_str).collect();
                report.push_str(&format!("{krate}: {}\n", list.join(" <-> ")));
                for a in &comp {
                    for b in &g[a] {
                        if comp.contains(b) {
                            report.push_str(&format!("    {} -> {}\n", name(a), name(b)));
                        }
                    }
                }
            }
            found.insert((krate.clone(), names));
        }
    }
    for (krate, mods) in KNOWN {
        let names: BTreeSet<String> = mods.iter().map(|s| s.to_string()).collect();
        if !found.contains(&(krate.to_string(), names)) {
            report.push_str(&format!(
                "{krate}: the known circle {mods:?} is not there any more (broken, or \
                 changed: take it off KNOWN in this file)\n"
            ));
        }
    }
    assert!(
        report.is_empty(),
        "import circles between modules (each line: a circle, then its edges; a module \
         refers to the next by a crate::, super:: or self:: path):\n{report}"
    );
}

/// The rules on a small made-up crate, so that a change to the parser that stopped
/// seeing edges would not pass quietly.
#[test]
fn the_rules_find_a_circle_and_leave_out_tests_and_parents() {
    let dir = std::env::temp_dir().join(format!("module_cycles_{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    let write = |p: &str, t: &str| std::fs::write(src.join(p), t).unwrap();
    write(
        "lib.rs",
        "pub mod a; pub mod b; pub mod c; #[cfg(test)] mod t;",
    );
    write("a/mod.rs", "pub mod inner; use crate::b::B; pub struct A;");
    write(
        "a/inner.rs",
        "use super::A; use crate::b::B; pub fn f() { crate::c::g(); }",
    );
    write(
        "b.rs",
        "pub struct B; fn f() { let _ = format!(\"{}\", crate::a::inner::f()); }",
    );
    write(
        "c.rs",
        "// crate::b::B in a comment\npub fn g() {}\n#[cfg(test)]\nmod tests { use crate::a::A; }",
    );
    write("t.rs", "use crate::a::A; use crate::c::g;");
    let g = graph(&src);
    std::fs::remove_dir_all(&dir).unwrap();
    let m = |s: &str| -> Module { s.split("::").map(String::from).collect() };
    assert!(
        !g.contains_key(&m("t")),
        "a #[cfg(test)] module file is left out"
    );
    assert_eq!(g[&m("a")], BTreeSet::from([m("b")]));
    assert_eq!(
        g[&m("a::inner")],
        BTreeSet::from([m("b"), m("c")]),
        "super:: to the parent: no edge"
    );
    assert_eq!(
        g[&m("b")],
        BTreeSet::from([m("a::inner")]),
        "a path in a macro counts"
    );
    assert!(
        g[&m("c")].is_empty(),
        "comments and #[cfg(test)] mod tests do not count"
    );
    assert_eq!(
        circles(&g),
        vec![BTreeSet::from([m("b"), m("a::inner")])],
        "b and a::inner import each other; a is not in it (a::inner's super:: is its parent)"
    );
}
