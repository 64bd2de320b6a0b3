//! The identity TLVs (802.1AB-2016 §8.5.5 to §8.5.9) the agent sends, their limits,
//! and the room they leave the DCBX TLVs in one frame.

use std::net::IpAddr;

use lossless_dcbx::config::lldpdu::LldpduBound;
use lossless_dcbx::{Agent, ConfigError, DcbxMode, Instant, MgmtAddress, PortConfig};
use lossless_wire::cee::{AppEntry, AppSelector, PriorityMap, DCBX_OUI};
use lossless_wire::frame::{Frame, Payload};
use lossless_wire::ieee::{AppPriority, AppPriorityTable, Selector};
use lossless_wire::lldp::{capability, SystemCapabilities, MAX_LLDPDU_LEN};
use lossless_wire::MacAddr;

const MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 0x0b]);

fn identity() -> PortConfig {
    let mut c = PortConfig::new(MAC);
    c.system_name = Some("host-b".into());
    c.port_description = Some("uplink to leaf 1".into());
    c.system_description = Some("Linux 6.1.0 #1 SMP x86_64".into());
    c.system_capabilities = Some(SystemCapabilities {
        capabilities: capability::STATION_ONLY,
        enabled: capability::STATION_ONLY,
    });
    c.management_address = Some(MgmtAddress {
        address: "192.0.2.11".parse().expect("address"),
        ifindex: 7,
    });
    c
}

/// Every frame the agent sends from link-up over `secs` seconds, with its
/// length-error count.
fn frames(cfg: PortConfig, secs: u64) -> (Vec<Vec<u8>>, u64) {
    let mut a = Agent::new(cfg, Instant::ZERO).expect("valid");
    a.handle_link(Instant::ZERO, true);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut now = Instant::ZERO;
    loop {
        while a.poll_transmit(&mut buf) {
            out.push(buf.clone());
        }
        match a.poll_timeout() {
            Some(t) if t.since_epoch().as_secs() < secs => {
                now = t.max(now);
                a.handle_timeout(now);
            }
            _ => break,
        }
    }
    a.shutdown(now);
    while a.poll_transmit(&mut buf) {
        out.push(buf.clone());
    }
    (out, a.lldp_stats().lldpdu_length_errors)
}

#[test]
fn the_five_identity_tlvs_go_out_and_parse_back() {
    let (sent, errors) = frames(identity(), 3);
    assert_eq!(errors, 0);
    assert!(sent.len() >= 2, "a frame at link-up and a shutdown");
    let Ok(Frame {
        payload: Payload::Lldp(pdu),
        ..
    }) = Frame::parse(&sent[0])
    else {
        panic!("not an LLDPDU");
    };
    assert_eq!(pdu.system_name, Some(&b"host-b"[..]));
    assert_eq!(pdu.port_description, Some(&b"uplink to leaf 1"[..]));
    assert_eq!(
        pdu.system_description,
        Some(&b"Linux 6.1.0 #1 SMP x86_64"[..])
    );
    assert_eq!(
        pdu.system_capabilities,
        Some(SystemCapabilities {
            capabilities: 0x0080,
            enabled: 0x0080
        })
    );
    let m = &pdu.management_addresses;
    assert_eq!(m.len(), 1);
    assert_eq!(
        (m[0].address_subtype, m[0].address, m[0].interface_subtype),
        (1, &[192, 0, 2, 11][..], 2)
    );
    assert_eq!((m[0].interface_number, m[0].oid), (7, &[][..]));
    // The shutdown LLDPDU carries the mandatory TLVs only.
    let Ok(Frame {
        payload: Payload::Lldp(last),
        ..
    }) = Frame::parse(sent.last().expect("frames"))
    else {
        panic!("not an LLDPDU");
    };
    assert_eq!(last.ttl, 0);
    assert!(last.system_name.is_none() && last.management_addresses.is_empty());
}

#[test]
fn an_ipv6_management_address_is_family_2() {
    let mut c = identity();
    let v6: IpAddr = "2001:db8::b".parse().expect("address");
    c.management_address = Some(MgmtAddress {
        address: v6,
        ifindex: 3,
    });
    let (sent, _) = frames(c, 1);
    let Ok(Frame {
        payload: Payload::Lldp(pdu),
        ..
    }) = Frame::parse(&sent[0])
    else {
        panic!("not an LLDPDU");
    };
    let m = pdu.management_addresses[0];
    assert_eq!((m.address_subtype, m.interface_number), (2, 3));
    let IpAddr::V6(a) = v6 else { unreachable!() };
    assert_eq!(m.address, &a.octets()[..]);
}

#[test]
fn a_change_of_identity_goes_out_at_once() {
    let mut a = Agent::new(identity(), Instant::ZERO).expect("valid");
    a.handle_link(Instant::ZERO, true);
    let mut buf = Vec::new();
    while a.poll_transmit(&mut buf) {}
    let later = Instant::from_secs_f64(10.0);
    let mut c = identity();
    c.system_name = Some("renamed".into());
    a.set_config(later, c).expect("valid");
    assert!(a.poll_transmit(&mut buf), "a frame at once");
    let Ok(Frame {
        payload: Payload::Lldp(pdu),
        ..
    }) = Frame::parse(&buf)
    else {
        panic!("not an LLDPDU");
    };
    assert_eq!(pdu.system_name, Some(&b"renamed"[..]));
}

fn refused(c: &PortConfig) -> (String, String) {
    match c.validate() {
        Err(ConfigError::Value { path, reason }) => (path, reason),
        Ok(()) => panic!("accepted: {c:?}"),
    }
}

#[test]
fn strings_over_255_octets_and_impossible_capabilities_are_refused() {
    let mut c = identity();
    c.system_description = Some("é".repeat(128));
    assert_eq!(
        refused(&c),
        (
            "system_description".into(),
            "256 octets: the TLV carries at most 255".into()
        )
    );
    c.system_description = Some("x".repeat(255));
    assert_eq!(c.validate(), Ok(()));

    let mut c = identity();
    c.system_capabilities = Some(SystemCapabilities {
        capabilities: capability::STATION_ONLY,
        enabled: capability::ROUTER | capability::STATION_ONLY,
    });
    assert_eq!(
        refused(&c),
        (
            "system_capabilities.enabled".into(),
            "router enabled but not among the capabilities: a system can only enable what it has"
                .into()
        )
    );
    c.system_capabilities = Some(SystemCapabilities {
        capabilities: 0x0800 | capability::ROUTER,
        enabled: 0,
    });
    assert_eq!(
        refused(&c),
        (
            "system_capabilities.capabilities".into(),
            "bits bit11 are reserved (802.1AB Table 8-4 defines bits 0..10)".into()
        )
    );
}

/// The longest values of every identity TLV, with 168 IEEE APP entries (the most one
/// TLV carries).
fn longest(mode: DcbxMode) -> PortConfig {
    let mut c = identity();
    let s = "x".repeat(255);
    c.chassis_id = Some(s.clone());
    c.port_id = Some(s.clone());
    c.system_name = Some(s.clone());
    c.port_description = Some(s.clone());
    c.system_description = Some(s);
    c.management_address = Some(MgmtAddress {
        address: "2001:db8::b".parse().expect("address"),
        ifindex: 3,
    });
    c.dcbx.mode = mode;
    let entries: Vec<AppPriority> = (0..168)
        .map(|i| AppPriority {
            priority: 3,
            selector: Selector::UDP,
            protocol: 1000 + i,
        })
        .collect();
    c.dcbx.ieee.app = AppPriorityTable::try_from(&entries[..]).expect("168 fit");
    c
}

/// Each TLV within its own limit, they could add up to more than a frame: the
/// configuration is refused, saying how much each part takes, rather than the agent
/// building an LLDPDU that emit refuses (or that would lose its DCBX TLVs).
#[test]
fn identity_and_dcbx_that_overflow_the_frame_are_refused() {
    let c = longest(DcbxMode::Ieee);
    // Chassis 258, Port 258, TTL 4, three strings 3 * 257, capabilities 6,
    // IPv6 management address 26, End 2: 1325. IEEE: ETS 27, PFC 8, APP 2 + 5 + 504.
    let (path, reason) = refused(&c);
    assert_eq!(path, "lldpdu");
    assert_eq!(
        reason,
        "the LLDPDU could reach 1871 octets, over the 1500 one Ethernet frame carries: \
         Chassis ID, Port ID and the identity TLVs take 1325, the DCBX TLVs up to 546; \
         shorten chassis_id, port_id or the identity strings, or turn one off"
    );
    // In CEE or auto mode a whole CEE TLV (513 octets) is counted.
    let mut c = longest(DcbxMode::Cee);
    c.dcbx.ieee.app = AppPriorityTable::default();
    assert!(refused(&c).1.contains("the DCBX TLVs up to 513"));
}

/// Right at the limit, with full APP tables in both versions: accepted, and every
/// frame of a run goes out, the longest exactly 1500 octets of LLDPDU.
#[test]
fn at_the_limit_every_frame_is_sent() {
    for mode in [DcbxMode::Ieee, DcbxMode::Cee, DcbxMode::Auto] {
        let mut c = longest(mode);
        c.dcbx.app.cfg.entries = (0..77)
            .map(|i| AppEntry {
                selector: AppSelector::PORT,
                protocol: 2000 + i,
                oui: DCBX_OUI,
                priorities: PriorityMap(0x08),
            })
            .collect();
        // Make room with the Chassis ID, then fill it with the System Description.
        c.system_description = Some(String::new());
        let base = LldpduBound::of(&c).total();
        let over = base.saturating_sub(MAX_LLDPDU_LEN);
        c.chassis_id = Some("x".repeat(255 - over));
        let room = MAX_LLDPDU_LEN - LldpduBound::of(&c).total();
        c.system_description = Some("x".repeat(room));
        assert_eq!(c.validate(), Ok(()), "{mode:?}");
        assert_eq!(LldpduBound::of(&c).total(), MAX_LLDPDU_LEN, "{mode:?}");

        let (sent, errors) = frames(c.clone(), 10);
        assert_eq!(errors, 0, "{mode:?}");
        let longest = sent.iter().map(Vec::len).max().expect("frames");
        assert_eq!(longest, 14 + MAX_LLDPDU_LEN, "{mode:?}");

        // One octet more is refused.
        let mut more = c;
        more.system_description
            .get_or_insert_with(String::new)
            .push('x');
        assert_eq!(refused(&more).0, "lldpdu", "{mode:?}");
    }
}
