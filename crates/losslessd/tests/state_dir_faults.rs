#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The state directory when the disk or its owner is not what it should be (issue 29,
//! item 6): a full or read-only directory, a damaged `state.json`, a directory flush
//! that fails after the rename, a directory or file another user owns. The daemon
//! starts on its configuration file every time, says what is wrong (status, health,
//! metrics, events), refuses runtime changes it cannot persist with the reason, and
//! answers every change as what will run after a restart.
//!
//! The faults are real: a one-page tmpfs and a read-only bind mount in a mount
//! namespace of the daemon's own, a library that fails `fsync(2)` of a directory
//! (lossless-testkit's `fault`), `chown`.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::fault::{in_mounts_of, private_mounts, DirFsyncFault};
use lossless_testkit::Pair;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(10);

/// A valid state file: PFC on priority 3 for `va`, set at run time.
const STATE_PFC3: &str = "{\"version\": 1, \"boots\": 3, \"ports\": {\"va\": {\"pfc\": \
    {\"enable\": true, \"willing\": false, \"advertise\": true, \
    \"cfg\": {\"priorities\": [3], \"num_tcs\": 8}}}}}\n";

fn desired(d: &Daemon) -> Vec<u64> {
    priorities(&d.dcbx("va")["pfc"]["desired"])
}

fn status(d: &Daemon) -> Value {
    d.call(&Request::Status)
}

fn problems(st: &Value) -> Vec<String> {
    st["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect()
}

fn events(d: &Daemon, kind: &str) -> Vec<Value> {
    d.call(&Request::Events { follow: false })["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == kind)
        .cloned()
        .collect()
}

/// `lossless dcbx set va pfc --priorities P`: Ok(stderr) or Err(stderr).
fn set_pfc(d: &Daemon, p: &str) -> Result<String, String> {
    let out = d.cli(&["dcbx", "set", "va", "pfc", "--priorities", p]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(err)
    } else {
        Err(err)
    }
}

fn mkdir_private(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(p).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700)).unwrap();
}

fn write_private(p: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// Fails on the old code: losslessd exited at start ("No space left on device"
/// writing the start count), so a full /var meant no LLDP/DCBX at all.
#[test]
fn a_full_state_directory_starts_unhealthy_refuses_changes_and_recovers() {
    if !require(
        "a_full_state_directory_starts_unhealthy_refuses_changes_and_recovers",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::down();
    let dir = TempDir::new();
    let seed = dir.path().join("seed.json");
    std::fs::write(&seed, STATE_PFC3).unwrap();
    let state = dir.path().join("d/state");
    let s = state.display();
    // A one-page tmpfs: the state file fills it.
    let wrapper = private_mounts(&format!(
        "mkdir -p {s}\nmount -t tmpfs -o size=4k,mode=0700 tmpfs {s}\n\
         cp {} {s}/state.json\nchmod 600 {s}/state.json",
        seed.display()
    ));
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let addr = "127.0.0.1:9741";
    let d = Daemon::start_under(
        &pair.a,
        &dir.path().join("d"),
        &wrapper,
        &["--interface", "va", "--metrics", addr],
        NO_ENV,
    );
    let pid = d.pid().unwrap();

    // Started, on what the state file held (it is valid: it runs).
    assert_eq!(desired(&d), [3]);
    let st = status(&d);
    let p = &st["daemon"]["state_problem"];
    assert_eq!(p["reason"], "not_writable", "{st}");
    assert!(
        p["message"]
            .as_str()
            .unwrap()
            .contains("No space left on device"),
        "{p}"
    );
    assert_eq!(st["healthy"], false);
    assert!(
        problems(&st)
            .iter()
            .any(|p| p.starts_with("state directory (not_writable)")
                && p.ends_with("runtime changes are refused")),
        "{st}"
    );
    let text = scrape_metrics(&pair.a, addr);
    assert_eq!(
        metric_value(&text, "lossless_state_dir_writable"),
        Some(0.0)
    );
    assert!(
        text.contains("lossless_state_dir_problem{reason=\"not_writable\"} 1"),
        "{text}"
    );
    let ev = events(&d, "state_dir");
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0]["problem"]["reason"], "not_writable");
    let out = d.cli(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("state directory: ") && text.contains("runtime changes are refused"),
        "{text}"
    );

    // A change is refused, saying why; nothing changed.
    let e = set_pfc(&d, "4").expect_err("refused");
    assert!(
        e.contains("cannot persist the change, nothing changed:")
            && e.contains("No space left on device"),
        "{e}"
    );
    assert_eq!(desired(&d), [3]);

    // Room again: the next change is taken, and the daemon is healthy.
    in_mounts_of(pid, &["mount", "-o", "remount,size=1m", &s.to_string()]);
    set_pfc(&d, "4").expect("taken");
    assert_eq!(desired(&d), [4]);
    let st = status(&d);
    assert!(st["daemon"].get("state_problem").is_none(), "{st}");
    let text = scrape_metrics(&pair.a, addr);
    assert_eq!(
        metric_value(&text, "lossless_state_dir_writable"),
        Some(1.0)
    );
    let ev = events(&d, "state_dir");
    assert!(ev.last().unwrap().get("problem").is_none(), "{ev:?}");
    let file = in_mounts_of(pid, &["cat", &format!("{s}/state.json")]);
    let file: Value = serde_json::from_slice(&file.stdout).unwrap();
    assert_eq!(
        file["ports"]["va"]["pfc"]["cfg"]["priorities"],
        serde_json::json!([4])
    );
}

/// Fails on the old code: an empty `state.json` (and a read-only directory) stopped
/// the start ("corrupt state file: the file is empty").
#[test]
fn an_empty_state_file_in_a_read_only_directory_is_kept_and_set_aside_once_writable() {
    if !require(
        "an_empty_state_file_in_a_read_only_directory_is_kept_and_set_aside_once_writable",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::down();
    let dir = TempDir::new();
    let state = dir.path().join("d/state");
    mkdir_private(&state);
    write_private(&state.join("state.json"), "");
    let s = state.display().to_string();
    let wrapper = private_mounts(&format!(
        "mount --bind {s} {s}\nmount -o remount,bind,ro {s}"
    ));
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let d = Daemon::start_under(
        &pair.a,
        &dir.path().join("d"),
        &wrapper,
        &["--interface", "va"],
        NO_ENV,
    );
    let pid = d.pid().unwrap();

    let st = status(&d);
    let aside = &st["daemon"]["state_set_aside"];
    assert!(aside["moved_to"].is_null(), "{st}");
    assert!(
        aside["why"].as_str().unwrap().contains("the file is empty"),
        "{st}"
    );
    assert_eq!(st["daemon"]["state_problem"]["reason"], "not_writable");
    assert!(
        problems(&st)
            .iter()
            .any(|p| p.starts_with("state file refused at start")),
        "{st}"
    );
    assert_eq!(events(&d, "state_set_aside").len(), 1);
    let e = set_pfc(&d, "4").expect_err("refused");
    assert!(e.contains("Read-only file system"), "{e}");
    // Left where it was.
    assert_eq!(std::fs::read(state.join("state.json")).unwrap(), b"");

    // Writable again: the daemon finds it by itself (no change asked), moves the
    // damaged file aside and writes its state.
    in_mounts_of(pid, &["mount", "-o", "remount,bind,rw", &s]);
    wait_for(LIMIT, "the state directory usable again", || {
        let ev = events(&d, "state_dir");
        (ev.len() == 2 && ev[1].get("problem").is_none()).then_some(())
    });
    let kept: Vec<_> = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("state.json.damaged-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(state.join(&kept[0])).unwrap(), b"");
    let file: Value =
        serde_json::from_slice(&std::fs::read(state.join("state.json")).unwrap()).unwrap();
    assert_eq!(file["boots"], 1);
    // The set-aside file is reported until a runtime change is persisted.
    assert!(status(&d)["daemon"]["state_set_aside"].is_object());
    set_pfc(&d, "4").expect("taken");
    let st = status(&d);
    assert!(st["daemon"].get("state_set_aside").is_none(), "{st}");
    assert!(st["daemon"].get("state_problem").is_none(), "{st}");
}

/// Fails on the old code: a truncated `state.json` stopped the start.
#[test]
fn a_truncated_state_file_is_moved_aside_and_the_daemon_runs_on_its_configuration() {
    if !require(
        "a_truncated_state_file_is_moved_aside_and_the_daemon_runs_on_its_configuration",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::down();
    let dir = TempDir::new();
    let state = dir.path().join("d/state");
    mkdir_private(&state);
    let truncated = &STATE_PFC3[..60];
    write_private(&state.join("state.json"), truncated);
    let d = Daemon::start(&pair.a, &dir.path().join("d"), &["--interface", "va"]);
    // The file's configuration: no PFC.
    assert_eq!(desired(&d), Vec::<u64>::new());
    let st = status(&d);
    let aside = &st["daemon"]["state_set_aside"];
    let moved = aside["moved_to"].as_str().unwrap();
    assert!(
        moved.starts_with(&format!("{}/state.json.damaged-", state.display())),
        "{st}"
    );
    assert!(
        aside["why"]
            .as_str()
            .unwrap()
            .contains("corrupt state file: EOF while parsing"),
        "{st}"
    );
    assert_eq!(std::fs::read_to_string(moved).unwrap(), truncated);
    assert!(st["daemon"].get("state_problem").is_none(), "{st}");
    assert_eq!(st["daemon"]["boots"], 1);
    let ev = events(&d, "state_set_aside");
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0]["moved_to"], moved);
}

/// Fails on the old code: the change was in `state.json` (and ran after a restart)
/// while the answer said "cannot persist the change, nothing changed".
#[test]
fn a_failed_directory_flush_answers_the_change_as_applied_and_a_restart_runs_it() {
    if !require(
        "a_failed_directory_flush_answers_the_change_as_applied_and_a_restart_runs_it",
        &[Oracle::Netns, Oracle::Gcc],
    ) {
        return;
    }
    let pair = Pair::down();
    let dir = TempDir::new();
    let fault = DirFsyncFault::new(dir.path());
    let mut d = Daemon::start_with_env(
        &pair.a,
        &dir.path().join("d"),
        &["--interface", "va"],
        &fault.vars(),
    );
    set_pfc(&d, "3").expect("taken");
    assert!(status(&d)["daemon"].get("state_problem").is_none());

    fault.arm();
    let said = set_pfc(&d, "4").expect("answered as applied");
    assert!(fault.failures() >= 1, "the fault was not taken");
    assert!(
        said.contains("warning:") && said.contains("could not be flushed"),
        "{said}"
    );
    // What runs is what the answer says, and what the file holds.
    assert_eq!(desired(&d), [4]);
    let file: Value =
        serde_json::from_slice(&std::fs::read(d.state.join("state.json")).unwrap()).unwrap();
    assert_eq!(
        file["ports"]["va"]["pfc"]["cfg"]["priorities"],
        serde_json::json!([4])
    );
    let st = status(&d);
    assert_eq!(
        st["daemon"]["state_problem"]["reason"], "not_durable",
        "{st}"
    );
    assert!(
        problems(&st)
            .iter()
            .any(|p| p.starts_with("state directory (not_durable)")),
        "{st}"
    );

    // Flushes work again: the next write clears it; a restart runs what was answered.
    fault.disarm();
    d.kill9();
    d.spawn();
    assert_eq!(desired(&d), [4]);
    assert!(status(&d)["daemon"].get("state_problem").is_none());
}

/// Fails on the old code: a 0700 directory owned by `nobody` holding a forged
/// `state.json` was taken, and its PFC ran.
#[test]
fn a_state_directory_or_file_of_another_user_is_not_trusted() {
    if !require(
        "a_state_directory_or_file_of_another_user_is_not_trusted",
        &[Oracle::Netns],
    ) {
        return;
    }
    let nobody = 65534;
    let pair = Pair::down();
    let dir = TempDir::new();
    let state = dir.path().join("d/state");
    mkdir_private(&state);
    let forged = state.join("state.json");
    write_private(&forged, STATE_PFC3);
    std::os::unix::fs::chown(&forged, Some(nobody), Some(nobody)).unwrap();
    std::os::unix::fs::chown(&state, Some(nobody), Some(nobody)).unwrap();
    let mut d = Daemon::start(&pair.a, &dir.path().join("d"), &["--interface", "va"]);
    // The forged PFC does not run.
    assert_eq!(desired(&d), Vec::<u64>::new());
    let st = status(&d);
    let p = &st["daemon"]["state_problem"];
    assert_eq!(p["reason"], "not_owned", "{st}");
    let euid = nix::unistd::geteuid().as_raw();
    assert_eq!(
        p["message"].as_str().unwrap(),
        format!(
            "{}: the state directory is owned by uid {nobody}, expected uid {euid} \
             (losslessd's user) or root: state there could be forged, it is ignored",
            state.display()
        )
    );
    let e = set_pfc(&d, "4").expect_err("refused");
    assert!(e.contains("owned by uid 65534"), "{e}");
    // Nothing there was touched.
    assert_eq!(std::fs::read_to_string(&forged).unwrap(), STATE_PFC3);
    d.stop();

    // The directory is ours again, the file is not: the file is not read, and is
    // moved aside.
    std::os::unix::fs::chown(&state, Some(euid), None).unwrap();
    d.spawn();
    assert_eq!(desired(&d), Vec::<u64>::new());
    let st = status(&d);
    assert!(st["daemon"].get("state_problem").is_none(), "{st}");
    let aside = &st["daemon"]["state_set_aside"];
    assert!(
        aside["why"]
            .as_str()
            .unwrap()
            .contains("the state file is owned by uid 65534"),
        "{st}"
    );
    let moved = aside["moved_to"].as_str().unwrap();
    assert!(moved.contains("state.json.untrusted-"), "{moved}");
    assert_eq!(std::fs::read_to_string(moved).unwrap(), STATE_PFC3);
    d.stop();

    // Writable by the group: refused the same way.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o770)).unwrap();
    d.spawn();
    let st = status(&d);
    assert_eq!(st["daemon"]["state_problem"]["reason"], "open_mode", "{st}");
}
