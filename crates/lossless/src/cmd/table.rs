//! Aligned text tables for the daemon commands: a header row, then rows;
//! each column as wide as its widest cell, two spaces between columns.

pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<const N: usize>(header: [&str; N]) -> Self {
        Table {
            rows: vec![header.iter().map(|h| h.to_string()).collect()],
        }
    }

    pub fn row<const N: usize>(&mut self, cells: [String; N]) {
        self.rows.push(cells.into());
    }

    pub fn render(&self) -> String {
        self.render_within(usize::MAX)
    }

    /// As [`Table::render`], with the last column's text wrapped at spaces so that
    /// lines stay within `max` columns where they can (at least 30 columns are left
    /// for it); a wrapped cell goes on under its column, indented by two.
    pub fn render_within(&self, max: usize) -> String {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let width: Vec<usize> = (0..cols)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let start: usize = width
            .iter()
            .take(cols.saturating_sub(1))
            .map(|w| w + 2)
            .sum();
        let room = max.saturating_sub(start).max(30);
        let mut out = String::new();
        for r in &self.rows {
            let mut line = String::new();
            for (c, cell) in r.iter().enumerate() {
                if c + 1 == r.len() {
                    let mut parts = wrap(cell, room).into_iter();
                    line.push_str(&parts.next().unwrap_or_default());
                    for more in parts {
                        out.push_str(line.trim_end());
                        out.push('\n');
                        line = format!("{:start$}  {more}", "");
                    }
                } else {
                    line.push_str(&format!("{cell:<w$}  ", w = width[c]));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    pub fn print(&self) -> Result<(), crate::error::CliError> {
        crate::out::emit(&self.render())
    }
}

/// `text` in lines of at most `room` characters, broken at spaces (a longer word
/// keeps its line); the lines after the first are two shorter, for their indent.
fn wrap(text: &str, room: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let limit = if lines.is_empty() { room } else { room - 2 };
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > limit {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    lines.push(cur);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_on_the_widest_cell() {
        let mut t = Table::new(["PORT", "LINK"]);
        t.row(["veth-long".into(), "up".into()]);
        t.row(["a".into(), "down".into()]);
        assert_eq!(
            t.render(),
            "PORT       LINK\nveth-long  up\na          down\n"
        );
    }

    #[test]
    fn the_last_column_wraps_within_the_width() {
        let mut t = Table::new(["PORT", "HEALTH"]);
        let text = "pfc: error, neither side takes the other's configuration and they differ \
                    (mismatch)";
        t.row(["vb".into(), text.into()]);
        assert_eq!(
            t.render_within(40),
            "PORT  HEALTH\n\
             vb    pfc: error, neither side takes the\n\
             \x20       other's configuration and they\n\
             \x20       differ (mismatch)\n"
        );
        for l in t.render_within(40).lines() {
            assert!(l.chars().count() <= 40, "{l:?}");
        }
        // Short enough: unchanged.
        assert_eq!(t.render_within(200), t.render());
    }
}
