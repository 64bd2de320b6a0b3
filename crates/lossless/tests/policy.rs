#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! `lossless policy`: the XML form through the CLI, routes from LFT dumps, and the Ethernet
//! profile, whose output must be a configuration losslessd itself accepts with the PFC and
//! PG settings the policy says.

use std::path::{Path, PathBuf};
use std::process::Command;

use lossless_node::config::DaemonConfig;

fn data(name: &str) -> String {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let p = if name.starts_with("policy:") {
        here.join("../lossless-policy/tests/data")
            .join(name.trim_start_matches("policy:"))
    } else {
        here.join("tests/data").join(name)
    };
    p.display().to_string()
}

fn lossless(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .expect("run lossless");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lossless-policy-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write temp file");
    p
}

/// PGIDs, percentages and PFC priorities of one port, as losslessd will run it.
fn dcbx_of(cfg: &DaemonConfig, port: &str) -> ([u8; 8], [u8; 8], Vec<u8>) {
    assert!(cfg.selects(port), "losslessd would not run on {port}");
    let s = cfg.port(port);
    let d = s.dcbx();
    (
        d.pg.cfg.pgid,
        d.pg.cfg.percent,
        d.pfc.cfg.priorities.priorities().collect(),
    )
}

#[test]
fn ethernet_profile_is_what_losslessd_loads() {
    let (code, toml, stderr) = lossless(&[
        "policy",
        "compile",
        &data("ethernet-policy.conf"),
        "--ethernet",
        "--lossless",
        "storage",
        "--ports",
        "eth9",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let file = temp("losslessd.toml", &toml);
    let cfg = DaemonConfig::parse(&toml, &file)
        .unwrap_or_else(|e| panic!("losslessd refuses the compiled configuration: {e}\n{toml}"));
    // roce only: priority 3 alone in PG 1, VLArb weights 64:192 -> 25/75; PFC on the lossless
    // levels' priorities (roce by the policy, storage by --lossless).
    assert_eq!(
        dcbx_of(&cfg, "enp65s0f0"),
        (
            [0, 0, 0, 1, 0, 0, 0, 0],
            [25, 75, 0, 0, 0, 0, 0, 0],
            vec![3, 4]
        )
    );
    // In both groups: the last scope (storage) applies, as on IB. 32:128:96 of 256 ->
    // 12.5/50/37.5, the half percent to the lower PG.
    assert_eq!(
        dcbx_of(&cfg, "enp65s0f1"),
        (
            [0, 0, 0, 1, 2, 0, 0, 0],
            [13, 50, 37, 0, 0, 0, 0, 0],
            vec![3, 4]
        )
    );
    assert_eq!(dcbx_of(&cfg, "enp3s0"), dcbx_of(&cfg, "enp65s0f1"));
    // Named only on the command line: one PG per priority, equal shares (lldpad's default).
    assert_eq!(
        dcbx_of(&cfg, "eth9"),
        (
            [0, 1, 2, 3, 4, 5, 6, 7],
            [13, 13, 13, 13, 12, 12, 12, 12],
            vec![3, 4]
        )
    );
    assert!(
        !cfg.selects("eth0"),
        "only the policy's interfaces get a section"
    );
    // The qos-class rule (TClass 106 -> roce): IEEE 802.1Qaz APP DSCP 26 -> priority 3 on
    // every port, in IEEE form only (CEE DCBX has no DSCP selector).
    for port in ["enp65s0f0", "enp65s0f1", "enp3s0", "eth9"] {
        let s = cfg.port(port);
        let ieee: Vec<(u8, u8, u16)> = s
            .dcbx()
            .ieee
            .app
            .iter()
            .map(|e| (e.selector.0, e.priority, e.protocol))
            .collect();
        assert_eq!(ieee, [(5, 3, 26)], "{port}");
        assert!(s.dcbx().app.cfg.entries.is_empty(), "{port}");
    }
    // Without --lossless storage, only the level the policy marks.
    let (_, toml, _) = lossless(&[
        "policy",
        "compile",
        &data("ethernet-policy.conf"),
        "--ethernet",
    ]);
    let cfg = DaemonConfig::parse(&toml, &file).expect("losslessd accepts it");
    assert_eq!(dcbx_of(&cfg, "enp3s0").2, vec![3]);
    // --json carries the same per-port values.
    let (code, out, _) = lossless(&[
        "policy",
        "compile",
        &data("ethernet-policy.conf"),
        "--ethernet",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["ports"][1]["name"], "enp65s0f1");
    assert_eq!(
        v["ports"][1]["percent"],
        serde_json::json!([13, 50, 37, 0, 0, 0, 0, 0])
    );
    assert_eq!(v["levels"][1]["priority"], 3);
    assert_eq!(v["ports"][1]["app"][0]["dscp"], 26);
    assert_eq!(v["ports"][1]["app"][0]["priority"], 3);
    assert_eq!(v["ports"][1]["app"][0]["tclass"], serde_json::json!([106]));
    assert_eq!(v["levels"][1]["lossless"], true);
}

/// IEEE 802.1Qaz ETS as losslessd reads it from the compiled file means what the CEE priority
/// groups mean: priorities share a traffic class exactly when they share a group, each class
/// that carries priorities is served by ETS with its group's share, and the classes that
/// carry none get nothing. A port on the default `auto` mode runs IEEE first, so without
/// this it would run the driver's ETS, not the policy's.
#[test]
fn ethernet_profile_ets_means_the_priority_groups() {
    use lossless_wire::ieee::Tsa;
    let (code, toml, stderr) = lossless(&[
        "policy",
        "compile",
        &data("ethernet-policy.conf"),
        "--ethernet",
        "--ports",
        "eth9",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let file = temp("losslessd-ets.toml", &toml);
    let cfg = DaemonConfig::parse(&toml, &file)
        .unwrap_or_else(|e| panic!("losslessd refuses the compiled configuration: {e}\n{toml}"));
    for port in ["enp65s0f0", "enp65s0f1", "enp3s0", "eth9"] {
        let d = cfg.port(port).dcbx().clone();
        let (pgid, percent) = (d.pg.cfg.pgid, d.pg.cfg.percent);
        let ets = d.ieee.ets.cfg.table;
        assert_ne!(
            ets,
            lossless_wire::ieee::EtsTable::default(),
            "{port}: ETS left at the default\n{toml}"
        );
        for p in 0..8 {
            for q in 0..8 {
                assert_eq!(
                    pgid[p] == pgid[q],
                    ets.prio_tc[p] == ets.prio_tc[q],
                    "{port}: priorities {p} and {q}: PGs {pgid:?}, classes {:?}",
                    ets.prio_tc
                );
            }
            let tc = usize::from(ets.prio_tc[p]);
            assert_eq!(ets.tsa[tc], Tsa::ETS, "{port}: class {tc} of priority {p}");
            assert_eq!(
                ets.tc_bw[tc],
                percent[usize::from(pgid[p])],
                "{port}: the share of priority {p}'s class"
            );
        }
        for tc in 0..8u8 {
            if !ets.prio_tc.contains(&tc) {
                assert_eq!(ets.tc_bw[usize::from(tc)], 0, "{port}: unused class {tc}");
            }
        }
    }
    // --json carries the same tables.
    let (code, out, _) = lossless(&[
        "policy",
        "compile",
        &data("ethernet-policy.conf"),
        "--ethernet",
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let p = &v["ports"][1];
    assert_eq!(p["name"], "enp65s0f1");
    assert_eq!(p["ets"]["prio_tc"], p["pgid"]);
    assert_eq!(p["ets"]["tc_bw"], p["percent"]);
    assert_eq!(
        p["ets"]["tsa"],
        serde_json::json!(["ets", "ets", "ets", "strict", "strict", "strict", "strict", "strict"])
    );
}

#[test]
fn ethernet_profile_same_from_the_xml_form() {
    let xml = "\
<qos-policy>
 <port-groups>
  <port-group><name>roce</name><port-name>enp65s0f0, enp65s0f1</port-name></port-group>
  <port-group><name>storage</name><port-name>enp65s0f1, enp3s0</port-name></port-group>
 </port-groups>
 <qos-setup>
  <sl2vl-tables>
   <sl2vl-scope><group>roce</group><sl2vl-table>0,0,0,1,0,0,0,0,0,0,0,0,0,0,0,0</sl2vl-table></sl2vl-scope>
   <sl2vl-scope><group>storage</group><sl2vl-table>0,0,0,1,2,0,0,0,0,0,0,0,0,0,0,0</sl2vl-table></sl2vl-scope>
  </sl2vl-tables>
  <vlarb-tables>
   <vlarb-scope><group>roce</group><vlarb-low>0:64,1:192</vlarb-low></vlarb-scope>
   <vlarb-scope><group>storage</group><vlarb-low>0:32,1:128,2:96</vlarb-low></vlarb-scope>
  </vlarb-tables>
 </qos-setup>
 <qos-levels>
  <qos-level><name>DEFAULT</name><sl>0</sl></qos-level>
  <qos-level><name>roce</name><sl>3</sl><lossless/></qos-level>
  <qos-level><name>storage</name><sl>4</sl></qos-level>
 </qos-levels>
 <qos-match-rules>
  <qos-match-rule><qos-class>106</qos-class><qos-level-name>roce</qos-level-name></qos-match-rule>
  <qos-match-rule><service-id>0x1060CBC</service-id><qos-level-name>storage</qos-level-name></qos-match-rule>
 </qos-match-rules>
</qos-policy>
";
    let p = temp("ethernet.xml", xml);
    let json = |path: &str| {
        let (code, out, err) = lossless(&["policy", "compile", path, "--ethernet", "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        v["ports"].clone()
    };
    let a = json(&data("ethernet-policy.conf"));
    let mut b = json(&p.display().to_string());
    // Same values; only the places of the scopes and rules differ between the two files.
    for (x, y) in a.as_array().unwrap().iter().zip(b.as_array_mut().unwrap()) {
        y["sl2vl_scope"] = x["sl2vl_scope"].clone();
        y["vlarb_scope"] = x["vlarb_scope"].clone();
        y["app"][0]["rule"] = x["app"][0]["rule"].clone();
    }
    assert_eq!(a, b);
}

#[test]
fn ethernet_profile_refusals() {
    let run = |policy: &str, extra: &[&str]| {
        let p = temp("bad.conf", policy);
        let mut args = vec!["policy", "compile"];
        let ps = p.display().to_string();
        args.push(&ps);
        args.push("--ethernet");
        args.extend_from_slice(extra);
        let (code, out, err) = lossless(&args);
        assert_eq!(code, 2, "{out}{err}");
        assert!(out.is_empty(), "nothing on stdout when refused: {out}");
        err.replace(&ps, "bad.conf")
    };
    let groups = "port-groups\n port-group\n  name: g\n  port-name: eth0\n end-port-group\nend-port-groups\n";
    let level = |sl: u8| {
        format!(
            "qos-levels\n qos-level\n  name: DEFAULT\n  sl: {sl}\n end-qos-level\nend-qos-levels\n"
        )
    };
    let err = run(&format!("{groups}{}", level(9)), &[]);
    assert!(err.contains("bad.conf:10:7: error[sl-not-priority]: level `DEFAULT` has SL 9: on Ethernet the SL is the 802.1p priority, 0-7"), "{err}");
    let err = run(&format!("{groups}{}", level(1)), &["--lossless", "gold"]);
    assert!(
        err.contains("--lossless gold: no QoS level of that name, expected one of: DEFAULT"),
        "{err}"
    );
    let err = run(&level(1), &[]);
    assert!(err.contains("no Ethernet port to configure"), "{err}");
    let err = run(
        &format!("{groups}{}", level(1)),
        &["--ports", "enp65s0f0-but-far-too-long"],
    );
    assert!(
        err.contains(
            "`enp65s0f0-but-far-too-long` cannot be configured: an interface name is 1 to 15 bytes"
        ),
        "{err}"
    );
    let setup = "qos-setup\n sl2vl-tables\n  sl2vl-scope\n   group: g\n   sl2vl-table: 0,1,2,9,4,5,6,7,8,9,10,11,12,13,14,15\n  end-sl2vl-scope\n end-sl2vl-tables\nend-qos-setup\n";
    let err = run(&format!("{groups}{setup}{}", level(1)), &[]);
    assert!(err.contains("bad.conf:11:4: error[vl-not-pg]: sl2vl-table maps SL 3 to VL 9: on Ethernet VLs are priority groups 0-7"), "{err}");
    // An InfiniBand fabric has no place in the Ethernet profile.
    let (code, _, err) = lossless(&[
        "policy",
        "compile",
        &data("ethernet-policy.conf"),
        "--ethernet",
        "--fabric",
        &data("policy:net"),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--fabric, --partitions, --mtu-cap and --sm describe an InfiniBand subnet"),
        "{err}"
    );
    // --ports without --ethernet is a usage error.
    let (code, _, err) = lossless(&[
        "policy",
        "compile",
        &data("ethernet-policy.conf"),
        "--ports",
        "eth0",
    ]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn xml_form_through_check() {
    let (code, out, _) = lossless(&["policy", "check", &data("policy:qos-rfc-example.xml")]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 18, "{out}");
    assert!(lines[8].ends_with("qos-rfc-example.xml:39:3: found `<sl2vl-tables>` while `<sl2vl-tables>` opened at 28:3 is still open, expected `</sl2vl-tables>`"), "{}", lines[8]);
    assert!(lines[17].ends_with("qos-rfc-example.xml: 17 error(s), 0 warning(s)"));
    let (code, out, _) = lossless(&[
        "policy",
        "check",
        &data("policy:qos-rfc-example.xml"),
        "--json",
    ]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["errors"], 17);
    assert_eq!(
        v["diagnostics"][13]["loc"],
        serde_json::json!({"line": 63, "col": 48})
    );
    let (code, out, err) = lossless(&["policy", "check", &data("policy:qos-rfc-corrected.xml")]);
    assert_eq!(code, 0, "{out}{err}");
    // resolve on a broken XML policy: every mistake on stderr, the first in the error line.
    let (code, _, err) = lossless(&[
        "policy",
        "resolve",
        &data("policy:qos-rfc-example.xml"),
        "--fabric",
        &data("policy:net"),
        "--src",
        "Hca1",
        "--dst",
        "Hca2",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("lossless: policy: ")
            && err.contains("10:3: unexpected `<!—-`")
            && err.contains("(and 16 more above)"),
        "{err}"
    );
}

#[test]
fn resolve_with_lfts() {
    let base = [
        "policy",
        "resolve",
        &data("policy:qos-policy.conf"),
        "--fabric",
        &data("policy:net"),
        "--partitions",
        &data("policy:partitions.conf"),
        "--json",
    ]
    .map(String::from);
    let json = |extra: &[&str]| {
        let mut args: Vec<String> = base.to_vec();
        args.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = lossless(&a);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).expect("JSON")
    };
    let lfts = data("policy:lft/dump_lfts.txt");
    let v = json(&["--src", "Hca1", "--dst", "Hca4", "--lfts", &lfts]);
    assert!(
        v["routing"].as_str().unwrap().starts_with("LFT from "),
        "{v}"
    );
    assert_eq!(v["hops"][1]["out_port"], 5);
    let v = json(&["--src", "Hca1", "--dst", "Hca4"]);
    assert_eq!(v["routing"], "min-hop (no LFT dump given)");
    assert_eq!(v["hops"][1]["out_port"], 3);
    // LIDs as NODE on a net file: the LFT dump knows them.
    let v = json(&["--src", "2", "--dst", "6", "--lfts", &lfts]);
    assert_eq!(v["hops"][0]["node"], "Hca1");
    assert_eq!(v["hops"][2]["node"], "Switch2");
    // A dump of another subnet is refused with its place.
    let other = temp(
        "other.txt",
        &std::fs::read_to_string(&lfts)
            .unwrap()
            .replace("0x0000000000200001", "0x0000000000abcdef"),
    );
    let (code, _, err) = lossless(&[
        "policy",
        "resolve",
        &data("policy:qos-policy.conf"),
        "--fabric",
        &data("policy:net"),
        "--src",
        "Hca1",
        "--dst",
        "Hca4",
        "--lfts",
        &other.display().to_string(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("lossless: --lfts: ")
            && err.contains("the LFT dump and the fabric dump must come from the same subnet"),
        "{err}"
    );
}

#[test]
fn help_names_the_new_options() {
    let (_, out, _) = lossless(&["policy", "compile", "--help"]);
    for w in [
        "--ethernet",
        "--ports",
        "--lossless",
        "the OFA QoS RFC's XML form",
        "losslessd",
    ] {
        assert!(out.contains(w), "compile --help lacks {w}:\n{out}");
    }
    let (_, out, _) = lossless(&["policy", "resolve", "--help"]);
    for w in ["--lfts", "dump_lfts", "min-hop"] {
        assert!(out.contains(w), "resolve --help lacks {w}:\n{out}");
    }
}

/// opensm.conf values OpenSM reads otherwise than written (a 15-value SL2VL list, a VLArb
/// weight of 300, VL 16, octal): every policy command given --opensm-conf says, line by line,
/// what OpenSM programs instead; compile programs exactly that.
#[test]
fn opensm_conf_warnings_from_every_command() {
    let conf = temp(
        "odd-opensm.conf",
        "qos TRUE\nqos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6\nqos_vlarb_low 0:300,16:4,010:2\n",
    );
    let conf = conf.display().to_string();
    let fabric = data("policy:net");
    let policy = data("policy:qos-policy.conf");
    let expected = [
        ":2: warning: qos_sl2vl: 15 VLs for 16 SLs: OpenSM maps SL15-15 to VL0",
        ":3: warning: qos_vlarb_low: weight `300` is outside 0-255: OpenSM programs 44",
        ":3: warning: qos_vlarb_low: VL `16` is outside 0-14: OpenSM programs VL 1",
    ];
    for cmd in [
        vec![
            "policy",
            "check",
            &policy,
            "--fabric",
            &fabric,
            "--opensm-conf",
            &conf,
        ],
        vec![
            "policy",
            "compile",
            &policy,
            "--fabric",
            &fabric,
            "--opensm-conf",
            &conf,
            "--json",
        ],
        vec![
            "policy",
            "resolve",
            &policy,
            "--fabric",
            &fabric,
            "--opensm-conf",
            &conf,
            "--src",
            "Hca1",
            "--dst",
            "Hca2",
        ],
    ] {
        let (code, out, err) = lossless(&cmd);
        assert!(code == 0 || cmd[1] == "check", "{cmd:?}: {err}");
        for e in expected {
            assert!(
                err.contains(&format!("{conf}{e}")),
                "{cmd:?}: no `{e}` in:\n{err}"
            );
        }
        if cmd[1] == "compile" {
            // The same tables as text: OpenSM's `VL:weight` lists and SL2VL rows, no
            // Rust tuples.
            let text_cmd: Vec<&str> = cmd.iter().copied().filter(|a| *a != "--json").collect();
            let (code, text, err) = lossless(&text_cmd);
            assert_eq!(code, 0, "{err}");
            let ca = text
                .split("\nHca1/P1 ")
                .nth(1)
                .or_else(|| text.strip_prefix("Hca1/P1 "))
                .unwrap_or_else(|| panic!("no Hca1/P1 in:\n{text}"));
            assert!(
                ca.contains("\n  VLArb low  0:44,1:4,0:2,0:0,0:0,0:0,0:0,0:0\n"),
                "{text}"
            );
            assert!(ca.contains("SL->VL"), "{text}");
            assert!(!text.contains("[("), "Debug tuples in:\n{text}");
            let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
            let ca = v["ports"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["port"] == "Hca1/P1")
                .expect("Hca1/P1 compiled");
            // SL15 on VL0; the weight cut to 8 bits, VL 16 taken modulo 15, octal 010 = VL 8
            // masked to VL0-7; the table written whole (8 entries).
            assert_eq!(ca["sl2vl"][0][1][15], 0, "{ca}");
            assert_eq!(
                ca["vlarb_low"],
                serde_json::json!([
                    [0, 44],
                    [1, 4],
                    [0, 2],
                    [0, 0],
                    [0, 0],
                    [0, 0],
                    [0, 0],
                    [0, 0]
                ]),
                "{ca}"
            );
        }
    }
}

/// `--sm` with what `sminfo` prints, on ibnetdiscover output (which does not say where the
/// SM runs): OpenSM runs on a CA that is not the net file's first node, and every PathRecord
/// between CAs, asked with saquery at run time, equals `resolve --json`'s answer, SELF
/// levels, partition P_Keys and refusals included. Without `--sm` the answer says no SM port
/// is known, and why.
#[test]
fn resolve_with_the_sm_from_sminfo_equals_opensm() {
    use lossless_policy::fabric::topo;
    use lossless_testkit::opensm::{OpenSm, SimInput};
    if !lossless_testkit::require(
        "resolve_with_the_sm_from_sminfo_equals_opensm",
        &[lossless_testkit::Oracle::OpenSm],
    ) {
        return;
    }
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../lossless-policy/tests/oracle/sm-on-ca");
    let file = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let sim = OpenSm::start_on(
        &SimInput {
            net: file("net"),
            opensm_conf: file("opensm.conf"),
            policy: Some(file("qos-policy.conf")),
            partitions: Some(file("partitions.conf")),
        },
        Some("HB1"),
    )
    .expect("OpenSM runs on HB1");
    let sminfo = sim.sminfo("HA1");
    assert!(sminfo.contains("SMINFO_MASTER"), "{sminfo}");
    let disc = sim.ibnetdiscover("HA1");
    let fabric = topo::parse("ibnetdiscover.out", &disc).unwrap();
    let disc_file = temp("sm-on-ca.ibnetdiscover", &disc).display().to_string();
    let (policy, parts, conf) = (
        dir.join("qos-policy.conf").display().to_string(),
        dir.join("partitions.conf").display().to_string(),
        dir.join("opensm.conf").display().to_string(),
    );
    let resolve = |src: u16, dst: u16, pkey: Option<&str>, sm: Option<&str>| {
        let (s, d) = (src.to_string(), dst.to_string());
        let mut args = vec![
            "policy",
            "resolve",
            &policy,
            "--fabric",
            &disc_file,
            "--partitions",
            &parts,
            "--opensm-conf",
            &conf,
            "--mtu-cap",
            "4",
            "--src",
            &s,
            "--dst",
            &d,
            "--json",
        ];
        if let Some(p) = pkey {
            args.extend(["--pkey", p]);
        }
        if let Some(sm) = sm {
            args.extend(["--sm", sm]);
        }
        let (code, out, err) = lossless(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str::<serde_json::Value>(&out).expect("JSON")
    };
    // The CAs (ibsim's are 2048-byte MTU ports: --mtu-cap 4), with their net ids and LIDs.
    let cas: Vec<(String, u16)> = ["HA1", "HA2", "HB1", "HB2"]
        .iter()
        .map(|h| {
            let n = fabric.by_desc(h).unwrap();
            (
                h.to_string(),
                fabric.nodes[n].port(1).and_then(|p| p.lid).unwrap(),
            )
        })
        .collect();
    let mut compared = 0;
    let mut from_sm = 0;
    for (host, src) in &cas {
        for (_, dst) in &cas {
            for pkey in [None, Some("0x10")] {
                let opts: Vec<&str> = pkey.map(|p| vec!["--pkey", p]).unwrap_or_default();
                let want = sim.path_record(host, *src, *dst, &opts);
                let v = resolve(*src, *dst, pkey, Some(&sminfo));
                let got = (v["no_path"] != true).then(|| {
                    (
                        v["sl"].as_u64().unwrap() as u8,
                        v["mtu"].as_u64().unwrap() as u8,
                        v["rate"].as_u64().unwrap() as u8,
                        v["packet_life"].as_u64().unwrap() as u8,
                        u16::from_str_radix(
                            v["pkey"].as_str().unwrap().trim_start_matches("0x"),
                            16,
                        )
                        .unwrap(),
                    )
                });
                let want = want.map(|p| (p.sl, p.mtu, p.rate, p.pkt_life, p.pkey));
                assert_eq!(
                    got, want,
                    "{host} LID {src} -> LID {dst} {pkey:?}: ours (left) and OpenSM's (right) differ: {v}"
                );
                assert_eq!(v["sm"]["port"], "HB1/P1", "{v}");
                assert_eq!(v["sm"]["source"], "given", "{v}");
                compared += 1;
                from_sm += usize::from(host == "HB1" && got.is_some() && src != dst);
            }
        }
    }
    assert_eq!(compared, 32);
    assert!(from_sm > 0, "no path from the SM's port to compare");
    // Without --sm: ibnetdiscover output names no SM, and the answer says so.
    let v = resolve(cas[2].1, cas[0].1, None, None);
    assert_eq!(v["sm"]["source"], "unknown", "{v}");
    assert!(v["sm"]["port"].is_null(), "{v}");
    assert!(
        v["sm"]["text"]
            .as_str()
            .unwrap()
            .contains("ibnetdiscover output does not say where the SM runs"),
        "{v}"
    );
}

/// Every command given a fabric says which port it takes for the SM: the one `--sm` names
/// (any of its forms, sminfo's line too), else the net file's first node and why; a name the
/// fabric lacks, or `--sm` without a fabric, is refused.
#[test]
fn the_sm_port_is_said_by_every_command() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../lossless-policy/tests/oracle/sm-on-switch");
    let f = |n: &str| dir.join(n).display().to_string();
    let (policy, net) = (f("qos-policy.conf"), f("net"));
    let assumed = "SwA/P0, assumed: the first node of the ibsim net file, where ibsim attaches \
                   OpenSM when it is started without SIM_HOST; give --sm";
    for cmd in [
        vec!["policy", "check", &policy, "--fabric", &net],
        vec!["policy", "compile", &policy, "--fabric", &net],
        vec![
            "policy", "resolve", &policy, "--fabric", &net, "--src", "HA1", "--dst", "HB1",
        ],
        vec![
            "policy", "explain", &policy, "--fabric", &net, "--src", "HA1", "--dst", "HB1",
        ],
    ] {
        let (code, out, err) = lossless(&cmd);
        assert_eq!(code, 0, "{cmd:?}: {err}");
        assert!(
            out.contains(&format!("SM port: {assumed}")),
            "{cmd:?}:\n{out}"
        );
        for sm in [
            "SwB",
            "SwB/P3",
            "0x200001",
            "sminfo: sm lid 4 sm guid 0x200001, activity count 128 priority 0 state 3 SMINFO_MASTER",
        ] {
            let mut with = cmd.clone();
            with.extend(["--sm", sm]);
            let (code, out, err) = lossless(&with);
            assert_eq!(code, 0, "{with:?}: {err}");
            assert!(out.contains("SM port: SwB/P0 (given)\n"), "{with:?}:\n{out}");
        }
        let mut with = cmd.clone();
        with.extend(["--json", "--sm", "SwB"]);
        let (_, out, _) = lossless(&with);
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(v["sm"]["port"], "SwB/P0", "{with:?}: {v}");
        assert_eq!(v["sm"]["source"], "given", "{with:?}: {v}");
        let mut with = cmd.clone();
        with.extend(["--sm", "SwZ"]);
        let (code, _, err) = lossless(&with);
        assert_eq!(code, 2, "{with:?}");
        assert!(
            err.contains("lossless: --sm: no node matches `SwZ`"),
            "{err}"
        );
    }
    let (code, _, err) = lossless(&["policy", "check", &policy, "--sm", "SwB"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--sm: names a port of the fabric: give --fabric too"),
        "{err}"
    );
    let (code, _, err) = lossless(&[
        "policy",
        "compile",
        &data("ethernet-policy.conf"),
        "--ethernet",
        "--sm",
        "SwB",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--sm describe an InfiniBand subnet"), "{err}");
    let (_, out, _) = lossless(&["policy", "resolve", "--help"]);
    for w in ["--sm", "sminfo", "SELF"] {
        assert!(out.contains(w), "resolve --help lacks {w}:\n{out}");
    }
}
