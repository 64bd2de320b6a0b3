//! The configuration file rendered back (`PortSettings::to_toml`): any settings
//! survive the round trip through a rendered section.

use std::path::Path;

use lossless_dcbx::{AdminStatus, DcbxConfig, LldpTimers};
use lossless_node::config::{Apply, DaemonConfig, PortSettings};
use lossless_node::identity::Advertise;
use lossless_wire::cee::PriorityMap;

fn parse(text: &str) -> DaemonConfig {
    match DaemonConfig::parse(text, Path::new("/etc/lossless/losslessd.toml")) {
        Ok(c) => c,
        Err(e) => panic!("refused: {e}"),
    }
}

use lossless_dcbx::ieee::{EtsAdmin, IeeeConfig};
use lossless_dcbx::{DcbxMode, FeatureAdmin};
use lossless_node::config::{AppRule, AppRules, RuleSelector};
use lossless_node::identity::IdentitySettings;
use lossless_wire::ieee::{EtsTable, Tsa};
use lossless_wire::lldp::SystemCapabilities;
use proptest::prelude::*;
use std::net::IpAddr;

fn text() -> impl Strategy<Value = String> {
    // Quotes, backslashes, control characters, non-ASCII: all must survive.
    proptest::string::string_regex("(?s).{1,40}").expect("regex")
}

fn short_text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("(?s).{1,20}").expect("regex")
}

fn advertise<T: std::fmt::Debug + Clone>(
    value: impl Strategy<Value = T>,
) -> impl Strategy<Value = Advertise<T>> {
    prop_oneof![
        Just(Advertise::Host),
        Just(Advertise::Off),
        value.prop_map(Advertise::Value)
    ]
}

fn identity() -> impl Strategy<Value = IdentitySettings> {
    let caps = (0u16..0x800, 0u16..0x800).prop_map(|(c, e)| SystemCapabilities {
        capabilities: c,
        enabled: e & c,
    });
    let address = prop_oneof![
        any::<[u8; 4]>().prop_map(|o| IpAddr::from([1 + o[0] % 100, o[1], o[2], o[3]])),
        any::<[u16; 7]>()
            .prop_map(|s| IpAddr::from([0x2001, s[0], s[1], s[2], s[3], s[4], s[5], s[6]])),
    ];
    (
        advertise(text()),
        advertise(text()),
        advertise(text()),
        advertise(caps),
        advertise(address),
    )
        .prop_map(|(pd, sn, sd, sc, ma)| IdentitySettings {
            port_description: pd,
            system_name: sn,
            system_description: sd,
            system_capabilities: sc,
            management_address: ma,
        })
}

fn feature<C: std::fmt::Debug + Clone>(
    cfg: impl Strategy<Value = C>,
) -> impl Strategy<Value = lossless_dcbx::FeatureAdmin<C>> {
    (any::<bool>(), any::<bool>(), any::<bool>(), cfg).prop_map(
        |(enable, willing, advertise, cfg)| lossless_dcbx::FeatureAdmin {
            enable,
            willing,
            advertise,
            cfg,
        },
    )
}

fn pg() -> impl Strategy<Value = lossless_wire::cee::PgConfig> {
    (
        proptest::array::uniform8(prop_oneof![0u8..=7, Just(15u8)]),
        proptest::array::uniform8(0u8..=100),
        1u8..=8,
    )
        .prop_map(|(pgid, mut percent, num_tcs)| {
            // Scale to a sum of exactly 100.
            let sum: u32 = percent.iter().map(|&p| u32::from(p)).sum();
            match 100u32.checked_div(sum) {
                None => percent = [100, 0, 0, 0, 0, 0, 0, 0],
                Some(_) => {
                    let mut left = 100u32;
                    for p in percent.iter_mut() {
                        let v = u32::from(*p) * 100 / sum;
                        *p = v as u8;
                        left -= v;
                    }
                    percent[0] += left as u8;
                }
            }
            lossless_wire::cee::PgConfig {
                pgid,
                percent,
                num_tcs,
            }
        })
}

fn app_rule() -> impl Strategy<Value = AppRule> {
    let selector = prop_oneof![
        Just(RuleSelector::Ethertype),
        Just(RuleSelector::Tcp),
        Just(RuleSelector::Udp),
        Just(RuleSelector::Port),
        Just(RuleSelector::Dscp),
        (0u8..=3).prop_map(RuleSelector::Cee),
    ];
    (selector, any::<u16>(), any::<[u8; 3]>(), any::<u8>()).prop_map(
        |(selector, protocol, mut oui, p)| {
            oui[0] &= 0xfc;
            let dscp = selector == RuleSelector::Dscp;
            AppRule {
                selector,
                protocol: if dscp { protocol % 64 } else { protocol },
                oui,
                // A DSCP has one priority.
                priorities: if dscp {
                    PriorityMap(1 << (p % 8))
                } else {
                    PriorityMap(p)
                },
            }
        },
    )
}

/// Rules with no selector and protocol twice.
fn app_rules() -> impl Strategy<Value = AppRules> {
    proptest::collection::vec(app_rule(), 0..6).prop_map(|v| {
        let mut rules = AppRules::default();
        for r in v {
            if !rules
                .entries
                .iter()
                .any(|o| o.selector == r.selector && o.protocol == r.protocol)
            {
                rules.entries.push(r);
            }
        }
        rules
    })
}

/// `[ports."X".roce]`: each key set or not.
fn roce() -> impl Strategy<Value = lossless_node::config::RoceSettings> {
    use lossless_node::config::RoceMode;
    (
        (
            proptest::option::of(any::<u8>()),
            proptest::option::of(prop_oneof![Just(RoceMode::V1), Just(RoceMode::V2)]),
            proptest::option::of(any::<u8>()),
            proptest::option::of(any::<u8>().prop_map(PriorityMap)),
            proptest::option::of(any::<u8>().prop_map(PriorityMap)),
        ),
        (
            proptest::option::of(0u8..=63),
            proptest::option::of(0u8..=7),
            proptest::option::of(any::<bool>()),
            proptest::option::of(any::<bool>()),
        ),
    )
        .prop_map(|(a, b)| lossless_node::config::RoceSettings {
            tos: a.0,
            roce_mode: a.1,
            traffic_class: a.2,
            ecn_rp: a.3,
            ecn_np: a.4,
            cnp_dscp: b.0,
            cnp_priority: b.1,
            global_pause: b.2,
            fw_lldp_agent: b.3,
        })
}

fn ets() -> impl Strategy<Value = FeatureAdmin<EtsAdmin>> {
    let tsa = prop_oneof![Just(Tsa::STRICT), Just(Tsa::CBS), Just(Tsa::VENDOR)];
    (
        1u8..=8,
        any::<[u8; 8]>(),
        proptest::array::uniform7(tsa),
        any::<(bool, bool, bool, bool)>(),
        proptest::option::of(any::<bool>()),
    )
        .prop_map(|(max_tcs, prio, tsa, flags, recommend)| {
            let mut table = EtsTable {
                prio_tc: prio.map(|p| p % max_tcs),
                tc_bw: [100, 0, 0, 0, 0, 0, 0, 0],
                tsa: [Tsa::ETS; 8],
            };
            table.tsa[1..].copy_from_slice(&tsa);
            FeatureAdmin {
                enable: flags.0,
                willing: flags.1,
                advertise: flags.2,
                cfg: EtsAdmin {
                    cbs: flags.3,
                    max_tcs,
                    table,
                    recommend,
                },
            }
        })
}

fn settings() -> impl Strategy<Value = PortSettings> {
    (
        (
            prop_oneof![Just(Apply::None), Just(Apply::Dcbnl)],
            prop_oneof![
                Just(AdminStatus::RxTx),
                Just(AdminStatus::TxOnly),
                Just(AdminStatus::RxOnly),
                Just(AdminStatus::Disabled)
            ],
            identity(),
            // Ids short enough that, with the host's values at their longest, the
            // LLDPDU fits a frame.
            proptest::option::of(short_text()),
            proptest::option::of(short_text()),
            1usize..=1024,
            1u32..=65535,
        ),
        (
            1u16..=3600,
            1u16..=100,
            1u16..=3600,
            1u8..=8,
            1u8..=10,
            1u16..=100,
        ),
        (any::<bool>(), any::<u8>()),
        feature(pg()),
        feature(
            (any::<u8>(), 1u8..=8).prop_map(|(p, num_tcs)| lossless_wire::cee::PfcConfig {
                priorities: PriorityMap(p),
                num_tcs,
            }),
        ),
        feature(Just(lossless_wire::cee::AppConfig::default())),
        (app_rules(), ets(), any::<bool>(), 0u8..3),
    )
        .prop_map(
            |(a, t, (enabled, max_version), pg, pfc, app, (rules, ets, mbc, mode))| PortSettings {
                apply: a.0,
                nic_drift: if mbc {
                    lossless_node::nic::DriftPolicy::Report
                } else {
                    lossless_node::nic::DriftPolicy::Repair
                },
                nic_hold_ms: if enabled {
                    1_000
                } else {
                    u32::from(max_version) * 235
                },
                admin_status: a.1,
                identity: a.2,
                chassis_id: a.3,
                port_id: a.4,
                max_neighbors: a.5,
                max_neighbor_hold: a.6,
                timers: LldpTimers {
                    msg_tx_interval: t.0,
                    msg_tx_hold: t.1,
                    msg_fast_tx: t.2,
                    tx_fast_init: t.3,
                    tx_credit_max: t.4,
                    reinit_delay: t.5,
                },
                dcbx: DcbxConfig {
                    enabled,
                    max_version,
                    pg,
                    pfc,
                    app,
                    mode: [DcbxMode::Auto, DcbxMode::Ieee, DcbxMode::Cee][usize::from(mode)],
                    ieee: IeeeConfig {
                        ets,
                        pfc_mbc: mbc,
                        app: Default::default(),
                    },
                    headroom_measurement: false,
                },
                app: rules,
                headroom: Default::default(),
                pfc_watchdog: Default::default(),
                roce: Default::default(),
            },
        )
        .prop_flat_map(|s| {
            pfc_watchdog().prop_map(move |w| PortSettings {
                pfc_watchdog: w,
                ..s.clone()
            })
        })
        .prop_flat_map(|s| {
            roce().prop_map(move |r| PortSettings {
                roce: r,
                ..s.clone()
            })
        })
        // The two APP tables are the rules in CEE and IEEE form.
        .prop_map(|mut s| {
            s.set_app(s.app.clone());
            s
        })
}

proptest! {
    #[test]
    fn any_settings_round_trip_through_a_rendered_section(s in settings()) {
        let body = s.to_toml();
        let port = format!("[ports.\"eth0\"]\n{body}");
        let c = DaemonConfig::parse(&port, Path::new("rendered.toml"))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{body}")))?;
        prop_assert_eq!(c.port("eth0"), s.clone());
        let defaults = format!("[defaults]\n{body}");
        let c = DaemonConfig::parse(&defaults, Path::new("rendered.toml"))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{body}")))?;
        prop_assert_eq!(c.port("anything"), s);
    }
}

#[test]
fn defaults_render_as_documented() {
    let body = PortSettings::default().to_toml();
    assert!(body.contains("apply = \"none\"\n"), "{body}");
    assert!(body.contains("pfc.priorities = []\n"), "{body}");
    assert!(
        body.contains("pg.percent = [13, 13, 13, 13, 12, 12, 12, 12]\n"),
        "{body}"
    );
    // The identity TLVs are the host's: `true`.
    for key in [
        "port_description",
        "system_name",
        "system_description",
        "system_capabilities",
        "management_address",
    ] {
        assert!(body.contains(&format!("\n{key} = true\n")), "{body}");
    }
    assert_eq!(
        parse(&format!("[defaults]\n{body}")).port("x"),
        PortSettings::default()
    );
}

/// Any valid `[pfc_watchdog]` section.
fn pfc_watchdog() -> impl Strategy<Value = lossless_node::config::PfcWatchdogSettings> {
    (
        any::<bool>(),
        100u32..=5000,
        100u32..=60_000,
        any::<bool>(),
        proptest::option::of(any::<u8>()),
        50u32..=5000,
    )
        .prop_map(|(enabled, d, r, fwd, prios, i)| {
            lossless_node::config::PfcWatchdogSettings {
                enabled,
                detection_ms: d,
                restoration_ms: r,
                action: if fwd {
                    lossless_node::config::WatchdogAction::Forward
                } else {
                    lossless_node::config::WatchdogAction::Alert
                },
                priorities: prios.map(PriorityMap),
                interval_ms: i,
            }
        })
}
