#![allow(clippy::unwrap_used)]
//! `dcbx set` and `dcbx reset` through the node core, fed by hand: each change is
//! checked as the file checks it, persisted before it runs, and a refusal changes
//! nothing (neither the port nor the state to persist).

use std::path::Path;

use lossless_dcbx::Instant;
use lossless_node::config::DaemonConfig;
use lossless_node::link::Link;
use lossless_node::node::{Identity, Node, Now, Output};
use lossless_node::protocol::{
    AppRuleChange, AppRulesChange, EtsChange, FeatureChange, FeatureName, Request, Response,
    TcChange,
};
use lossless_node::state::PersistedState;
use lossless_node::state::{PersistError, StateDirProblem, StateDirReason};
use lossless_wire::ieee::Tsa;
use serde_json::Value;

/// The file: PFC on 3, ETS with priority 3 alone in class 1, UDP 4791 -> 3.
const FILE: &str = r#"
[ports."eth0"]
pfc.priorities = [3]
ets = { willing = false, prio_tc = [0, 0, 0, 1, 0, 0, 0, 0], tc_bw = [50, 50, 0, 0, 0, 0, 0, 0], tsa = ["ets", "ets", "strict", "strict", "strict", "strict", "strict", "strict"] }
app.entries = [{ selector = "udp", protocol = 4791, priority = 3 }]
"#;

fn now() -> Now {
    Now {
        mono: Instant::ZERO,
        unix: 0.0,
    }
}

struct One {
    node: Node,
    /// What the node asked to persist, in order.
    persisted: Vec<PersistedState>,
    /// Answer the next persist with this error.
    fail: Option<PersistError>,
}

impl One {
    fn new() -> One {
        let config = DaemonConfig::parse(FILE, Path::new("dcbx_set.toml")).unwrap();
        let mut node = Node::new(
            config,
            Identity::default(),
            PersistedState::default(),
            now(),
        );
        node.handle_links(
            now(),
            vec![Link {
                ifindex: 2,
                name: "eth0".into(),
                mac: Some([2, 0, 0, 0, 0, 1]),
                admin_up: true,
                oper_up: true,
                carrier: true,
                alias: None,
            }],
        );
        while node.poll_output().is_some() {}
        One {
            node,
            persisted: Vec::new(),
            fail: None,
        }
    }

    fn request(&mut self, req: Request) -> Response {
        self.node.handle_request(now(), 1, req);
        loop {
            let Some(out) = self.node.poll_output() else {
                panic!("no reply");
            };
            match out {
                Output::Reply { response, .. } => return response,
                Output::Persist { state } => {
                    self.persisted.push(state);
                    let r = match self.fail.take() {
                        Some(e) => Err(e),
                        None => Ok(()),
                    };
                    self.node.handle_persisted(now(), r);
                }
                _ => {}
            }
        }
    }

    fn set(&mut self, change: FeatureChange) -> Result<Value, String> {
        let r = self.request(Request::DcbxSet {
            port: "eth0".into(),
            change,
        });
        match (r.result, r.error) {
            (Some(v), None) => Ok(v),
            (_, Some(e)) => Err(e.message),
            _ => panic!("empty response"),
        }
    }

    fn reset(&mut self, feature: Option<FeatureName>) -> Value {
        let r = self.request(Request::DcbxReset {
            port: "eth0".into(),
            feature,
        });
        r.result.unwrap_or_else(|| panic!("{:?}", r.error))
    }

    fn show(&mut self) -> Value {
        let r = self.request(Request::DcbxShow { port: None });
        r.result.unwrap()["ports"][0].clone()
    }

    /// A refusal: its message, and nothing changed (the port as before, nothing
    /// persisted).
    fn refused(&mut self, change: FeatureChange) -> String {
        let before = self.show();
        let persists = self.persisted.len();
        let e = self.set(change).unwrap_err();
        assert!(e.starts_with("eth0: "), "{e}");
        assert!(e.ends_with("; nothing changed"), "{e}");
        assert_eq!(self.show(), before, "{e}");
        assert_eq!(self.persisted.len(), persists, "{e}");
        e
    }
}

fn change(feature: FeatureName) -> FeatureChange {
    FeatureChange {
        feature,
        ..FeatureChange::default()
    }
}

fn ets(e: EtsChange) -> FeatureChange {
    FeatureChange {
        ets: Some(Box::new(e)),
        ..change(FeatureName::Ets)
    }
}

fn app_change(add: Option<Vec<AppRuleChange>>, del: Option<Vec<AppRuleChange>>) -> FeatureChange {
    FeatureChange {
        app_rules: Some(Box::new(AppRulesChange { add, del })),
        ..change(FeatureName::App)
    }
}

fn rule(selector: &str, protocol: u16, priorities: &[u8]) -> AppRuleChange {
    serde_json::from_value(serde_json::json!({
        "selector": selector, "protocol": protocol, "priorities": priorities
    }))
    .unwrap()
}

fn nums(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn ets_tables_and_per_class_form_give_the_same_table() {
    let mut one = One::new();
    let v = one
        .set(ets(EtsChange {
            prio_tc: Some(vec![0, 0, 0, 1, 0, 0, 2, 0]),
            tc_bw: Some(vec![60, 40, 0, 0, 0, 0, 0, 0]),
            tsa: Some(vec![
                Tsa::ETS,
                Tsa::ETS,
                Tsa::STRICT,
                Tsa::STRICT,
                Tsa::STRICT,
                Tsa::STRICT,
                Tsa::STRICT,
                Tsa::STRICT,
            ]),
            max_tcs: Some(4),
            recommend: Some(Some(true)),
            ..EtsChange::default()
        }))
        .unwrap();
    let admin = &v["ieee"]["ets"]["admin"];
    assert_eq!(nums(&admin["prio_tc"]), [0, 0, 0, 1, 0, 0, 2, 0]);
    assert_eq!(nums(&admin["tc_bw"]), [60, 40, 0, 0, 0, 0, 0, 0]);
    assert_eq!(admin["tsa"][2], "strict");
    assert_eq!(v["ieee_admin"]["ets_max_tcs"], 4);
    assert_eq!(v["ieee_admin"]["ets_recommend"], true);
    assert_eq!(v["source"]["ets"], "runtime");
    assert_eq!(v["source"]["pfc"], "config");
    let state = one.persisted.last().unwrap();
    let saved = state.ports["eth0"].ets.as_ref().unwrap();
    assert_eq!(saved.cfg.table.prio_tc, [0, 0, 0, 1, 0, 0, 2, 0]);
    assert_eq!(saved.cfg.recommend, Some(true));
    assert!(!saved.willing, "the file's flag stays");

    // The per-class form: the same table, unlisted priorities on class 0.
    let tc = |tc, priorities: &[u8], bandwidth, tsa| TcChange {
        tc,
        priorities: priorities.to_vec(),
        bandwidth,
        tsa,
    };
    let w = one
        .set(ets(EtsChange {
            tcs: Some(vec![
                tc(0, &[0, 1, 2, 4, 5, 7], 60, None),
                tc(1, &[3], 40, None),
                tc(2, &[6], 0, Some(Tsa::STRICT)),
            ]),
            recommend: Some(None),
            ..EtsChange::default()
        }))
        .unwrap();
    assert_eq!(w["ieee"]["ets"]["admin"], v["ieee"]["ets"]["admin"]);
    assert_eq!(w["ieee_admin"]["ets_recommend"], Value::Null);
    assert_eq!(w["ieee"]["ets_recommend"], true, "not willing: recommends");

    // Refusals, each naming the setting.
    let e = one.refused(ets(EtsChange {
        tc_bw: Some(vec![50, 40, 0, 0, 0, 0, 0, 0]),
        ..EtsChange::default()
    }));
    assert!(
        e.contains("ets.tc_bw: the eight percentages must sum to 100"),
        "{e}"
    );
    assert!(e.contains("(they sum to 90)"), "{e}");
    let e = one.refused(ets(EtsChange {
        tcs: Some(vec![tc(1, &[3], 50, None), tc(2, &[3], 50, None)]),
        ..EtsChange::default()
    }));
    assert!(
        e.contains("ets.tcs[1].priorities: priority 3 is already in traffic class 1"),
        "{e}"
    );
    let e = one.refused(ets(EtsChange {
        tcs: Some(vec![tc(1, &[3], 100, None)]),
        prio_tc: Some(vec![0; 8]),
        ..EtsChange::default()
    }));
    assert!(e.contains("not both"), "{e}");
    let e = one.refused(ets(EtsChange {
        prio_tc: Some(vec![0, 0, 0, 5, 0, 0, 0, 0]),
        max_tcs: Some(4),
        ..EtsChange::default()
    }));
    assert!(
        e.contains("ets.prio_tc[3]: the traffic class is beyond ets.max_tcs (found 5)"),
        "{e}"
    );
    let e = one.refused(ets(EtsChange {
        prio_tc: Some(vec![0; 7]),
        ..EtsChange::default()
    }));
    assert!(e.contains("ets.prio_tc: expected 8 values"), "{e}");
}

#[test]
fn pfc_priorities_are_checked_as_the_file_checks_them() {
    let mut one = One::new();
    let e = one.refused(FeatureChange {
        priorities: Some(vec![3, 3]),
        ..change(FeatureName::Pfc)
    });
    assert!(
        e.contains("pfc.priorities: priority 3 is listed twice"),
        "{e}"
    );
    // The file says the same of the same list.
    let file = DaemonConfig::parse(
        "[ports.\"eth0\"]\npfc.priorities = [3, 3]\n",
        Path::new("f.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(file.contains("priority 3 is listed twice"), "{file}");
    let e = one.refused(FeatureChange {
        priorities: Some(vec![8]),
        ..change(FeatureName::Pfc)
    });
    assert!(
        e.contains("pfc.priorities: priority 8 is out of range 0..=7"),
        "{e}"
    );

    // MBC alone leaves the rest of PFC to the file.
    let v = one
        .set(FeatureChange {
            mbc: Some(true),
            ..change(FeatureName::Pfc)
        })
        .unwrap();
    assert_eq!(v["ieee_admin"]["pfc_mbc"], true);
    assert_eq!(v["source"]["pfc"], "runtime");
    let o = &one.persisted.last().unwrap().ports["eth0"];
    assert_eq!((o.pfc_mbc, o.pfc.is_none()), (Some(true), true));
    let v = one
        .set(FeatureChange {
            priorities: Some(vec![3, 4]),
            willing: Some(false),
            ..change(FeatureName::Pfc)
        })
        .unwrap();
    assert_eq!(nums(&v["pfc"]["desired"]["priorities"]), [3, 4]);
    assert_eq!(v["ieee"]["pfc"]["willing"], false);
}

#[test]
fn app_rules_are_added_and_removed_one_at_a_time() {
    let mut one = One::new();
    let v = one
        .set(app_change(
            Some(vec![rule("dscp", 26, &[3]), rule("udp", 4791, &[4])]),
            None,
        ))
        .unwrap();
    let rules = &v["app_rules"]["entries"];
    assert_eq!(rules.as_array().unwrap().len(), 2, "{rules}");
    assert_eq!(rules[0]["selector"], "udp");
    assert_eq!(nums(&rules[0]["priorities"]), [3, 4], "merged");
    assert_eq!(rules[1]["selector"], "dscp");
    // IEEE: one entry per priority; CEE: no DSCP, the port on 3 and 4.
    assert_eq!(v["ieee"]["app"]["admin"].as_array().unwrap().len(), 3);
    assert_eq!(v["app"]["desired"]["entries"].as_array().unwrap().len(), 1);

    let e = one.refused(app_change(Some(vec![rule("dscp", 64, &[3])]), None));
    assert!(
        e.contains("app_add[0] (dscp 64 -> 3): app.entries[2]: DSCP 64 is outside 0..63"),
        "{e}"
    );
    let e = one.refused(app_change(Some(vec![rule("dscp", 10, &[])]), None));
    assert!(
        e.contains("app_add[0]: dscp 10 names no priority to add"),
        "{e}"
    );
    let e = one.refused(app_change(None, Some(vec![rule("dscp", 46, &[])])));
    assert!(
        e.contains("app_del[0]: there is no rule for dscp 46 (the rules: udp 4791, dscp 26)"),
        "{e}"
    );
    let e = one.refused(app_change(None, Some(vec![rule("udp", 4791, &[5])])));
    assert!(e.contains("udp 4791 is on priorities 3,4, not 5"), "{e}");

    let v = one
        .set(app_change(
            None,
            Some(vec![rule("udp", 4791, &[4]), rule("dscp", 26, &[])]),
        ))
        .unwrap();
    let rules = &v["app_rules"]["entries"];
    assert_eq!(rules.as_array().unwrap().len(), 1, "{rules}");
    assert_eq!(nums(&rules[0]["priorities"]), [3]);
}

#[test]
fn mode_and_reset() {
    let mut one = One::new();
    let v = one
        .set(FeatureChange {
            mode: Some(lossless_dcbx::DcbxMode::Cee),
            ..change(FeatureName::Mode)
        })
        .unwrap();
    assert_eq!(v["mode"]["configured"], "cee");
    assert_eq!(v["mode"]["running"], "cee");
    assert_eq!(v["source"]["mode"], "runtime");
    let status = one.request(Request::Status).result.unwrap();
    let p = &status["ports"][0];
    assert_eq!(p["mode"]["running"], "cee");
    assert_eq!(p["any_error"], false);
    assert_eq!(p["port"], "eth0", "the summary's fields stay at the top");

    one.set(FeatureChange {
        priorities: Some(vec![5]),
        ..change(FeatureName::Pfc)
    })
    .unwrap();
    // Reset one feature: the file's value runs again, the rest stays.
    let persists = one.persisted.len();
    let v = one.reset(Some(FeatureName::Mode));
    assert_eq!(one.persisted.len(), persists + 1, "persisted like a set");
    assert_eq!(v["mode"]["configured"], "auto");
    assert_eq!(v["source"]["mode"], "config");
    assert_eq!(v["source"]["pfc"], "runtime");
    // Nothing to reset: answered at once, nothing persisted.
    let w = one.reset(Some(FeatureName::Ets));
    assert_eq!(one.persisted.len(), persists + 1);
    assert_eq!(w["source"], v["source"]);
    // Everything: the port leaves the state file.
    let v = one.reset(None);
    assert_eq!(nums(&v["pfc"]["desired"]["priorities"]), [3]);
    assert!(one.persisted.last().unwrap().ports.is_empty());

    // A reset that cannot be persisted changes nothing.
    one.set(FeatureChange {
        priorities: Some(vec![5]),
        ..change(FeatureName::Pfc)
    })
    .unwrap();
    one.fail = Some(PersistError::NotWritten(problem(
        StateDirReason::NotWritable,
        "/s/state.json: cannot write: disk full",
    )));
    let r = one.request(Request::DcbxReset {
        port: "eth0".into(),
        feature: None,
    });
    assert!(r
        .error
        .unwrap()
        .message
        .contains("nothing changed: /s/state.json: cannot write: disk full"));
    assert_eq!(nums(&one.show()["pfc"]["desired"]["priorities"]), [5]);
    let r = one.request(Request::DcbxReset {
        port: "eth9".into(),
        feature: None,
    });
    assert!(r.error.unwrap().message.contains("no port \"eth9\""));
}

#[test]
fn fields_of_another_feature_and_empty_changes_are_refused() {
    let mut one = One::new();
    let e = one.refused(FeatureChange {
        pgid: Some(vec![0; 8]),
        ..change(FeatureName::Pfc)
    });
    assert!(
        e.contains("`pgid` does not apply to pfc (only to pg)"),
        "{e}"
    );
    let e = one.refused(FeatureChange {
        willing: Some(true),
        ..change(FeatureName::Mode)
    });
    assert!(
        e.contains("`willing` does not apply to mode (only to pg, pfc, app, ets)"),
        "{e}"
    );
    let e = one.refused(change(FeatureName::Ets));
    assert!(e.contains("nothing to change"), "{e}");
    let e = one.refused(ets(EtsChange::default()));
    assert!(e.contains("nothing to change"), "{e}");
    // Unknown fields are not a change at all.
    let bad =
        r#"{"command":"dcbx_set","port":"eth0","change":{"feature":"ets","tc_bandwidth":[100]}}"#;
    let e = serde_json::from_str::<Request>(bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `tc_bandwidth`"), "{e}");
    // The socket's JSON forms.
    let ok = r#"{"command":"dcbx_set","port":"eth0","change":{"feature":"app",
        "app_add":[{"selector":"dscp","protocol":26,"priority":3}],
        "app_del":[{"selector":"udp","protocol":4791}]}}"#;
    let Request::DcbxSet { change, .. } = serde_json::from_str::<Request>(ok).unwrap() else {
        panic!("not a set");
    };
    let rules = change.app_rules.unwrap();
    assert_eq!(rules.add.unwrap()[0].priorities, [3]);
    assert!(rules.del.unwrap()[0].priorities.is_empty());
    let reset = r#"{"command":"dcbx_reset","port":"eth0","feature":"ets"}"#;
    assert_eq!(
        serde_json::from_str::<Request>(reset).unwrap(),
        Request::DcbxReset {
            port: "eth0".into(),
            feature: Some(FeatureName::Ets)
        }
    );
    let auto = r#"{"feature":"ets","recommend":null}"#;
    let c: FeatureChange = serde_json::from_str(auto).unwrap();
    assert_eq!(c.ets.unwrap().recommend, Some(None));
    // The flat JSON form comes back as it went in.
    let line = r#"{"feature":"ets","tc_bw":[50,50,0,0,0,0,0,0],"recommend":null}"#;
    let c: FeatureChange = serde_json::from_str(line).unwrap();
    assert_eq!(serde_json::to_string(&c).unwrap(), line);
}

/// One entry of `ets.tcs` in the file's syntax.
fn tc_toml(t: &TcChange) -> String {
    let prios: Vec<String> = t.priorities.iter().map(u8::to_string).collect();
    let tsa = t
        .tsa
        .map(|a| format!(", tsa = \"{}\"", a.name().unwrap_or("strict")))
        .unwrap_or_default();
    format!(
        "{{ tc = {}, priorities = [{}], bandwidth = {}{tsa} }}",
        t.tc,
        prios.join(", "),
        t.bandwidth
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// `ets.tcs` has one rule: whatever the classes, the file and `dcbx set` accept
    /// the same lists and give the same table, or refuse with the same reason.
    #[test]
    fn per_class_form_is_one_rule_for_file_and_change(
        tcs in proptest::collection::vec(
            (0u8..10, proptest::collection::vec(0u8..9, 0..4),
             proptest::sample::select(vec![0u8, 0, 25, 50, 50, 100, 101]),
             proptest::option::of(proptest::sample::select(vec![Tsa::STRICT, Tsa::ETS]))),
            0..5,
        )
    ) {
        let tcs: Vec<TcChange> = tcs
            .into_iter()
            .map(|(tc, priorities, bandwidth, tsa)| TcChange { tc, priorities, bandwidth, tsa })
            .collect();
        let entries: Vec<String> = tcs.iter().map(tc_toml).collect();
        let text = format!(
            "[ports.\"eth0\"]\nets = {{ willing = false, tcs = [{}] }}\n",
            entries.join(", ")
        );
        let file = DaemonConfig::parse(&text, Path::new("f.toml"));
        let mut one = One::new();
        let change = one.set(ets(EtsChange { tcs: Some(tcs.clone()), ..EtsChange::default() }));
        match (file, change) {
            (Ok(cfg), Ok(v)) => {
                let settings = cfg.port("eth0");
                let e = &settings.dcbx.ieee.ets.cfg.table;
                proptest::prop_assert_eq!(
                    nums(&v["ieee"]["ets"]["admin"]["prio_tc"]),
                    e.prio_tc.iter().map(|&b| u64::from(b)).collect::<Vec<_>>()
                );
                proptest::prop_assert_eq!(
                    nums(&v["ieee"]["ets"]["admin"]["tc_bw"]),
                    e.tc_bw.iter().map(|&b| u64::from(b)).collect::<Vec<_>>()
                );
            }
            (Err(f), Err(c)) => {
                let f = f.to_string();
                // "eth0: FIELD: REASON; nothing changed": the file must give REASON.
                let inner = c.trim_start_matches("eth0: ").trim_end_matches("; nothing changed");
                let reason = inner.split_once(": ").map_or(inner, |(_, r)| r);
                proptest::prop_assert!(f.contains(reason), "file: {}\nchange: {}", f, c);
            }
            (f, c) => proptest::prop_assert!(false, "file {:?}\nchange {:?}\n{}", f.map(|_| ()), c, text),
        }
    }
}

fn problem(reason: StateDirReason, message: &str) -> StateDirProblem {
    StateDirProblem {
        reason,
        path: "/s".into(),
        message: message.into(),
    }
}

/// A change written whose directory could not be flushed runs (a restart reads it), its
/// answer says so, and the node is unhealthy until a write succeeds whole; a write
/// refused changes nothing and refuses the next ones' with the same reason in status.
#[test]
fn a_change_written_but_not_durable_runs_with_a_warning() {
    let mut one = One::new();
    one.fail = Some(PersistError::NotDurable(problem(
        StateDirReason::NotDurable,
        "/s: state.json was replaced but the directory could not be flushed (EIO)",
    )));
    let v = one
        .set(FeatureChange {
            priorities: Some(vec![4]),
            ..change(FeatureName::Pfc)
        })
        .expect("applied");
    assert!(v["warning"]
        .as_str()
        .unwrap()
        .contains("could not be flushed"));
    assert_eq!(nums(&one.show()["pfc"]["desired"]["priorities"]), [4]);
    let st = one.request(Request::Status).result.unwrap();
    assert_eq!(st["daemon"]["state_problem"]["reason"], "not_durable");
    assert!(st["problems"].as_array().unwrap().iter().any(|p| p
        .as_str()
        .unwrap()
        .starts_with("state directory (not_durable)")));
    // A write that succeeds whole: healthy again.
    one.set(FeatureChange {
        priorities: Some(vec![5]),
        ..change(FeatureName::Pfc)
    })
    .expect("applied");
    let st = one.request(Request::Status).result.unwrap();
    assert!(st["daemon"].get("state_problem").is_none(), "{st}");
}
