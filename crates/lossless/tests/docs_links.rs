#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Every relative link in the documentation (docs/*.md, README.md, the crates'
//! and the fuzz directory's READMEs) names a file that exists, and every
//! `#anchor` on a Markdown page names one of its headings (as GitHub makes
//! anchors of them) or an `<a id="...">` in it. Pages move and split; a link
//! a reader follows into nothing is a bug of the docs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown pages checked, relative to the repository.
fn pages() -> Vec<PathBuf> {
    let root = repo();
    let mut pages = vec![PathBuf::from("README.md"), PathBuf::from("fuzz/README.md")];
    for dir in ["docs", "crates"] {
        for entry in std::fs::read_dir(root.join(dir)).expect(dir).flatten() {
            let p = entry.path();
            let page = if p.is_dir() { p.join("README.md") } else { p };
            if page.extension().is_some_and(|e| e == "md") && page.exists() {
                pages.push(page.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    pages.sort();
    pages
}

/// GitHub's anchor for a heading: lower case, spaces to hyphens, and only
/// letters, digits, hyphens and underscores kept.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |l| {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for line in prose(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            set.insert(slug(&line[hashes..]));
        }
        let mut rest = line;
        while let Some(i) = rest.find("<a id=\"") {
            rest = &rest[i + 7..];
            if let Some(end) = rest.find('"') {
                set.insert(rest[..end].to_string());
            }
        }
    }
    set
}

/// The targets of `[text](target)` links outside code blocks and inline code.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        // Inline code is not a link.
        let line: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            if let Some(end) = rest.find(')') {
                let target = &rest[..end];
                if !target.contains(char::is_whitespace) {
                    out.push(target.to_string());
                }
                rest = &rest[end..];
            }
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let root = repo();
    let pages = pages();
    assert!(pages.len() > 10, "{pages:?}");
    let mut known: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(root.join(page)).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() {
                page.clone()
            } else {
                normalize(&page.parent().unwrap().join(path))
            };
            if !root.join(&file).exists() {
                broken.push(format!(
                    "{}: {target}: no file {}",
                    page.display(),
                    file.display()
                ));
                continue;
            }
            if anchor.is_empty() || file.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let set = known
                .entry(file.clone())
                .or_insert_with(|| anchors(&std::fs::read_to_string(root.join(&file)).unwrap()));
            if !set.contains(anchor) {
                broken.push(format!(
                    "{}: {target}: no heading or <a id> \"{anchor}\" in {}",
                    page.display(),
                    file.display()
                ));
            }
        }
    }
    assert!(checked > 50, "only {checked} links found");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// `a/b/../c` as `a/c` (the files may not exist: no canonicalize).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(
        slug(" Install and run as a service"),
        "install-and-run-as-a-service"
    );
    assert_eq!(
        slug(" `socket_group` under the unit"),
        "socket_group-under-the-unit"
    );
    assert_eq!(
        slug(" Restarts, persistence, SeqNo"),
        "restarts-persistence-seqno"
    );
    assert_eq!(
        slug(" A device on the link: the multiple-neighbour cap"),
        "a-device-on-the-link-the-multiple-neighbour-cap"
    );
    let text = "# Top\n```\n# not a heading\n```\n## Two words\n<a id=\"x-y\"></a>**X**\n";
    assert_eq!(
        anchors(text),
        ["top", "two-words", "x-y"].map(String::from).into()
    );
    assert_eq!(
        links("see [a](b.md#c) and `[d](e)` and [f](http://g)\n```\n[h](i)\n```"),
        ["b.md#c", "http://g"]
    );
}
