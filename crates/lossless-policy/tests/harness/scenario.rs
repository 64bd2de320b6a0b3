//! An oracle scenario: the files OpenSM runs with and what to ask it. On disk a directory
//! (`tests/oracle/NAME/`) holding `net`, `opensm.conf`, optionally `qos-policy.conf` and
//! `partitions.conf`, and `scenario`: one directive a line,
//!
//! ```text
//! # what the scenario shows
//! optset none                 # saquery options for every ordered pair of end ports
//! optset --pkey 0x8001        #   ("none": no option)
//! tables                      # also compare every port's SL2VL, VLArb and VLHighLimit
//! min-hop                     # also compare our min-hop answers (routes equal OpenSM's)
//! policy-rejected             # OpenSM refuses the policy: compare with no policy
//! only SRC DST                # only these pairs (labels `Node/Pn`), any number of lines
//! sm NODE                     # OpenSM runs on NODE (its id in `net`), and we are told
//!                             #   (`--sm`); without it: on the first node, and we assume so
//! ```

use std::path::Path;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scenario {
    pub name: String,
    /// The `#` lines at the top of `scenario`: what it shows.
    pub about: Vec<String>,
    pub net: String,
    pub opensm_conf: String,
    pub policy: Option<String>,
    pub partitions: Option<String>,
    pub optsets: Vec<String>,
    pub tables: bool,
    pub min_hop: bool,
    pub policy_rejected: bool,
    /// Restrict path queries to these (src, dst) labels; empty: every pair.
    pub only: Vec<(String, String)>,
    /// For testing the tester: the opensm.conf we are given instead of OpenSM's (never
    /// written to disk).
    pub plant: Option<String>,
    /// The node OpenSM runs on (`sm NODE`); `None`: the first node of `net`.
    pub sm: Option<String>,
}

impl Scenario {
    pub fn load(dir: &Path) -> Result<Scenario, String> {
        let read = |f: &str| std::fs::read_to_string(dir.join(f));
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut s = Scenario {
            name,
            net: read("net").map_err(|e| format!("{}/net: {e}", dir.display()))?,
            opensm_conf: read("opensm.conf")
                .map_err(|e| format!("{}/opensm.conf: {e}", dir.display()))?,
            policy: read("qos-policy.conf").ok(),
            partitions: read("partitions.conf").ok(),
            ..Scenario::default()
        };
        let text = read("scenario").map_err(|e| format!("{}/scenario: {e}", dir.display()))?;
        let mut header = true;
        for (i, l) in text.lines().enumerate() {
            let t = l.trim();
            if let Some(c) = t.strip_prefix('#') {
                if header {
                    s.about.push(c.trim().to_string());
                }
                continue;
            }
            header = false;
            let t = t.split(" #").next().unwrap_or("").trim();
            let (k, rest) = t.split_once(' ').unwrap_or((t, ""));
            match k {
                "" => {}
                "optset" => s.optsets.push(rest.trim().to_string()),
                "tables" => s.tables = true,
                "min-hop" => s.min_hop = true,
                "policy-rejected" => s.policy_rejected = true,
                "sm" if !rest.trim().is_empty() => s.sm = Some(rest.trim().to_string()),
                "only" => {
                    let mut w = rest.split_whitespace();
                    match (w.next(), w.next()) {
                        (Some(a), Some(b)) => s.only.push((a.into(), b.into())),
                        _ => {
                            return Err(format!(
                                "{}/scenario:{}: only SRC DST",
                                dir.display(),
                                i + 1
                            ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "{}/scenario:{}: unknown directive `{k}`, expected optset, tables, \
                         min-hop, policy-rejected, only or sm NODE",
                        dir.display(),
                        i + 1
                    ))
                }
            }
        }
        Ok(s)
    }

    /// Write the scenario as a directory `load` reads back.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("net"), &self.net)?;
        std::fs::write(dir.join("opensm.conf"), &self.opensm_conf)?;
        if let Some(p) = &self.policy {
            std::fs::write(dir.join("qos-policy.conf"), p)?;
        }
        if let Some(p) = &self.partitions {
            std::fs::write(dir.join("partitions.conf"), p)?;
        }
        let mut t = String::new();
        for a in &self.about {
            t.push_str(&format!("# {a}\n"));
        }
        for o in &self.optsets {
            t.push_str(&format!("optset {o}\n"));
        }
        for (a, b) in &self.only {
            t.push_str(&format!("only {a} {b}\n"));
        }
        if let Some(n) = &self.sm {
            t.push_str(&format!("sm {n}\n"));
        }
        for (on, w) in [
            (self.tables, "tables"),
            (self.min_hop, "min-hop"),
            (self.policy_rejected, "policy-rejected"),
        ] {
            if on {
                t.push_str(w);
                t.push('\n');
            }
        }
        std::fs::write(dir.join("scenario"), t)
    }

    /// Every scenario directory under `root`, by name.
    pub fn all(root: &Path) -> Vec<Scenario> {
        let mut dirs: Vec<_> = std::fs::read_dir(root)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.join("scenario").is_file())
                    .collect()
            })
            .unwrap_or_default();
        dirs.sort();
        dirs.iter()
            .map(|d| Scenario::load(d).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }
}
