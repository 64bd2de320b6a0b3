//! The configuration file: layering, selection, the shipped example, and the
//! exact one-line message of every kind of refusal.

use lossless_node::rx_budget::RxBudgetLimits;
use std::path::{Path, PathBuf};

use lossless_dcbx::{AdminStatus, DcbxConfig, LldpTimers, PortConfig};
use lossless_node::config::{
    Apply, ConfigFileError, DaemonConfig, DaemonLimits, DaemonSettings, PortSettings,
};
use lossless_node::identity::{Advertise, LocalInfo};
use lossless_wire::cee::{AppEntry, AppSelector, AppTable, PriorityMap, DCBX_OUI};
use lossless_wire::MacAddr;

const FILE: &str = "/etc/lossless/losslessd.toml";

fn parse(text: &str) -> DaemonConfig {
    match DaemonConfig::parse(text, Path::new(FILE)) {
        Ok(c) => c,
        Err(e) => panic!("refused: {e}"),
    }
}

/// The one-line message of a refused file.
fn refuse(text: &str) -> String {
    match DaemonConfig::parse(text, Path::new(FILE)) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "more than one line: {line:?}");
            line
        }
    }
}

fn app(selector: AppSelector, protocol: u16, priorities: &[u8]) -> AppEntry {
    AppEntry {
        selector,
        protocol,
        oui: DCBX_OUI,
        priorities: PriorityMap::from_priorities(priorities).expect("priorities 0..=7"),
    }
}

// ---------------------------------------------------------------- refusals

#[test]
fn unknown_key_in_a_port_section() {
    let text = "[ports.\"eth0\"]\npfc.willing = false\npfc.wiling = true\n";
    assert_eq!(
        refuse(text),
        "/etc/lossless/losslessd.toml:3:5: ports.\"eth0\".pfc.wiling: unknown key; \
         expected one of: enable, willing, advertise, priorities, num_tcs, mbc"
    );
    assert_eq!(
        refuse("[ports.eth0]\nmtu = 9000\n"),
        "/etc/lossless/losslessd.toml:2:1: ports.\"eth0\".mtu: unknown key; expected one of: \
         admin_status, apply, nic_drift, nic_hold_ms, port_description, system_name, \
         system_description, \
         system_capabilities, management_address, chassis_id, port_id, max_neighbors, \
         max_neighbor_hold, timers, dcbx, pg, pfc, app, ets, headroom, pfc_watchdog, roce"
    );
}

#[test]
fn roce_section_keys_are_checked_one_by_one() {
    let cases = [
        (
            "tos = 256",
            "3:7: ports.\"eth0\".roce.tos: 256 is out of range 0..=255 (a ToS byte: DSCP << 2 | ECN)",
        ),
        (
            "roce_mode = \"v3\"",
            "3:13: ports.\"eth0\".roce.roce_mode: unknown RoCE mode \"v3\"; expected \"v1\" or \"v2\"",
        ),
        (
            "ecn_rp = [3, 8]",
            "3:10: ports.\"eth0\".roce.ecn_rp: priority 8 is out of range 0..=7",
        ),
        (
            "cnp_dscp = 64",
            "3:12: ports.\"eth0\".roce.cnp_dscp: 64 is out of range 0..=63 (a DSCP)",
        ),
        (
            "global_pause = \"off\"",
            "3:16: ports.\"eth0\".roce.global_pause: expected a boolean",
        ),
        (
            "tc = 1",
            "3:1: ports.\"eth0\".roce.tc: unknown key; expected one of: tos, roce_mode, \
             traffic_class, ecn_rp, ecn_np, cnp_dscp, cnp_priority, global_pause, fw_lldp_agent",
        ),
    ];
    for (line, want) in cases {
        let text = format!("[ports.\"eth0\"]\n[ports.\"eth0\".roce]\n{line}\n");
        assert_eq!(
            refuse(&text),
            format!("/etc/lossless/losslessd.toml:{want}"),
            "{text}"
        );
    }
    let cfg = DaemonConfig::parse(
        "[ports.\"eth0\".roce]\ntos = 106\necn_np = []\nfw_lldp_agent = false\n",
        Path::new("/etc/lossless/losslessd.toml"),
    )
    .expect("a valid roce section");
    let r = cfg.port("eth0").roce;
    assert_eq!(r.tos, Some(106));
    assert_eq!(r.ecn_np, Some(PriorityMap::NONE));
    assert_eq!(r.fw_lldp_agent, Some(false));
    assert_eq!(r.roce_mode, None);
}

#[test]
fn unknown_top_level_and_daemon_keys() {
    assert_eq!(
        refuse("[defaults]\n[port.eth0]\n"),
        "/etc/lossless/losslessd.toml:2:2: port: unknown key; expected one of: daemon, defaults, ports, relay"
    );
    assert_eq!(
        refuse("[daemon]\nsocket_mode = 432\n"),
        "/etc/lossless/losslessd.toml:2:1: daemon.socket_mode: unknown key; expected one of: \
         socket, socket_group, state_dir, metrics, metrics_web_config, log, packet_rcvbuf_bytes, \
         control_max_connections, control_request_timeout_ms, metrics_max_connections, \
         rx_budget_per_s, rx_budget_burst"
    );
    assert_eq!(
        refuse("[defaults.timers]\nmsg_tx_intervall = 10\n"),
        "/etc/lossless/losslessd.toml:2:1: defaults.timers.msg_tx_intervall: unknown key; \
         expected one of: msg_tx_interval, msg_tx_hold, msg_fast_tx, tx_fast_init, \
         tx_credit_max, reinit_delay"
    );
}

#[test]
fn wrong_type() {
    assert_eq!(
        refuse("[defaults]\npfc.willing = \"no\"\n"),
        "/etc/lossless/losslessd.toml:2:15: defaults.pfc.willing: expected a boolean, found a string"
    );
    assert_eq!(
        refuse("[defaults]\nmax_neighbors = 4.0\n"),
        "/etc/lossless/losslessd.toml:2:17: defaults.max_neighbors: expected an integer, found a float"
    );
    assert_eq!(
        refuse("[defaults]\npfc = 3\n"),
        "/etc/lossless/losslessd.toml:2:7: defaults.pfc: expected a table, found an integer"
    );
    assert_eq!(
        refuse("[ports.\"eth0\".system_name]\nx = 1\n"),
        "/etc/lossless/losslessd.toml:1:15: ports.\"eth0\".system_name: expected a string, true (the host's value) or false (not sent), found a table"
    );
    assert_eq!(
        refuse("ports = [1]\n"),
        "/etc/lossless/losslessd.toml:1:9: ports: expected a table, found an array"
    );
}

#[test]
fn percentages_must_sum_to_100() {
    let text = "\
[daemon]
log = \"info\"

[defaults]
system_name = \"leaf1\"

[ports.\"eth0\"]
pfc.priorities = [3]


# the bandwidth split
[ports.\"eth0\".pg]
percent = [40, 50, 0, 0, 0, 0, 0, 0]
";
    assert_eq!(
        refuse(text),
        "/etc/lossless/losslessd.toml:13:11: ports.\"eth0\".pg.percent: percentages sum to 90, must be 100"
    );
    // One element over 100 is pointed at.
    assert_eq!(
        refuse("[defaults]\npg.percent = [0, 0, 101, 0, 0, 0, 0, 0]\n"),
        "/etc/lossless/losslessd.toml:2:21: defaults.pg.percent[2]: a percentage cannot exceed 100 (found 101)"
    );
    assert_eq!(
        refuse("[defaults]\npg.percent = [100, 0]\n"),
        "/etc/lossless/losslessd.toml:2:14: defaults.pg.percent: expected 8 values \
         (one percentage per priority group 0..7), found 2"
    );
}

#[test]
fn priority_out_of_range() {
    assert_eq!(
        refuse("[ports.\"swp1\"]\npfc.priorities = [3, 9]\n"),
        "/etc/lossless/losslessd.toml:2:22: ports.\"swp1\".pfc.priorities[1]: priority 9 is out of range 0..=7"
    );
    assert_eq!(
        refuse("[defaults]\npfc.priorities = [3, 3]\n"),
        "/etc/lossless/losslessd.toml:2:22: defaults.pfc.priorities[1]: priority 3 is listed twice"
    );
    assert_eq!(
        refuse("[defaults.app]\nentries = [{ selector = \"port\", protocol = 4791, priorities = [-1] }]\n"),
        "/etc/lossless/losslessd.toml:2:64: defaults.app.entries[0].priorities[0]: priority -1 is out of range 0..=7"
    );
}

#[test]
fn bad_enumerations() {
    assert_eq!(
        refuse("[defaults]\nadmin_status = \"rx\"\n"),
        "/etc/lossless/losslessd.toml:2:16: defaults.admin_status: unknown variant `rx`, \
         expected one of `rxtx`, `txonly`, `rxonly`, `disabled`"
    );
    assert_eq!(
        refuse("[ports.\"eth0\"]\napply = \"yes\"\n"),
        "/etc/lossless/losslessd.toml:2:9: ports.\"eth0\".apply: unknown variant `yes`, \
         expected `none` or `dcbnl`"
    );
    assert_eq!(
        refuse("[[defaults.app.entries]]\nselector = \"sctp\"\nprotocol = 4791\npriorities = [3]\n"),
        "/etc/lossless/losslessd.toml:2:12: defaults.app.entries[0].selector: unknown APP selector \
         \"sctp\"; expected \"ethertype\", \"tcp\", \"udp\", \"port\" or \"dscp\""
    );
    assert_eq!(
        refuse("[defaults.dcbx]\nmode = \"ieee8021qaz\"\n"),
        "/etc/lossless/losslessd.toml:2:8: defaults.dcbx.mode: unknown DCBX mode \"ieee8021qaz\"; \
         expected \"auto\", \"ieee\", \"cee\" or \"static\""
    );
}

#[test]
fn metrics_must_be_loopback_unless_a_web_configuration_protects_it() {
    // With a web configuration (the daemon checks that it sets TLS or users), any
    // address; without one the key refused is `metrics`, wherever the other is.
    for text in [
        "[daemon]\nmetrics = \"0.0.0.0:9717\"\nmetrics_web_config = \"/etc/lossless/web.yml\"\n",
        "[daemon]\nmetrics_web_config = \"/etc/lossless/web.yml\"\nmetrics = \"[2001:db8::1]:9717\"\n",
    ] {
        let c = DaemonConfig::parse(text, Path::new("/etc/lossless/losslessd.toml"))
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            c.daemon.metrics_web_config.as_deref(),
            Some(Path::new("/etc/lossless/web.yml"))
        );
    }
    assert_eq!(
        refuse("[daemon]\nmetrics_web_config = \"web.yml\"\n"),
        "/etc/lossless/losslessd.toml:2:22: daemon.metrics_web_config: \"web.yml\" is not an absolute path"
    );
    assert_eq!(
        refuse("[daemon]\nmetrics = \"0.0.0.0:9717\"\n"),
        "/etc/lossless/losslessd.toml:2:11: daemon.metrics: 0.0.0.0 is not a loopback address: \
         the metrics endpoint has no authentication, bind it to 127.0.0.1 or ::1, or protect it \
         with TLS or basic authentication in a web configuration file (metrics_web_config; \
         docs/operations.md, \"Fleet\")"
    );
    assert_eq!(
        refuse("[daemon]\nmetrics = \"[2001:db8::1]:9717\"\n"),
        "/etc/lossless/losslessd.toml:2:11: daemon.metrics: 2001:db8::1 is not a loopback address: \
         the metrics endpoint has no authentication, bind it to 127.0.0.1 or ::1, or protect it \
         with TLS or basic authentication in a web configuration file (metrics_web_config; \
         docs/operations.md, \"Fleet\")"
    );
    assert_eq!(
        refuse("[daemon]\nmetrics = \"localhost\"\n"),
        "/etc/lossless/losslessd.toml:2:11: daemon.metrics: \"localhost\" is not ADDRESS:PORT \
         (such as \"127.0.0.1:9717\" or \"[::1]:9717\")"
    );
    assert_eq!(
        refuse("[daemon]\nmetrics = \"127.0.0.1:0\"\n"),
        "/etc/lossless/losslessd.toml:2:11: daemon.metrics: port 0 is not allowed: give the port to scrape"
    );
    for ok in ["127.0.0.1:9717", "127.1.2.3:80", "[::1]:9717"] {
        let c = parse(&format!("[daemon]\nmetrics = \"{ok}\"\n"));
        assert_eq!(c.daemon.metrics, Some(ok.parse().expect("address")));
    }
}

#[test]
fn bad_globs_and_names() {
    assert_eq!(
        refuse("[ports.\"swp[1-4]\"]\npfc.willing = false\n"),
        "/etc/lossless/losslessd.toml:1:8: ports.\"swp[1-4]\": '[' is not supported in an \
         interface pattern: only * and ? are wildcards"
    );
    assert_eq!(
        refuse("[ports.\"eth 0\"]\n"),
        "/etc/lossless/losslessd.toml:1:8: ports.\"eth 0\": ' ' cannot appear in an interface \
         name (no '/', ':', NUL or white space)"
    );
    assert_eq!(
        refuse("[ports]\n\"enp65s0f0np0v123\" = {}\n"),
        "/etc/lossless/losslessd.toml:2:1: ports.\"enp65s0f0np0v123\": an interface name has at \
         most 15 bytes, this one has 16"
    );
    assert_eq!(
        refuse("[ports.\"\"]\n"),
        "/etc/lossless/losslessd.toml:1:8: ports.\"\": an interface name cannot be empty"
    );
}

#[test]
fn duplicated_key_is_a_syntax_error() {
    assert_eq!(
        refuse("[ports.\"eth0\"]\npfc.willing = false\npfc.willing = true\n"),
        "/etc/lossless/losslessd.toml:3:1: duplicate key `willing` in table `ports.eth0`"
    );
    assert_eq!(
        refuse("[defaults]\n[daemon]\n[defaults]\n"),
        "/etc/lossless/losslessd.toml:3:1: invalid table header: duplicate key `defaults` in document root"
    );
    assert_eq!(
        refuse("[daemon\nsocket = \"/x\"\n"),
        "/etc/lossless/losslessd.toml:1:8: invalid table header: expected `.`, `]`"
    );
}

#[test]
fn range_checks_come_from_port_config_validate() {
    assert_eq!(
        refuse("[ports.\"eth0\".timers]\nmsg_tx_interval = 5000\n"),
        "/etc/lossless/losslessd.toml:2:19: ports.\"eth0\".timers.msg_tx_interval: 5000 is outside 1..=3600"
    );
    assert_eq!(
        refuse("[defaults]\ntimers.tx_fast_init = 300\n"),
        "/etc/lossless/losslessd.toml:2:23: defaults.timers.tx_fast_init: 300 is out of range 0..=255"
    );
    assert_eq!(
        refuse("[defaults]\nmax_neighbors = 0\n"),
        "/etc/lossless/losslessd.toml:2:17: defaults.max_neighbors: 0 is outside 1..=1024"
    );
    assert_eq!(
        refuse("[defaults]\nmax_neighbor_hold = 0\n"),
        "/etc/lossless/losslessd.toml:2:21: defaults.max_neighbor_hold: 0 is outside 1..=65535"
    );
    assert_eq!(
        refuse("[ports.\"eth0\"]\nmax_neighbor_hold = 65536\n"),
        "/etc/lossless/losslessd.toml:2:21: ports.\"eth0\".max_neighbor_hold: 65536 is outside 1..=65535"
    );
    assert_eq!(
        refuse("[defaults]\nmax_neighbor_hold = \"30s\"\n"),
        "/etc/lossless/losslessd.toml:2:21: defaults.max_neighbor_hold: expected an integer, found a string"
    );
    assert_eq!(
        refuse("[defaults]\nchassis_id = \"\"\n"),
        "/etc/lossless/losslessd.toml:2:14: defaults.chassis_id: must be 1..=255 bytes, is 0"
    );
    assert_eq!(
        refuse("[ports.\"eth0\"]\npg.pgid = [0, 1, 2, 3, 4, 5, 9, 7]\n"),
        "/etc/lossless/losslessd.toml:2:30: ports.\"eth0\".pg.pgid[6]: PGID must be 0..7 or 15 (found 9)"
    );
    assert_eq!(
        refuse("[ports.\"eth0\"]\npfc.num_tcs = 0\n"),
        "/etc/lossless/losslessd.toml:2:15: ports.\"eth0\".pfc.num_tcs: number of traffic classes \
         must be 1..8 (found 0)"
    );
    assert_eq!(
        refuse(
            "[ports.\"eth0\".app]\nentries = [\n  { selector = 1, protocol = 4791, priorities = [3] },\n  \
             { selector = 0, protocol = 0x8906, oui = \"01-1b-21\", priorities = [4] },\n]\n"
        ),
        "/etc/lossless/losslessd.toml:4:44: ports.\"eth0\".app.entries[1].oui: the low 2 bits of \
         OUI[0] carry the selector and must be zero (found 1)"
    );
}

#[test]
fn a_bad_value_in_a_glob_section_is_blamed_on_the_glob() {
    // The exact section is checked over the glob it matches; the value came
    // from the glob, so the glob's line is reported.
    let text = "[ports.\"eth0\"]\npfc.willing = false\n[ports.\"eth*\"]\npg.num_tcs = 9\n";
    assert_eq!(
        refuse(text),
        "/etc/lossless/losslessd.toml:4:14: ports.\"eth*\".pg.num_tcs: number of traffic classes \
         must be 1..8 (found 9)"
    );
}

#[test]
fn daemon_section_values() {
    assert_eq!(
        refuse("[daemon]\nsocket = \"run/x.sock\"\n"),
        "/etc/lossless/losslessd.toml:2:10: daemon.socket: \"run/x.sock\" is not an absolute path"
    );
    assert_eq!(
        refuse("[daemon]\nsocket_group = \"\"\n"),
        "/etc/lossless/losslessd.toml:2:16: daemon.socket_group: a group name cannot be empty"
    );
    assert_eq!(
        refuse("[daemon]\nlog = \"\"\n"),
        "/etc/lossless/losslessd.toml:2:7: daemon.log: the log filter cannot be empty (try \"info\")"
    );
}

#[test]
fn error_fields_are_structured() {
    match DaemonConfig::parse(
        "[defaults]\npg.percent = [1,2,3,4,5,6,7,8]\n",
        Path::new("x.toml"),
    ) {
        Err(ConfigFileError::Invalid {
            path,
            line,
            column,
            key,
            reason,
        }) => {
            assert_eq!(path, PathBuf::from("x.toml"));
            assert_eq!((line, column), (2, 14));
            assert_eq!(key, "defaults.pg.percent");
            assert_eq!(reason, "percentages sum to 36, must be 100");
        }
        other => panic!("{other:?}"),
    }
    match DaemonConfig::parse("a = ", Path::new("x.toml")) {
        Err(ConfigFileError::Syntax { line: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------- meaning

#[test]
fn no_file_and_an_empty_file_mean_all_defaults() {
    for c in [DaemonConfig::default(), parse(""), parse("# nothing\n\n")] {
        assert_eq!(c.daemon, DaemonSettings::default());
        assert_eq!(
            c.daemon.socket,
            PathBuf::from("/run/lossless/losslessd.sock")
        );
        assert_eq!(c.daemon.state_dir, PathBuf::from("/var/lib/lossless"));
        assert_eq!(c.daemon.socket_group, None);
        assert_eq!(c.daemon.metrics, None);
        assert_eq!(c.daemon.log, "info");
        assert!(!c.selects("eth0"));
        let p = c.port("eth0");
        assert_eq!(p, PortSettings::default());
        assert_eq!(p.apply, Apply::None);
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        assert_eq!(
            p.port_config(mac, &LocalInfo::default()),
            PortConfig::new(mac)
        );
    }
}

#[test]
fn layering_is_key_by_key() {
    let c = parse(
        "\
[defaults]
system_name = \"leaf1\"
pfc.priorities = [3]
pfc.willing = false
pg.percent = [50, 50, 0, 0, 0, 0, 0, 0]

[ports.\"eth0\"]            # exact: wins over both globs
pfc.willing = true
port_description = \"uplink\"

[ports.\"eth*\"]
pfc.priorities = [3, 4]
apply = \"dcbnl\"
admin_status = \"txonly\"

[ports.\"*0\"]              # later glob: wins over the earlier one
admin_status = \"rxonly\"
timers.msg_tx_interval = 10
",
    );
    let eth0 = c.port("eth0");
    let value = |v: &str| Advertise::Value(v.to_string());
    assert_eq!(eth0.identity.system_name, value("leaf1"));
    assert_eq!(eth0.identity.port_description, value("uplink"));
    assert_eq!(eth0.apply, Apply::Dcbnl);
    assert_eq!(eth0.admin_status, AdminStatus::RxOnly);
    assert_eq!(eth0.timers.msg_tx_interval, 10);
    assert_eq!(eth0.timers.msg_tx_hold, LldpTimers::default().msg_tx_hold);
    // pfc.willing from the exact section, pfc.priorities from the glob,
    // pfc.enable and num_tcs from the built-in defaults.
    assert!(eth0.dcbx().pfc.willing);
    assert_eq!(eth0.dcbx().pfc.cfg.priorities, PriorityMap(0b0001_1000));
    assert!(eth0.dcbx().pfc.enable);
    assert_eq!(eth0.dcbx().pfc.cfg.num_tcs, 8);
    // pg.percent from [defaults], pg.pgid built in.
    assert_eq!(eth0.dcbx().pg.cfg.percent, [50, 50, 0, 0, 0, 0, 0, 0]);
    assert_eq!(eth0.dcbx().pg.cfg.pgid, [0, 1, 2, 3, 4, 5, 6, 7]);

    let eth1 = c.port("eth1");
    assert!(!eth1.dcbx().pfc.willing);
    assert_eq!(eth1.admin_status, AdminStatus::TxOnly);
    assert_eq!(eth1.identity.port_description, Advertise::Host);
    assert_eq!(eth1.timers.msg_tx_interval, 30);

    let swp0 = c.port("swp0");
    assert_eq!(swp0.admin_status, AdminStatus::RxOnly);
    assert_eq!(swp0.apply, Apply::None);
    assert_eq!(swp0.dcbx().pfc.cfg.priorities, PriorityMap(0b0000_1000));

    // Nothing matches: [defaults] over the built-in defaults.
    let lo = c.port("lo");
    let mut expected = PortSettings::default();
    expected.identity.system_name = value("leaf1");
    expected.dcbx_mut().pfc.cfg.priorities = PriorityMap(0b1000);
    expected.dcbx_mut().pfc.willing = false;
    expected.dcbx_mut().pg.cfg.percent = [50, 50, 0, 0, 0, 0, 0, 0];
    assert_eq!(lo, expected);
}

#[test]
fn selects_exact_names_and_globs() {
    let c = parse(
        "[defaults]\napply = \"dcbnl\"\n[ports.\"eth0\"]\n[ports.\"swp?\"]\n[ports.\"en*f1\"]\n",
    );
    for yes in ["eth0", "swp1", "swp9", "enp65s0f1", "enf1"] {
        assert!(c.selects(yes), "{yes}");
    }
    for no in ["eth1", "eth00", "swp10", "swp", "enp65s0f0", "lo", ""] {
        assert!(!c.selects(no), "{no}");
    }
    assert_eq!(c.named_ports().collect::<Vec<_>>(), ["eth0"]);
    // [defaults] alone selects nothing.
    assert!(!parse("[defaults]\napply = \"dcbnl\"\n").selects("eth0"));
}

#[test]
fn app_entries_in_both_forms() {
    let inline = parse(
        "[defaults.app]\nentries = [\n  { selector = \"ethertype\", protocol = 0x8906, priorities = [3] },\n  \
         { selector = \"tcp-udp\", protocol = 3260, oui = \"00:1b:21\", priorities = [4, 5] },\n  \
         { selector = 2, protocol = 1, oui = [0, 0x1b, 0x21], priorities = [] },\n]\n",
    );
    let tables = parse(
        "[[defaults.app.entries]]\nselector = \"ethertype\"\nprotocol = 0x8906\npriorities = [3]\n\
         [[defaults.app.entries]]\nselector = \"port\"\nprotocol = 3260\noui = \"00-1B-21\"\npriorities = [5, 4]\n\
         [[defaults.app.entries]]\nselector = 2\nprotocol = 1\npriorities = []\n",
    );
    let mut expected = AppTable::new();
    expected.push(app(AppSelector::ETHERTYPE, 0x8906, &[3]));
    expected.push(app(AppSelector::PORT, 3260, &[4, 5]));
    expected.push(app(AppSelector(2), 1, &[]));
    assert_eq!(inline.port("x").dcbx().app.cfg.entries, expected);
    assert_eq!(tables.port("x").dcbx().app.cfg.entries, expected);
    assert_eq!(
        refuse("[[defaults.app.entries]]\nselector = \"port\"\npriorities = [3]\n"),
        "/etc/lossless/losslessd.toml:1:1: defaults.app.entries[0]: missing key `protocol`"
    );
}

#[test]
fn the_example_file_parses_to_its_documented_values() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/losslessd.toml");
    let text = std::fs::read_to_string(&path).expect("examples/losslessd.toml");
    let c = DaemonConfig::parse(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        c.daemon,
        DaemonSettings {
            socket: "/run/lossless/losslessd.sock".into(),
            socket_group: None, // commented out: the group must exist
            state_dir: "/var/lib/lossless".into(),
            metrics: Some("127.0.0.1:9717".parse().expect("address")),
            metrics_web_config: None, // commented out: for a fleet's central Prometheus
            log: "info".into(),
            limits: DaemonLimits {
                packet_rcvbuf_bytes: 4 << 20,
                control_max_connections: 256,
                metrics_max_connections: 16,
                control_request_timeout_ms: 5000,
                rx_budget: RxBudgetLimits {
                    per_s: 100,
                    burst: 200
                },
            },
        }
    );
    for name in ["enp65s0f0np0", "enp65s0f1np1", "eno1"] {
        assert!(c.selects(name), "{name}");
    }
    // Not a ConnectX port's name: no physical port name after the function.
    assert!(!c.selects("enp65s0f0"));
    assert!(!c.selects("enp3s0"));
    assert!(!c.selects("lo"));

    let f0 = c.port("enp65s0f0np0");
    assert_eq!(f0.apply, Apply::Dcbnl);
    // Who the host is stays the host's: the file is installed on every host.
    assert_eq!(f0.identity.system_name, Advertise::Host);
    assert_eq!(f0.admin_status, AdminStatus::RxTx);
    assert_eq!(f0.timers, LldpTimers::default());
    assert_eq!(f0.max_neighbors, 4);
    let d: &DcbxConfig = f0.dcbx();
    assert!(d.enabled);
    assert_eq!(d.mode, lossless_dcbx::DcbxMode::Auto);
    assert!(d.pfc.enable && d.pfc.willing && d.pfc.advertise);
    assert_eq!(d.pfc.cfg.priorities, PriorityMap(1 << 3));
    assert!(!d.ieee.pfc_mbc);
    // RoCEv2: data (3) alone in PG 1 / TC 1, CNP (6) strict, the rest in PG 0 / TC 0.
    assert_eq!(d.pg.cfg.pgid, [0, 0, 0, 1, 0, 0, 15, 0]);
    assert_eq!(d.pg.cfg.percent, [50, 50, 0, 0, 0, 0, 0, 0]);
    let ets = &d.ieee.ets;
    assert!(ets.enable && ets.willing && ets.advertise);
    assert_eq!(ets.cfg.table.prio_tc, [0, 0, 0, 1, 0, 0, 2, 0]);
    assert_eq!(ets.cfg.table.tc_bw, [50, 50, 0, 0, 0, 0, 0, 0]);
    let tsa: Vec<&str> = ets.cfg.table.tsa.iter().filter_map(|t| t.name()).collect();
    assert_eq!(
        tsa,
        ["ets", "ets", "strict", "strict", "strict", "strict", "strict", "strict"]
    );
    assert_eq!((ets.cfg.max_tcs, ets.cfg.recommend), (8, None));
    // One APP list: IEEE gets every rule (DSCP 26 -> 3, DSCP 48 -> 6, UDP 4791 -> 3),
    // CEE the UDP port as its TCP/UDP port entry only.
    let ieee = |s: &PortSettings| -> Vec<(u8, u16, u8)> {
        s.dcbx()
            .ieee
            .app
            .iter()
            .map(|e| (e.selector.0, e.protocol, e.priority))
            .collect()
    };
    assert_eq!(ieee(&f0), [(5, 26, 3), (5, 48, 6), (3, 4791, 3)]);
    let roce = app(AppSelector::PORT, 4791, &[3]);
    assert_eq!(d.app.cfg.entries.as_slice(), [roce]);

    let f1 = c.port("enp65s0f1np1");
    assert_eq!(f1.apply, Apply::Dcbnl);
    assert_eq!(f1.identity, f0.identity);
    assert_eq!(f1.identity.port_description, Advertise::Host);
    // The second port faces a switch without DCBX: static mode, the same classes.
    assert_eq!(f1.dcbx().mode, lossless_dcbx::DcbxMode::Static);
    assert_eq!(f1.dcbx().pfc.cfg.priorities, PriorityMap(0b0000_1000));
    assert_eq!(ieee(&f1), ieee(&f0));
    assert_eq!(f1.dcbx().app.cfg.entries.as_slice(), [roce]);
    assert_eq!(f1.nic_drift, lossless_node::nic::DriftPolicy::Repair);
    assert_eq!(f1.dcbx().pg, d.pg);
    assert_eq!(f1.dcbx().ieee.ets, d.ieee.ets);

    let mgmt = c.port("eno1");
    assert!(!mgmt.dcbx().enabled);
    assert_eq!(mgmt.apply, Apply::None);
    assert_eq!(mgmt.admin_status, AdminStatus::RxTx);

    // Every section's settings are valid agent configurations.
    for name in ["enp65s0f0np0", "enp65s0f1np1", "eno1", "lo"] {
        c.port(name)
            .port_config(MacAddr([2, 0, 0, 0, 0, 1]), &LocalInfo::longest())
            .validate()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// Fails on the old example, whose `enp65s0f?` and `enp65s0f1` match no ConnectX port:
/// under systemd's predictable naming mlx5 ports end in `np<N>`, the physical port name
/// the driver reports (`enp65s0f0np0`, `enp65s0f1np1`). Matched by the daemon's own rule
/// (`DaemonConfig::selects`, `DaemonConfig::port`), the example's sections select both
/// ports of the NIC, and the second one's section is the second port's.
#[test]
fn the_example_selects_connectx_port_names() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/losslessd.toml");
    let text = std::fs::read_to_string(&path).expect("examples/losslessd.toml");
    let c = DaemonConfig::parse(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    for name in ["enp65s0f0np0", "enp65s0f1np1"] {
        assert!(c.selects(name), "{name} is not selected");
        assert_eq!(c.port(name).apply, Apply::Dcbnl, "{name}");
    }
    assert!(
        c.named_ports().any(|n| n == "enp65s0f1np1"),
        "no [ports.\"enp65s0f1np1\"] section: {:?}",
        c.named_ports().collect::<Vec<_>>()
    );
    let (f0, f1) = (c.port("enp65s0f0np0"), c.port("enp65s0f1np1"));
    assert_eq!(f0.dcbx().mode, lossless_dcbx::DcbxMode::Auto);
    assert_eq!(f1.dcbx().mode, lossless_dcbx::DcbxMode::Static);
    assert_eq!(f1.dcbx().pfc.cfg.priorities, PriorityMap(0b0000_1000));
}

#[test]
fn headroom_section_reads_every_key_and_round_trips() {
    let c = parse(
        "[ports.\"eth0\".headroom]\nmeasure = true\nalpha = \"1.25\"\ncell = 256\n\
         speed = \"400G\"\nmax_frame = 9216\ntimestamps = \"software\"\nsamples = 16\nperiod = 30\n\
         buffer = false\n",
    );
    let s = c.port("eth0");
    assert!(s.dcbx().headroom_measurement);
    let h = s.headroom;
    assert_eq!(h.alpha.0, 1_250_000);
    assert_eq!(
        (h.cell, h.speed, h.max_frame),
        (256, Some(400_000_000_000), 9216)
    );
    assert_eq!(
        h.timestamps,
        lossless_node::timestamps::TimestampMode::Software
    );
    assert_eq!((h.samples, h.period, h.buffer), (16, 30, false));
    // The buffer follows apply unless turned off.
    assert!(parse("[ports.\"eth1\"]\n").port("eth1").headroom.buffer);
    // Off unless asked for.
    assert!(
        !parse("[ports.\"eth1\"]\n")
            .port("eth1")
            .dcbx()
            .headroom_measurement
    );
    // Rendered back, the same settings.
    let text = format!("[ports.\"eth0\"]\n{}", s.to_toml());
    assert_eq!(parse(&text).port("eth0"), s);
}

#[test]
fn headroom_values_are_refused_with_their_key() {
    for (body, key, why) in [
        ("alpha = \"0.9\"", "alpha", "below 1"),
        ("alpha = true", "alpha", "expected a factor"),
        ("cell = 0", "cell", "below the minimum 1"),
        ("speed = \"100GB/s\"", "speed", "bytes per second"),
        ("speed = \"100\"", "speed", "no unit"),
        ("timestamps = \"ptp\"", "timestamps", "not \"auto\""),
        ("samples = 34", "samples", "34"),
        ("period = 0", "period", "below the minimum 1"),
        ("buffer = \"yes\"", "buffer", "boolean"),
        ("colour = 1", "colour", "measure"),
    ] {
        let text = format!("[ports.\"eth0\".headroom]\n{body}\n");
        let e = DaemonConfig::parse(&text, Path::new("t.toml"))
            .expect_err(body)
            .to_string();
        assert!(
            e.contains(&format!("ports.\"eth0\".headroom.{key}")) && e.contains(why),
            "{body}: {e}"
        );
        assert!(e.starts_with("t.toml:2:"), "{e}");
    }
}

#[test]
fn daemon_limits_are_read_and_bounded() {
    let c = DaemonConfig::parse(
        "[daemon]\npacket_rcvbuf_bytes = 65536\ncontrol_max_connections = 1\n\
         control_request_timeout_ms = 250\nrx_budget_per_s = 5\nrx_budget_burst = 7\n\
         metrics_max_connections = 2\n",
        Path::new("/etc/lossless/losslessd.toml"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        c.daemon.limits,
        DaemonLimits {
            packet_rcvbuf_bytes: 65536,
            control_max_connections: 1,
            metrics_max_connections: 2,
            control_request_timeout_ms: 250,
            rx_budget: RxBudgetLimits { per_s: 5, burst: 7 },
        }
    );
    assert_eq!(
        DaemonConfig::default().daemon.limits,
        DaemonLimits {
            packet_rcvbuf_bytes: 4 << 20,
            control_max_connections: 256,
            metrics_max_connections: 16,
            control_request_timeout_ms: 5000,
            rx_budget: RxBudgetLimits {
                per_s: 100,
                burst: 200
            },
        }
    );
    assert_eq!(
        refuse("[daemon]\nrx_budget_per_s = 0\n"),
        "/etc/lossless/losslessd.toml:2:19: daemon.rx_budget_per_s: 0 is out of range \
         1..=10000000 (frames per second)"
    );
    assert_eq!(
        refuse("[daemon]\npacket_rcvbuf_bytes = 1024\n"),
        "/etc/lossless/losslessd.toml:2:23: daemon.packet_rcvbuf_bytes: 1024 is out of range \
         65536..=1073741824 (bytes)"
    );
    assert_eq!(
        refuse("[daemon]\ncontrol_max_connections = 0\n"),
        "/etc/lossless/losslessd.toml:2:27: daemon.control_max_connections: 0 is out of range \
         1..=1048576 (connections)"
    );
    assert_eq!(
        refuse("[daemon]\nmetrics_max_connections = 0\n"),
        "/etc/lossless/losslessd.toml:2:27: daemon.metrics_max_connections: 0 is out of range \
         1..=65536 (connections)"
    );
    assert_eq!(
        refuse("[daemon]\ncontrol_request_timeout_ms = \"5s\"\n"),
        "/etc/lossless/losslessd.toml:2:30: daemon.control_request_timeout_ms: expected an \
         integer, found a string"
    );
}
