//! Which `[ports."..."]` sections (and `--interface` names) match no interface of a
//! host. Such a file is valid: the interface may come later (a driver loaded, a VF
//! created), and a file shared by hosts may name ports some of them lack. But a
//! section that matches nothing is also what a misspelt name or a pattern written for
//! other hardware looks like, so `losslessd --check` names each one.
//!
//! Pure: the caller lists the interfaces (losslessd: an rtnetlink dump of its network
//! namespace) and the patterns are matched by the daemon's own rule.

use std::fmt;

use super::pattern::Pattern;
use super::DaemonConfig;

/// How many interface names [`describe`] lists before it counts the rest.
pub const LISTED_INTERFACES: usize = 16;

/// A pattern that selects no interface of those given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmatched {
    /// The pattern as written: an interface name or a glob (`enp*s0f*np*`).
    pub pattern: String,
    /// Where it comes from.
    pub from: Selector,
}

/// What names a pattern: a section of the file, or the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// `[ports."PATTERN"]`: its key path as refusals name it (`ports."enp65s0f1np1"`).
    Section(String),
    /// `--interface NAME`.
    Interface,
}

impl fmt::Display for Unmatched {
    /// `ports."enp65s0f1np1"` or `--interface eth9`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.from {
            Selector::Section(path) => f.write_str(path),
            Selector::Interface => write!(f, "--interface {}", self.pattern),
        }
    }
}

/// The `[ports."..."]` sections of `cfg` that match none of `interfaces`, in file
/// order (exact names and globs alike, by [`DaemonConfig::selects`]'s rule).
pub fn unmatched_patterns(cfg: &DaemonConfig, interfaces: &[&str]) -> Vec<Unmatched> {
    cfg.ports
        .iter()
        .filter(|p| !interfaces.iter().any(|i| p.pattern.matches(i)))
        .map(|p| Unmatched {
            pattern: match &p.pattern {
                Pattern::Exact(name) => name.clone(),
                Pattern::Glob(chars) => chars.iter().collect(),
            },
            from: Selector::Section(p.layer.path.clone()),
        })
        .collect()
}

/// The `--interface` names that are none of `interfaces`, in the order given.
pub fn unmatched_interfaces(names: &[String], interfaces: &[&str]) -> Vec<Unmatched> {
    names
        .iter()
        .filter(|n| !interfaces.contains(&n.as_str()))
        .map(|n| Unmatched {
            pattern: n.clone(),
            from: Selector::Interface,
        })
        .collect()
}

/// `ports."enp65s0f1np1": matches no interface on this host (interfaces here: lo,
/// eth0)`; past [`LISTED_INTERFACES`] names, how many more.
pub fn describe(u: &Unmatched, interfaces: &[&str]) -> String {
    let here = match interfaces.len() {
        0 => "no interfaces here".to_string(),
        n if n <= LISTED_INTERFACES => format!("interfaces here: {}", interfaces.join(", ")),
        n => format!(
            "interfaces here: {} and {} more",
            interfaces[..LISTED_INTERFACES].join(", "),
            n - LISTED_INTERFACES
        ),
    };
    format!("{u}: matches no interface on this host ({here})")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn config(text: &str) -> DaemonConfig {
        DaemonConfig::parse(text, Path::new("t.toml")).expect("valid")
    }

    fn section(pattern: &str) -> Unmatched {
        Unmatched {
            pattern: pattern.into(),
            from: Selector::Section(format!("ports.\"{pattern}\"")),
        }
    }

    #[test]
    fn sections_matching_nothing_in_file_order() {
        let c = config(
            "[defaults]\npfc.priorities = [3]\n[ports.\"enp65s0f1np1\"]\n[ports.\"enp*s0f*np*\"]\n\
             [ports.\"eno1\"]\n[ports.\"swp?\"]\n[ports.\"eth0\"]\n",
        );
        let here = ["lo", "eth0", "enp65s0f0np0"];
        assert_eq!(
            unmatched_patterns(&c, &here),
            [section("enp65s0f1np1"), section("eno1"), section("swp?")]
        );
        // Every section matches something: none listed; no interface: all of them.
        assert_eq!(
            unmatched_patterns(&c, &["enp65s0f1np1", "eno1", "swp1", "eth0"]),
            []
        );
        assert_eq!(unmatched_patterns(&c, &[]).len(), 5);
        // No file, no sections: nothing to match.
        assert_eq!(unmatched_patterns(&DaemonConfig::default(), &here), []);
    }

    #[test]
    fn interfaces_named_on_the_command_line() {
        let names = ["lo".to_string(), "eth9".to_string()];
        let u = unmatched_interfaces(&names, &["lo", "eth0"]);
        assert_eq!(
            u,
            [Unmatched {
                pattern: "eth9".into(),
                from: Selector::Interface
            }]
        );
        assert_eq!(u[0].to_string(), "--interface eth9");
    }

    #[test]
    fn the_warning_names_the_pattern_and_the_interfaces_here() {
        let u = section("enp65s0f1np1");
        assert_eq!(
            describe(&u, &["lo", "eth0"]),
            "ports.\"enp65s0f1np1\": matches no interface on this host (interfaces here: lo, eth0)"
        );
        assert_eq!(
            describe(&u, &[]),
            "ports.\"enp65s0f1np1\": matches no interface on this host (no interfaces here)"
        );
        let many: Vec<String> = (0..20).map(|i| format!("v{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(describe(&u, &many).ends_with("v14, v15 and 4 more)"));
    }
}
