//! The state directory: round trips, precise errors for damaged files, and
//! atomic replacement (concurrent readers, kill -9 in the middle of saves).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use lossless_dcbx::FeatureAdmin;
use lossless_node::config::{AppRule, AppRules, PortSettings, RuleSelector};
use lossless_node::state::{PersistedState, PortOverrides, StateError};
use lossless_wire::cee::{PfcConfig, PgConfig, PriorityMap, DCBX_OUI};
use losslessd::state_dir::{StateDir, StateDirError, STATE_FILE};

fn sample(boots: u32, ports: usize) -> PersistedState {
    let mut map = BTreeMap::new();
    for i in 0..ports {
        let app = AppRules {
            entries: vec![AppRule {
                selector: RuleSelector::Port,
                protocol: 4791,
                oui: DCBX_OUI,
                priorities: PriorityMap(1 << 3),
            }],
        };
        map.insert(
            format!("eth{i}"),
            PortOverrides {
                dcbx_enabled: Some(i % 2 == 0),
                pg: Some(FeatureAdmin {
                    enable: true,
                    willing: false,
                    advertise: true,
                    cfg: PgConfig {
                        pgid: [0, 0, 0, 1, 0, 0, 0, 15],
                        percent: [60, 40, 0, 0, 0, 0, 0, 0],
                        num_tcs: 8,
                    },
                }),
                pfc: Some(FeatureAdmin {
                    enable: true,
                    willing: false,
                    advertise: true,
                    cfg: PfcConfig {
                        priorities: PriorityMap((boots % 256) as u8),
                        num_tcs: 8,
                    },
                }),
                app: if i % 3 == 0 {
                    Some(FeatureAdmin {
                        enable: true,
                        willing: true,
                        advertise: false,
                        cfg: app,
                    })
                } else {
                    None
                },
                ..PortOverrides::default()
            },
        );
    }
    PersistedState { boots, ports: map }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn open_creates_a_private_directory() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("var/lib/lossless");
    let dir = StateDir::open(&root).expect("open");
    assert_eq!(dir.path(), root);
    let mode = std::fs::metadata(&root).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{mode:o}");
    // Opening again is fine.
    StateDir::open(&root).expect("reopen");
}

#[test]
fn open_refuses_a_directory_others_can_write() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("shared");
    std::fs::create_dir(&root).expect("mkdir");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let e = StateDir::open(&root).expect_err("refused");
    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
    assert_eq!(
        e.to_string(),
        format!(
            "{}: the state directory is writable by group or others (mode 0777): state \
             there could be forged, it is ignored; use a directory only losslessd can \
             write (0700) and a file only it can (0600)",
            root.display()
        )
    );
    // Not a directory at all.
    let file = tmp.path().join("file");
    std::fs::write(&file, "").expect("write");
    assert!(StateDir::open(&file).is_err());
}

#[test]
fn missing_file_is_the_default_state() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = StateDir::open(&tmp.path().join("s")).expect("open");
    assert_eq!(dir.load().expect("load"), PersistedState::default());
}

#[test]
fn save_load_round_trip() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = StateDir::open(&tmp.path().join("s")).expect("open");
    for state in [
        PersistedState::default(),
        sample(7, 1),
        sample(u32::MAX, 12),
    ] {
        dir.save(&state).expect("save");
        assert_eq!(dir.load().expect("load"), state);
        // Nothing but the state file is left behind.
        assert_eq!(entries(dir.path()), [STATE_FILE]);
    }
    let mode = std::fs::metadata(dir.file())
        .expect("stat")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    // A new StateDir on the same path reads the same.
    let again = StateDir::open(dir.path()).expect("reopen");
    assert_eq!(again.load().expect("load"), sample(u32::MAX, 12));
}

#[test]
fn the_file_is_versioned_readable_json() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = StateDir::open(&tmp.path().join("s")).expect("open");
    let mut state = PersistedState {
        boots: 3,
        ..Default::default()
    };
    state.ports.insert(
        "eth0".into(),
        PortOverrides {
            dcbx_enabled: Some(false),
            ..Default::default()
        },
    );
    dir.save(&state).expect("save");
    let text = std::fs::read_to_string(dir.file()).expect("read");
    assert_eq!(
        text,
        "{\n  \"version\": 1,\n  \"boots\": 3,\n  \"ports\": {\n    \"eth0\": {\n      \"dcbx_enabled\": false\n    }\n  }\n}\n"
    );
}

fn load_text(text: &str) -> (String, Result<PersistedState, StateDirError>) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = StateDir::open(&tmp.path().join("s")).expect("open");
    std::fs::write(dir.file(), text).expect("write");
    let path = dir.file().display().to_string();
    let r = dir.load();
    (path, r)
}

fn load_error(text: &str) -> String {
    let (path, r) = load_text(text);
    let e = r.expect_err("refused").to_string();
    assert!(e.starts_with(&path), "{e}");
    e.replacen(&path, "STATE", 1)
}

#[test]
fn damaged_files_are_precise_errors() {
    assert_eq!(
        load_error(""),
        "STATE:1:1: corrupt state file: the file is empty"
    );
    assert_eq!(
        load_error("{\"version\": 1, \"boots\": 3, \"po"),
        "STATE:1:30: corrupt state file: EOF while parsing a string"
    );
    assert_eq!(
        load_error("{\"version\": 1,\n \"boots\": \"x\"}"),
        "STATE:2:13: corrupt state file: invalid type: string \"x\", expected u32"
    );
    assert_eq!(
        load_error("{\"version\": 1, \"bots\": 3}"),
        "STATE:1:21: corrupt state file: unknown field `bots`, expected one of `version`, `boots`, `ports`"
    );
    assert_eq!(
        load_error("{\"boots\": 3}"),
        "STATE:1:12: corrupt state file: missing field `version`"
    );
    assert_eq!(
        load_error(
            "{\"version\": 1, \"boots\": 3, \"ports\": {\"eth0\": {\"pfc\": {\"enable\": true}}}}"
        ),
        "STATE:1:69: corrupt state file: missing field `willing`"
    );
    assert_eq!(
        load_error("{\"version\": 2, \"boots\": 3, \"checksum\": 1}"),
        "STATE: state file format version 2 is not supported (this losslessd reads version 1)"
    );
    let bad_pg =
        "{\"version\": 1, \"boots\": 0, \"ports\": {\"eth0\": {\"pg\": {\"enable\": true, \
                  \"willing\": true, \"advertise\": true, \"cfg\": {\"pgid\": [0,0,0,0,0,0,0,0], \
                  \"percent\": [50,40,0,0,0,0,0,0], \"num_tcs\": 8}}}}}";
    assert_eq!(
        load_error(bad_pg),
        "STATE: ports.\"eth0\".pg: pg.percent = 90: the eight percentages must sum to 100"
    );
    let (_, r) = load_text("[]");
    assert!(
        matches!(r, Err(StateDirError::Content(StateError::Corrupt { .. }))),
        "{r:?}"
    );
}

#[test]
fn leftover_temp_files_are_ignored() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = StateDir::open(&tmp.path().join("s")).expect("open");
    dir.save(&sample(5, 2)).expect("save");
    // What an interrupted save leaves: a partial temporary file.
    std::fs::write(
        dir.path().join(".state.json.4242.0.tmp"),
        "{\"version\": 1, \"boo",
    )
    .expect("write");
    assert_eq!(dir.load().expect("load"), sample(5, 2));
    dir.save(&sample(6, 2)).expect("save");
    assert_eq!(dir.load().expect("load"), sample(6, 2));
}

#[test]
fn saves_replace_the_file_atomically() {
    // One thread saves two large states in turn; another reads all along.
    // Every read sees one of them whole.
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("s");
    let dir = StateDir::open(&root).expect("open");
    let (a, b) = (sample(1, 60), sample(2, 45));
    dir.save(&a).expect("save");
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let dir = StateDir::open(&root).expect("open");
            let mut reads = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let got = dir.load().expect("a whole state");
                assert!(got == a || got == b, "a mixed state: boots {}", got.boots);
                reads += 1;
            }
            reads
        });
        for i in 0..200 {
            dir.save(if i % 2 == 0 { &b } else { &a }).expect("save");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let reads = reader.join().expect("reader");
        assert!(reads > 0);
    });
    assert_eq!(dir.load().expect("load"), a);
    assert_eq!(entries(dir.path()), [STATE_FILE]);
}

const CHILD_DIR: &str = "LOSSLESSD_STATE_TEST_CHILD_DIR";

/// Not a test of its own: the process `survives_kill_9` starts and kills.
#[test]
#[ignore]
fn writer_child() {
    let Some(root) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let dir = StateDir::open(Path::new(&root)).expect("open");
    for boots in 1.. {
        dir.save(&sample(boots, 30)).expect("save");
    }
}

#[test]
fn survives_kill_9() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("s");
    let dir = StateDir::open(&root).expect("open");
    let exe = std::env::current_exe().expect("test binary");
    let mut last = 0;
    for round in 0..5u64 {
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", "writer_child", "--ignored", "--test-threads=1"])
            .env(CHILD_DIR, &root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(Duration::from_millis(150 + 37 * round));
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
        let got = dir.load().expect("a whole state after kill -9");
        if got.boots != 0 {
            assert_eq!(got, sample(got.boots, 30));
        }
        last = last.max(got.boots);
    }
    assert!(last > 0, "the child never saved");
}

#[test]
fn overrides_apply_over_settings() {
    let mut s = PortSettings::default();
    let before = s.clone();
    let none = PortOverrides::default();
    assert!(none.is_empty());
    none.apply(&mut s);
    assert_eq!(s, before);

    let o = sample(9, 1).ports["eth0"].clone();
    assert!(!o.is_empty());
    o.apply(&mut s);
    assert!(s.dcbx().enabled);
    assert_eq!(Some(&s.dcbx().pg), o.pg.as_ref());
    assert_eq!(Some(&s.dcbx().pfc), o.pfc.as_ref());
    let app = o.app.as_ref().expect("eth0 overrides APP");
    assert_eq!(s.app, app.cfg);
    assert_eq!(s.dcbx().app.cfg, app.cfg.cee());
    assert_eq!(
        (
            s.dcbx().app.enable,
            s.dcbx().app.willing,
            s.dcbx().app.advertise
        ),
        (app.enable, app.willing, app.advertise)
    );
    // Only the overridden parts change.
    assert_eq!(s.timers, before.timers);
    assert_eq!(s.apply, before.apply);

    let only = PortOverrides {
        dcbx_enabled: Some(false),
        ..Default::default()
    };
    assert!(!only.is_empty());
    let mut t = before.clone();
    only.apply(&mut t);
    assert!(!t.dcbx().enabled);
    assert_eq!(t.dcbx().pfc, before.dcbx().pfc);
}
