//! The Prometheus text format's two helpers every metrics module uses: a metric's
//! `# HELP`/`# TYPE` head and a label value's escaping. Apart from the modules that
//! render, so none of them imports another for these.

use std::fmt::Write as _;

/// A metric's head: `# HELP name help` and `# TYPE name kind`.
pub(crate) fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// Label value escaping: backslash, double quote and newline.
pub(crate) fn esc(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_label_value_escapes_what_the_text_format_says() {
        assert_eq!(super::esc("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    }
}
