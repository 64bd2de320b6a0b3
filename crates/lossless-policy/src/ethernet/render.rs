//! The compiled configuration as the `[ports."NAME"]` sections of a losslessd
//! configuration file, with comments saying where each value came from.

use super::{app, EthConfig, EthLevel, EthPort};
use crate::ast::Loc;
use crate::check::Diagnostic;

/// A TOML basic string. `lossless_node::config::toml_string` quotes the same way (it
/// also has the short escapes for newline, tab and CR, which interface names never hold);
/// this crate sits below the node and does not depend on it.
fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list<T: std::fmt::Display>(v: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = v.into_iter().map(|x| x.to_string()).collect();
    format!("[{}]", v.join(", "))
}

impl EthConfig {
    /// The `[ports."NAME"]` sections of a losslessd configuration file (docs/config.md),
    /// with comments saying where each value came from.
    pub fn to_toml(&self, source: &str, notes: &[Diagnostic]) -> String {
        let mut s = header(source, &self.levels, notes);
        for p in &self.ports {
            s.push_str(&port_section(p));
        }
        s
    }
}

/// The comment at the top: what the file is, the levels' priorities, the notes.
fn header(source: &str, levels: &[EthLevel], notes: &[Diagnostic]) -> String {
    let mut s = format!(
        "# losslessd port configuration compiled from the QoS policy {source}\n\
         # by `lossless policy compile --ethernet` (docs/policy.md, \"Ethernet profile\").\n\
         # Priority = the level's SL; PFC on the lossless levels' priorities; priority\n\
         # group = the VL of the port's SL2VL table; PG bandwidth = the VLArb weights;\n\
         # IEEE 802.1Qaz ETS the same: traffic class = priority group, its bandwidth the PG's;\n\
         # APP (IEEE 802.1Qaz): a qos-class rule's DSCP (TClass >> 2) -> its level's priority.\n#\n"
    );
    for l in levels {
        s.push_str(&format!(
            "#   level {} ({}): priority {}{}\n",
            l.name,
            l.loc,
            l.priority,
            if l.lossless { ", lossless (PFC)" } else { "" }
        ));
    }
    for n in notes {
        s.push_str(&format!("# note: {n}\n"));
    }
    s
}

/// One interface's section, after a comment naming its groups and scopes.
fn port_section(p: &EthPort) -> String {
    let from = |what: &str, l: Option<Loc>| match l {
        Some(l) => format!("{what} at {l}"),
        None => format!("no {what}: defaults"),
    };
    let mut s = format!("\n[ports.{}]\n", toml_str(&p.name));
    s.push_str(&format!(
        "# groups: {}; {}; {}\n",
        if p.groups.is_empty() {
            "none (--ports)".to_string()
        } else {
            p.groups.join(", ")
        },
        from("sl2vl-scope", p.sl2vl_scope),
        from("vlarb-scope", p.vlarb_scope)
    ));
    s.push_str(&format!("pg.pgid = {}\n", list(p.pgid)));
    s.push_str(&format!("pg.percent = {}\n", list(p.percent)));
    s.push_str(&format!("ets.prio_tc = {}\n", list(p.ets.prio_tc)));
    s.push_str(&format!("ets.tc_bw = {}\n", list(p.ets.tc_bw)));
    s.push_str(&format!(
        "ets.tsa = {}\n",
        list(p.ets.tsa.iter().map(|t| toml_str(t)))
    ));
    s.push_str(&format!("pfc.priorities = {}\n", list(&p.pfc)));
    s.push_str(&app::to_toml(&p.app));
    s
}
