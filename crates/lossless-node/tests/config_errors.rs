//! A refused configuration file lists every mistake it holds, each with its line,
//! column, key and reason, in file order: a file with nine mistakes gets nine lines,
//! whether the key is unknown, the value of the wrong type or out of range
//! (found while reading), or the combination is invalid (found by the checks).

use std::path::Path;

use lossless_node::config::{ConfigFileError, DaemonConfig};

const FILE: &str = "/etc/lossless/losslessd.toml";

/// Nine mistakes, on the lines the expected messages give.
const NINE: &str = r#"[daemon]
metrics = "10.0.0.1:9717"
colour = true

[defaults]
pfc.priorities = [3, 9]
dcbx.mode = "fast"

[ports."eth0"]
pfc.willing = "yes"
pg.percent = [50, 40, 0, 0, 0, 0, 0, 0]
app.entries = [ { selector = "dscp", protocol = 64, priority = 3 } ]
pfc.wiling = true

[ports."eth1"]
ets.prio_tc = [0, 0, 0, 9, 0, 0, 0, 0]
"#;

fn errors(text: &str) -> Vec<String> {
    match DaemonConfig::parse(text, Path::new(FILE)) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            let lines: Vec<String> = e.to_string().lines().map(String::from).collect();
            assert_eq!(lines.len(), e.errors().len(), "{e}");
            for one in e.errors() {
                assert!(matches!(one, ConfigFileError::Invalid { .. }), "{one:?}");
            }
            lines
        }
    }
}

#[test]
fn every_mistake_is_listed_in_file_order() {
    let got = errors(NINE);
    let want = [
        format!("{FILE}:2:11: daemon.metrics: 10.0.0.1 is not a loopback address"),
        format!("{FILE}:3:1: daemon.colour: unknown key"),
        format!("{FILE}:6:22: defaults.pfc.priorities[1]: priority 9 is out of range 0..=7"),
        format!("{FILE}:7:13: defaults.dcbx.mode: unknown DCBX mode \"fast\""),
        format!("{FILE}:10:15: ports.\"eth0\".pfc.willing: expected a boolean, found a string"),
        format!("{FILE}:11:14: ports.\"eth0\".pg.percent: percentages sum to 90, must be 100"),
        format!("{FILE}:12:"),
        format!("{FILE}:13:5: ports.\"eth0\".pfc.wiling: unknown key"),
        format!("{FILE}:16:"),
    ];
    assert_eq!(got.len(), want.len(), "{got:#?}");
    for (g, w) in got.iter().zip(&want) {
        assert!(
            g.starts_with(w.as_str()),
            "want {w:?}\n got {g:?}\nall: {got:#?}"
        );
    }
    assert!(got[6].contains("app.entries[0]"), "{}", got[6]);
    assert!(got[8].contains("ets.prio_tc[3]"), "{}", got[8]);
}

/// A mistake under [defaults] is one mistake, however many sections it reaches.
#[test]
fn a_mistake_shared_by_sections_is_listed_once() {
    let text = "[defaults]\npg.percent = [50, 40, 0, 0, 0, 0, 0, 0]\n\
                [ports.\"eth0\"]\npfc.priorities = [3]\n[ports.\"eth*\"]\npfc.priorities = [4]\n";
    let got = errors(text);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(got[0].contains("defaults.pg.percent"), "{got:#?}");
}

/// One mistake is still one line, as before.
#[test]
fn one_mistake_is_one_line() {
    let got = errors("[ports.\"eth0\"]\npfc.priorities = [3, 3]\n");
    assert_eq!(
        got,
        [format!(
            "{FILE}:2:22: ports.\"eth0\".pfc.priorities[1]: priority 3 is listed twice"
        )]
    );
}
