#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The relay as a daemon feature, on one PE in a namespace: an interface
//! that appears after the start, the storm ceiling with its suppressed count
//! in `relay show` and in `/metrics`, the text output, and a reload that
//! restarts the relay with the new section.
//!
//! ```text
//!  ns hosts: gen ---- pe2-dc [ns pe: losslessd PE2] pe2-wan ---- sink :ns hosts
//! ```

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;
use lossless_node::relay::RelayShow;
use lossless_relay::example::{self, Kind, DC2_GW, PE2_DC, PE2_WAN};
use lossless_relay::RelaySection;
use lossless_sys::batch::{wait_any, BatchOptions, BatchSocket, Filter, RxBatch};
use lossless_sys::if_nametoindex;
use lossless_sys::netns::in_netns;
use lossless_wire::tunnel::{ParseOptions, TunnelFrame};
use lossless_wire::MacAddr;
use std::os::fd::AsFd;

const WAIT: Duration = Duration::from_secs(10);
const SINK: MacAddr = MacAddr([2, 0, 0, 0, 0xaa, 2]);
const METRICS: &str = "127.0.0.1:9731";

fn config(storm: Option<u32>) -> String {
    let mut cfg = example::pe(2, Kind::Srv6);
    cfg.wan.next_hop_mac = SINK;
    cfg.storm.max_per_second = storm;
    cfg.storm.burst = storm.map(|_| 2);
    #[derive(serde::Serialize)]
    struct File {
        relay: RelaySection,
    }
    toml::to_string(&File {
        relay: RelaySection::Pe(cfg),
    })
    .unwrap()
}

fn show(d: &Daemon) -> RelayShow {
    serde_json::from_value(d.call(&Request::RelayShow)).unwrap()
}

/// A PFC frame from DC2's gateway for priority 3: `quanta` 0 resumes.
fn pfc(quanta: u16) -> Vec<u8> {
    let mut times = [0; 8];
    times[3] = quanta;
    example::pfc(DC2_GW, 0x08, times)
}

/// Priority 3's pause time of each inner PFC frame that reached the sink.
fn drain_sink(sink: &BatchSocket) -> Vec<u16> {
    let mut batch = RxBatch::new(64, 2048);
    let mut got = Vec::new();
    loop {
        if !wait_any(&[sink.as_fd()], Some(Duration::from_millis(300))).unwrap() {
            return got;
        }
        sink.recv_batch(&mut batch).unwrap();
        for f in batch.iter() {
            let t = TunnelFrame::parse(f, &ParseOptions::default())
                .expect("an SRv6 frame from the relay");
            let inner = t.inner;
            assert_eq!(&inner[12..14], &[0x88, 0x08]);
            got.push(u16::from_be_bytes([inner[24], inner[25]]));
        }
    }
}

/// A counter's value in the metrics text.
fn sample(text: &str, series: &str) -> u64 {
    metric(text, series) as u64
}

#[test]
fn a_pe_waits_for_its_interfaces_ceils_a_storm_and_restarts_on_reload() {
    if !require(
        "a_pe_waits_for_its_interfaces_ceils_a_storm_and_restarts_on_reload",
        &[Oracle::Netns, Oracle::Promtool],
    ) {
        return;
    }
    let pe = Netns::new();
    let hosts = Netns::new();
    let dir = TempDir::new();
    let conf = dir.path().join("pe.toml");
    std::fs::write(&conf, config(Some(10))).unwrap();
    // The daemon starts before its interfaces exist.
    let d = Daemon::start(
        &pe,
        &dir.path().join("pe"),
        &["--config", conf.to_str().unwrap(), "--metrics", METRICS],
    );
    let s = wait_for(WAIT, "the relay's first try to open its ports", || {
        let s = show(&d);
        s.ports[0]
            .error
            .as_deref()
            .is_some_and(|e| e != "not opened yet")
            .then_some(s)
    });
    assert_eq!(s.role, "pe");
    assert!(s.ports.iter().all(|p| !p.open));
    let err = s.ports[0].error.clone().unwrap_or_default();
    assert!(err.starts_with("pe2-dc:"), "{err}");
    Veth::new(
        &hosts,
        "gen",
        "02:00:00:00:aa:01",
        &pe,
        "pe2-dc",
        &PE2_DC.to_string(),
    );
    Veth::new(
        &pe,
        "pe2-wan",
        &PE2_WAN.to_string(),
        &hosts,
        "sink",
        &SINK.to_string(),
    );
    for (ns, i) in [
        (&pe, "pe2-dc"),
        (&pe, "pe2-wan"),
        (&hosts, "gen"),
        (&hosts, "sink"),
    ] {
        ns.ip(&["link", "set", i, "up"]);
    }
    wait_for(WAIT, "the relay to open both ports", || {
        show(&d).ports.iter().all(|p| p.open).then_some(())
    });
    hosts.wait_running("gen");
    pe.wait_running("pe2-wan");
    let (gen, sink) = in_netns(&hosts.name, || {
        let g = BatchSocket::open(
            if_nametoindex("gen")?,
            Filter::Mpls,
            BatchOptions::default(),
        )?;
        let s = BatchSocket::open(
            if_nametoindex("sink")?,
            Filter::Srv6,
            BatchOptions::default(),
        )?;
        std::io::Result::Ok((g, s))
    })
    .unwrap()
    .unwrap();

    // A storm: 40 pauses of priority 3 back to back, then a resume. At
    // 10/s with a burst of 2, the first pause and the burst cross at once,
    // the rest is held back, and the resume crosses at the end anyway.
    let mut storm: Vec<Vec<u8>> = (1..=40).map(|q| pfc(1000 + q)).collect();
    storm.push(pfc(0));
    gen.send_batch(storm.iter().map(Vec::as_slice)).unwrap();
    let crossed = drain_sink(&sink);
    assert!(crossed.len() >= 2 && crossed.len() < 10, "{crossed:?}");
    assert_eq!(crossed[0], 1001, "the first pause crosses at once");
    assert_eq!(
        *crossed.last().unwrap(),
        0,
        "the final resume crosses: {crossed:?}"
    );
    let s = show(&d);
    let pe_status = s.pe.clone().unwrap();
    let storm_status = pe_status.storm.clone().unwrap();
    assert_eq!((storm_status.max_per_second, storm_status.burst), (10, 2));
    let p3 = &storm_status.priorities[3];
    assert_eq!(p3.counters.episodes, 1);
    assert!(storm_status.suppressed > 30, "{storm_status:?}");
    assert_eq!(pe_status.egress.received, 41);
    assert_eq!(s.ports[0].received, 41);
    assert_eq!(s.ports[1].sent as usize, crossed.len());
    assert_eq!(s.ports[0].socket_drops, 0);

    // The same counts in /metrics, which promtool accepts.
    let body = scrape_metrics(&pe, METRICS);
    if let Err(e) = promtool_check_metrics(&body) {
        panic!("promtool check metrics:\n{e}\n---\n{body}");
    }
    assert_eq!(
        sample(&body, "lossless_relay_storm_suppressed_total"),
        storm_status.suppressed
    );
    assert_eq!(
        sample(
            &body,
            "lossless_relay_frames_total{direction=\"egress\",what=\"received\"}"
        ),
        41
    );
    assert_eq!(
        sample(
            &body,
            "lossless_relay_port_frames_total{side=\"wan\",interface=\"pe2-wan\",what=\"sent\"}"
        ),
        crossed.len() as u64
    );
    assert_eq!(
        sample(
            &body,
            "lossless_relay_dropped_total{direction=\"egress\",reason=\"bad_smac\"}"
        ),
        0
    );

    // The text form.
    let out = d.cli(&["relay", "show"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("storm ceiling: 10/s per priority, burst 2"),
        "{text}"
    );
    assert!(
        text.contains("egress (DC gateway -> WAN): received 41"),
        "{text}"
    );

    // A reload without the ceiling restarts the relay: counters from zero,
    // and a storm crosses whole.
    std::fs::write(&conf, config(None)).unwrap();
    let r = d.call(&Request::Reload);
    assert_eq!(r["relay"], "restarted", "{r}");
    wait_for(WAIT, "the new relay to open both ports", || {
        show(&d).ports.iter().all(|p| p.open).then_some(())
    });
    let s = show(&d);
    assert!(s.pe.as_ref().unwrap().storm.is_none());
    assert_eq!(s.pe.as_ref().unwrap().egress.received, 0);
    gen.send_batch(storm.iter().map(Vec::as_slice)).unwrap();
    assert_eq!(drain_sink(&sink).len(), 41);
    // An unchanged file leaves it running.
    assert_eq!(d.call(&Request::Reload)["relay"], "unchanged");
    assert_eq!(show(&d).pe.unwrap().egress.relayed, 41);
}
