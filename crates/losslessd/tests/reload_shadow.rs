#![allow(clippy::unwrap_used)]
//! A runtime change (`dcbx set`) outlives an edit of the configuration file: `reload`
//! must say which runtime change still shadows the file's new value (in its answer, the
//! CLI's output and the daemon's log), and `dcbx reset` must make the file's value run.
//! Two losslessd over veth: A with a file, B on the defaults (willing), which shows on
//! the wire what A runs.

mod common;

use std::process::Output;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";

fn config(pfc: &str) -> String {
    format!(
        "[defaults.dcbx]\nmode = \"cee\"\n\n[ports.\"va\"]\n\
         pfc = {{ willing = false, priorities = [{pfc}] }}\n\
         pg = {{ willing = false, pgid = [0, 0, 0, 1, 1, 1, 15, 2], \
         percent = [25, 75, 0, 0, 0, 0, 0, 0] }}\n"
    )
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn b_runs(b: &Daemon, want: &[u64]) {
    wait_for(
        Duration::from_secs(5),
        &format!("B to run PFC {want:?}"),
        || {
            let v = b.dcbx("vb");
            (converged(&v) && priorities(&v["pfc"]["oper"]) == want).then_some(())
        },
    );
}

#[test]
fn reload_names_the_runtime_changes_that_shadow_the_file_and_reset_hands_back() {
    if !lossless_testkit::require(
        "reload_names_the_runtime_changes_that_shadow_the_file_and_reset_hands_back",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, config("3, 4")).unwrap();
    let a = Daemon::start(
        &na,
        &dir.path().join("a"),
        &["--config", conf.to_str().unwrap()],
    );
    let b = Daemon::start(&nb, &dir.path().join("b"), &["--interface", "vb"]);
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    b_runs(&b, &[3, 4]);

    // A runtime change, then the file edited: PFC on 1 in the file, 5 at runtime.
    ok(a.cli(&["dcbx", "set", "va", "pfc", "--priorities", "5"]));
    b_runs(&b, &[5]);
    std::fs::write(&conf, config("1")).unwrap();
    let shadow = "va pfc: the file's new value does not run: a runtime change (dcbx set) \
                  shadows it; lossless dcbx reset va pfc to use the file";

    let text = ok(a.cli(&["reload"]));
    assert!(text.lines().any(|l| l == shadow), "{text}");
    assert!(a.log().contains(shadow), "{}", a.log());
    // Edited again: the JSON says so too.
    std::fs::write(&conf, config("1, 2")).unwrap();
    let r: Value = serde_json::from_str(&ok(a.cli(&["reload", "--json"]))).unwrap();
    assert_eq!(
        r["shadowed"],
        json!([{"port": "va", "feature": "pfc", "file_changed": true, "message": shadow}]),
        "{r:#}"
    );
    // Reloaded once more, unedited: the change is still named, as running instead of
    // the file's value.
    std::fs::write(&conf, config("1")).unwrap();
    ok(a.cli(&["reload"]));
    let r: Value = serde_json::from_str(&ok(a.cli(&["-j", "reload"]))).unwrap();
    assert_eq!(r["shadowed"][0]["file_changed"], false, "{r:#}");
    assert_eq!(
        r["shadowed"][0]["message"],
        "va pfc: a runtime change (dcbx set) runs instead of the file's value; \
         lossless dcbx reset va pfc to use the file"
    );
    // The runtime value still runs: the reload is answered once A has decided, and A
    // still wants {5}, so it has sent B nothing else (a change goes out at once).
    let va = a.dcbx("va");
    assert_eq!(priorities(&va["pfc"]["desired"]), [5], "{va:#}");
    assert_eq!(va["source"]["pfc"], "runtime");
    assert_eq!(priorities(&b.dcbx("vb")["pfc"]["oper"]), [5]);

    // reset: the file's value runs, the change is gone from the state directory, and a
    // reload has nothing more to say about it.
    let text = ok(a.cli(&["dcbx", "reset", "va", "pfc"]));
    assert!(text.contains("va: DCBX active"), "{text}");
    b_runs(&b, &[1]);
    let v = a.dcbx("va");
    assert_eq!(v["source"]["pfc"], "config", "{v:#}");
    assert_eq!(priorities(&v["pfc"]["desired"]), [1]);
    let state = std::fs::read_to_string(a.state.join("state.json")).unwrap();
    let state: Value = serde_json::from_str(&state).unwrap();
    assert_eq!(state["ports"], json!({}), "{state:#}");
    let text = ok(a.cli(&["reload"]));
    assert!(!text.contains("shadow"), "{text}");

    // A runtime change the file has not caught up with is named too, as still running
    // instead of the file's value; one equal to the file's is not.
    ok(a.cli(&["dcbx", "set", "va", "pg", "--percent", "50,50,0,0,0,0,0,0"]));
    ok(a.cli(&["dcbx", "set", "va", "pfc", "--priorities", "1"]));
    let r: Value = serde_json::from_str(&ok(a.cli(&["reload", "--json"]))).unwrap();
    assert_eq!(
        r["shadowed"],
        json!([{"port": "va", "feature": "pg", "file_changed": false,
                "message": "va pg: a runtime change (dcbx set) runs instead of the file's \
                            value; lossless dcbx reset va pg to use the file"}]),
        "{r:#}"
    );
}
