#![allow(clippy::unwrap_used)]
//! Shell completions and man pages made from the command line's own definitions:
//! `lossless completions SHELL` and `lossless man DIR`. The bash script is checked
//! by bash itself (`bash -n`, then a real completion of `lossless dc<TAB>` and
//! `lossless dcbx s<TAB>`), every man page by groff with every warning on.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::{run, stderr, stdout, tmp};

/// The subcommands `lossless PATH --help` lists (without `help`).
fn subcommands(path: &[String]) -> Vec<String> {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push("--help");
    let help = stdout(&run(&args));
    let Some(start) = help.find("\nCommands:\n") else {
        return Vec::new();
    };
    help[start + "\nCommands:\n".len()..]
        .lines()
        .take_while(|l| l.starts_with("  "))
        // A command's line; a wrapped description is indented further.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// Every command path below `lossless`, as `lossless-dcbx-set` page names.
fn every_page(path: Vec<String>, out: &mut BTreeSet<String>) {
    let name = std::iter::once("lossless".to_string())
        .chain(path.iter().cloned())
        .collect::<Vec<_>>()
        .join("-");
    out.insert(format!("{name}.1"));
    for sub in subcommands(&path) {
        let mut p = path.clone();
        p.push(sub);
        every_page(p, out);
    }
}

/// groff's complaints about a page (it exits 0 with warnings on stderr).
fn groff_warnings(page: &Path) -> String {
    let out = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww"])
        .arg(page)
        .output()
        .expect("groff runs (Debian package groff-base)");
    assert!(out.status.success(), "groff {}", page.display());
    assert!(
        !out.stdout.is_empty(),
        "groff printed nothing for {}",
        page.display()
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn man_writes_a_page_per_command_that_groff_renders_cleanly() {
    let dir = tmp("man");
    let _ = std::fs::remove_dir_all(&dir);
    let out = run(&["man", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut expected = BTreeSet::new();
    every_page(Vec::new(), &mut expected);
    assert!(
        expected.contains("lossless-dcbx-set-app-add.1"),
        "{expected:?}"
    );
    assert_eq!(written, expected);
    let mut warnings = Vec::new();
    for page in &written {
        let w = groff_warnings(&dir.join(page));
        if !w.is_empty() {
            warnings.push(format!("{page}:\n{w}"));
        }
    }
    assert!(warnings.is_empty(), "{}", warnings.join("\n"));
    let decode = std::fs::read_to_string(dir.join("lossless-decode.1")).unwrap();
    assert!(decode.contains("pcapng"), "{decode}");
}

/// Fails on the old code: roff filled and justified the examples, so at a terminal's
/// width an example's columns ran together (`lossless  dcbx  set  eth0  mode  static`,
/// its comment broken onto the next line). Rendered 80 columns wide, each example line
/// is the line `--help` prints.
#[test]
fn man_page_examples_keep_their_columns() {
    let dir = tmp("man-columns");
    let _ = std::fs::remove_dir_all(&dir);
    let out = run(&["man", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let help = stdout(&run(&["dcbx", "set", "--help"]));
    let examples: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Examples:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(examples.len() >= 10, "{help}");
    let page = Command::new("groff")
        .args(["-man", "-Tutf8", "-rLL=80n", "-P-c", "-P-b", "-P-u"])
        .arg(dir.join("lossless-dcbx-set.1"))
        .output()
        .expect("groff runs (Debian package groff-base)");
    let text = String::from_utf8_lossy(&page.stdout);
    for e in examples {
        assert!(
            text.lines().any(|l| l.trim_end().ends_with(e.trim())),
            "{e:?} is not a line of the page:\n{text}"
        );
    }
}

fn completion(shell: &str) -> String {
    let out = run(&["completions", shell]);
    assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
    stdout(&out)
}

/// Completes `words` (the cursor after the last) with the bash script, as bash's
/// programmable completion calls it, and returns COMPREPLY.
fn bash_complete(script: &Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let program = format!(
        "source {script}\n\
         COMP_WORDS=({words})\n\
         COMP_CWORD={cword}\n\
         COMP_LINE={line:?}\n\
         COMP_POINT={point}\n\
         _lossless lossless {last:?} {prev:?}\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script = script.display(),
        words = words
            .iter()
            .map(|w| format!("{w:?}"))
            .collect::<Vec<_>>()
            .join(" "),
        cword = words.len() - 1,
        point = line.len(),
        last = words[words.len() - 1],
        prev = words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut words: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    words.sort();
    words
}

#[test]
fn bash_completion_is_valid_and_completes_commands() {
    let script = tmp("lossless.bash");
    std::fs::write(&script, completion("bash")).unwrap();
    let check = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert_eq!(bash_complete(&script, &["lossless", "dc"]), ["dcbx"]);
    assert_eq!(
        bash_complete(&script, &["lossless", "dcbx", "s"]),
        ["set", "show"]
    );
    let top = bash_complete(&script, &["lossless", ""]);
    for c in ["decode", "lab", "status", "completions", "man"] {
        assert!(top.contains(&c.to_string()), "{c} not in {top:?}");
    }
}

#[test]
fn every_shell_gets_a_script() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let s = completion(shell);
        assert!(s.contains("dcbx"), "{shell}");
        assert!(s.contains("decode"), "{shell}");
    }
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}
