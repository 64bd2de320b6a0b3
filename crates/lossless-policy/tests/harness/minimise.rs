//! Shrink a disagreement to a small reproducer: ask only the query (or the tables) that
//! disagreed, then take away, one at a time, whatever the disagreement survives without:
//! qos-ulps lines, match rules, levels, port groups and their criteria, partitions,
//! opensm.conf lines, CAs, routers, switches, links, option sets. Every try is a real
//! OpenSM run; the result is written as a regular oracle scenario directory.

use super::difftest::run_scenario;
use super::gen::{Case, Kind};
use super::Disagreement;

/// Does `case` still show a disagreement of `class`?
fn still(case: &Case, class: &str) -> Option<Disagreement> {
    let out = run_scenario(&case.scenario()).ok()?;
    out.disagreements.into_iter().find(|d| d.class == class)
}

/// Remove node `i` and its links (indices renumbered).
fn without_node(c: &Case, i: usize) -> Case {
    let mut c = c.clone();
    c.nodes.remove(i);
    c.links.retain(|l| l.a.0 != i && l.b.0 != i);
    for l in &mut c.links {
        if l.a.0 > i {
            l.a.0 -= 1;
        }
        if l.b.0 > i {
            l.b.0 -= 1;
        }
    }
    c
}

/// Every one-step reduction of `c`, smallest effect last.
fn candidates(c: &Case, keep_nodes: &[String]) -> Vec<Case> {
    let mut out = Vec::new();
    // Whole nodes first (CAs, routers, then switches), but not the query's ends nor the node
    // the SM is named on.
    for kind in [Kind::Ca, Kind::Router, Kind::Switch] {
        for (i, n) in c.nodes.iter().enumerate().rev() {
            if n.kind == kind
                && !keep_nodes.contains(&n.name)
                && c.sm.as_ref() != Some(&n.name)
                && (i > 0 || kind != Kind::Switch)
            {
                let x = without_node(c, i);
                if !x.nodes.is_empty() {
                    out.push(x);
                }
            }
        }
    }
    let mut drop_item = |f: &dyn Fn(&mut Case) -> bool| {
        let mut x = c.clone();
        if f(&mut x) {
            out.push(x);
        }
    };
    for i in (0..c.links.len()).rev() {
        drop_item(&|x: &mut Case| {
            x.links.remove(i);
            true
        });
    }
    for i in (0..c.ulps.len()).rev() {
        drop_item(&|x: &mut Case| {
            x.ulps.remove(i);
            true
        });
    }
    for i in (0..c.rules.len()).rev() {
        drop_item(&|x: &mut Case| {
            x.rules.remove(i);
            true
        });
        for j in (0..c.rules[i].len().saturating_sub(1)).rev() {
            drop_item(&|x: &mut Case| {
                x.rules[i].remove(j);
                true
            });
        }
    }
    for i in (0..c.levels.len()).rev() {
        drop_item(&|x: &mut Case| {
            x.levels.remove(i);
            true
        });
        for j in (1..c.levels[i].len()).rev() {
            drop_item(&|x: &mut Case| {
                x.levels[i].remove(j);
                true
            });
        }
    }
    for i in (0..c.groups.len()).rev() {
        drop_item(&|x: &mut Case| {
            x.groups.remove(i);
            true
        });
        for j in (1..c.groups[i].len()).rev() {
            drop_item(&|x: &mut Case| {
                x.groups[i].remove(j);
                true
            });
        }
    }
    for i in (1..c.partitions.len()).rev() {
        drop_item(&|x: &mut Case| {
            x.partitions.remove(i);
            true
        });
    }
    for i in (0..c.conf.len()).rev() {
        drop_item(&|x: &mut Case| {
            let line = x.conf.remove(i);
            if let Some(p) = &mut x.plant {
                p.retain(|l| *l != line);
            }
            true
        });
    }
    if c.tables {
        drop_item(&|x: &mut Case| {
            x.tables = false;
            true
        });
    }
    out
}

/// Shrink `case` while a disagreement of `d.class` remains; returns the smallest case found
/// and its disagreement. `budget`: OpenSM runs at most.
pub fn minimise(case: &Case, d: &Disagreement, budget: usize) -> (Case, Disagreement) {
    let mut best = case.clone();
    let mut last;
    // Ask only what disagreed.
    let (src, dst, opt) = &d.key;
    if d.class.starts_with("path") {
        best.optsets = vec![opt.clone()];
        best.only = vec![(src.clone(), dst.clone())];
        best.tables = false;
    } else if d.class.starts_with("table") {
        best.optsets = vec!["none".into()];
        best.only = vec![];
    }
    if best.only.is_empty() && best.tables {
        // Tables only: one pair suffices for the paths.
        best.only = vec![("-".into(), "-".into())];
    }
    match still(&best, &d.class) {
        Some(x) => last = x,
        None => return (case.clone(), d.clone()),
    }
    let node_of = |label: &str| label.rsplit_once('/').map_or(label, |(n, _)| n).to_string();
    let mut runs = 1;
    loop {
        let keep: Vec<String> = [&last.key.0, &last.key.1]
            .iter()
            .map(|l| node_of(l))
            .collect();
        let mut improved = false;
        for cand in candidates(&best, &keep).into_iter().filter(Case::connected) {
            if runs >= budget {
                return (best, last);
            }
            runs += 1;
            if let Some(x) = still(&cand, &d.class) {
                best = cand;
                last = x;
                improved = true;
                break;
            }
        }
        if !improved {
            return (best, last);
        }
    }
}
