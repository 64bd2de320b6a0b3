#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! docs/architecture.md matches the code: every source file and directory it names
//! (`runtime.rs`, `node/links.rs`, `losslessd/src/metrics_http/mod.rs`, `sim/`, in the
//! prose and in the layer map) is a file or directory of the repository. A name may be
//! given from any depth (`links.rs`, `node/links.rs`, `lossless-node/src/node/links.rs`);
//! it must be the end of a real path. A file renamed or split without the page is a
//! map that leads nowhere.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file and directory under `dir`, relative to the repository, `/`-separated
/// (directories end with `/`); build output and VCS data left out.
fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if matches!(name.as_str(), "target" | ".git" | "corpus" | "artifacts") {
            continue;
        }
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            out.insert(format!("{rel}/"));
            walk(root, &p, out);
        } else {
            out.insert(rel);
        }
    }
}

/// The source paths a text names: words ending in `.rs` or `.c`, or a lower-case word
/// with a `/` ending in `/` (a directory), split at backticks, spaces and punctuation.
fn named(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for word in text
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | ',' | '(' | ')' | ';' | '[' | ']'))
    {
        let w = word.trim_end_matches(['.', ',', ':']);
        let w = w.trim_start_matches("./");
        if w.is_empty() || w.contains('*') || w.contains(':') || w.starts_with('/') {
            continue;
        }
        let is_file = w.ends_with(".rs") || w.ends_with(".c");
        let is_dir = w.ends_with('/')
            && w.len() > 1
            && w.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '/' | '_' | '-')
            });
        if is_file || is_dir {
            names.insert(w.to_string());
        }
    }
    names
}

#[test]
fn every_path_docs_architecture_names_exists() {
    let root = repo();
    let mut paths = BTreeSet::new();
    walk(&root, &root, &mut paths);
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let names = named(&text);
    assert!(
        names.len() >= 60,
        "only {} paths found: {names:?}",
        names.len()
    );
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| {
            !paths
                .iter()
                .any(|p| p == *n || p.ends_with(&format!("/{n}")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names {} paths that do not exist: {missing:?}",
        missing.len()
    );
}

#[test]
fn the_path_finder_finds_files_and_directories_and_not_words() {
    let got = named("`losslessd/src/runtime.rs` reads; node/ (links, frames) and sim/execute.rs, `*_metrics.rs`, and/or, a `Node::handle` https://x/y/ text.");
    let want: BTreeSet<String> = ["losslessd/src/runtime.rs", "node/", "sim/execute.rs"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(got, want);
}
