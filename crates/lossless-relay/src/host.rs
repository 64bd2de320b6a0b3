//! The relay host, sans-IO: what runs a `[relay]` section around the core,
//! the same in losslessd (`losslessd/src/relay/`: threads, packet rings,
//! XDP) and in the lab's simulated nodes (`lossless-lab/src/sim/datapath.rs`:
//! virtual links). It owns the core (a PE's [`Relay`] or a DC gateway's
//! [`GatewayCheck`]), which of its interfaces are open and why not, their
//! counters, which frames each interface must hand over ([`Filter`], the
//! predicate the daemon's socket filters and XDP programs are checked
//! against), and builds what `lossless relay show` prints ([`Host::show`]).
//!
//! Time is a parameter: the host's clock starts at [`Instant::ZERO`] when the
//! relay starts, and `show(now)`'s uptime is `now` on it. Nothing here reads
//! a clock, opens a socket or spawns a thread; the caller does, and tells the
//! host what happened (a port opened, failed, a batch arrived, frames went).

use std::fmt::Display;

use lossless_wire::MacAddr;

use crate::batch::{Port, Transmit, TxBatch};
use crate::config::{Datapath, GatewayConfig, RelaySection, TunnelConfig};
use crate::pfc::PfcFrame;
use crate::show::{AcceptedPfc, GatewayShow, PortIo, RelayShow, XdpShow};
use crate::status::{GatewayCounters, RelayStatus};
use crate::storm::PriorityStatus;
use crate::{ConfigError, DropCounts, DropReason, GatewayCheck, Instant, Relay, Verdict};

/// What a port's error says before the runtime first tried to open it.
pub const NOT_OPENED_YET: &str = "not opened yet";

const ETH_8021Q: u16 = 0x8100;
const ETH_8021AD: u16 = 0x88a8;
const ETH_MAC_CONTROL: u16 = 0x8808;
const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;
const ETH_MPLS: u16 = 0x8847;
const IPPROTO_UDP: u8 = 17;
const IPPROTO_ROUTING: u8 = 43;
const IPPROTO_ETHERNET: u8 = 143;
const VLAN_HLEN: usize = 4;

/// Which frames an interface of the relay hands to the host; everything else
/// is not the relay's (the daemon's kernel filter drops it before the ring,
/// the lab gives it to the node core). One per interface: MAC Control on a
/// DC side, the tunnel's frames on a WAN side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// MAC Control (EtherType 0x8808): PAUSE and PFC.
    MacControl,
    /// IPv6 whose next header is a Routing header (43) or Ethernet (143):
    /// SRv6 with an SRH, or the reduced encapsulation without one.
    Srv6,
    /// UDP to `port` over IPv4 (any header length, first fragments only) or
    /// IPv6 (no extension headers).
    Udp { port: u16 },
    /// MPLS unicast (0x8847).
    Mpls,
}

fn u16_at(f: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]))
}

impl Filter {
    /// The WAN side's filter for `tunnel`: only what the tunnel can be.
    pub fn wan(tunnel: &TunnelConfig) -> Filter {
        match tunnel {
            TunnelConfig::Srv6 { .. } => Filter::Srv6,
            TunnelConfig::Vxlan { port, .. } => Filter::Udp { port: *port },
            TunnelConfig::SrMpls { .. } => Filter::Mpls,
        }
    }

    /// Whether the filter passes `f`, an untagged frame (as a packet
    /// socket's filter sees it: the kernel has moved an outer VLAN tag into
    /// metadata). Like a socket filter, a frame too short for a field it
    /// reads does not pass.
    pub fn passes(self, f: &[u8]) -> bool {
        let ty = u16_at(f, 12);
        match self {
            Filter::MacControl => ty == Some(ETH_MAC_CONTROL),
            Filter::Mpls => ty == Some(ETH_MPLS),
            Filter::Srv6 => {
                ty == Some(ETH_IPV6)
                    && matches!(f.get(14 + 6), Some(&(IPPROTO_ROUTING | IPPROTO_ETHERNET)))
            }
            Filter::Udp { port } => match ty {
                Some(ETH_IPV4) => {
                    let first = u16_at(f, 14 + 6).is_some_and(|o| o & 0x1fff == 0);
                    let ihl = f.get(14).map(|b| usize::from(b & 0x0f) * 4);
                    f.get(14 + 9) == Some(&IPPROTO_UDP)
                        && first
                        && ihl.and_then(|l| u16_at(f, 14 + l + 2)) == Some(port)
                }
                Some(ETH_IPV6) => {
                    f.get(14 + 6) == Some(&IPPROTO_UDP) && u16_at(f, 14 + 40 + 2) == Some(port)
                }
                _ => false,
            },
        }
    }

    /// Whether the interface hands over `frame` as it was on the wire: the
    /// receive path takes one outer 802.1Q or 802.1ad tag off before the
    /// filter looks (and the daemon puts it back before the core sees the
    /// frame), so [`Filter::passes`] judges the frame behind it.
    pub fn takes(self, frame: &[u8]) -> bool {
        match untagged(frame) {
            Some(inner) => self.passes(&inner),
            None => self.passes(frame),
        }
    }
}

/// `frame` without its outer VLAN tag, when it has one (what the kernel's
/// receive path hands a packet socket's filter).
pub fn untagged(frame: &[u8]) -> Option<Vec<u8>> {
    let ty = u16_at(frame, 12)?;
    if ty != ETH_8021Q && ty != ETH_8021AD {
        return None;
    }
    let rest = frame.get(12 + VLAN_HLEN..)?;
    let mut f = Vec::with_capacity(frame.len() - VLAN_HLEN);
    f.extend_from_slice(&frame[..12]);
    f.extend_from_slice(rest);
    Some(f)
}

/// One interface of the relay, as the section names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The core's side it serves (a gateway's one interface is its DC side).
    pub side: Port,
    /// `dc`, `wan` or `pe`, as `relay show` names it.
    pub name: &'static str,
    /// The interface (empty when the section names none).
    pub interface: String,
    /// The frames it hands over.
    pub filter: Filter,
}

/// What the host did with one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    /// A PE's verdict; what it yields is queued for [`Host::poll_transmit`].
    Pe(Verdict),
    /// A gateway's check: the frame's PFC content, or why it is refused.
    Gateway(Result<PfcFrame, DropReason>),
}

/// A DC gateway's check and what the host keeps beside it.
#[derive(Debug, Clone)]
struct Gateway {
    check: GatewayCheck,
    pe_port_mac: MacAddr,
    pe_system_mac: Option<MacAddr>,
    last_accepted: Option<AcceptedPfc>,
    /// What XDP programs counted (the runtime reads them).
    xdp: GatewayCounters,
}

/// The core (one per host: the size difference between the variants costs
/// nothing).
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Core {
    Pe(Relay),
    Gateway(Gateway),
}

/// A running `[relay]` section without its I/O.
#[derive(Debug)]
pub struct Host {
    section: RelaySection,
    datapath: Datapath,
    links: Vec<Link>,
    core: Core,
    ports: Vec<PortIo>,
    xdp: XdpShowSlot,
}

impl Host {
    /// The host of `section` (validated by the configuration reader), its
    /// clock at [`Instant::ZERO`]; no port is open yet.
    pub fn new(section: RelaySection) -> Result<Host, ConfigError> {
        let (core, links, datapath) = match &section {
            RelaySection::Pe(cfg) => {
                let relay = Relay::new(cfg.clone(), Instant::ZERO)?;
                let links = vec![
                    link(
                        Port::Dc,
                        "dc",
                        cfg.dc.interface.as_deref(),
                        Filter::MacControl,
                    ),
                    link(
                        Port::Wan,
                        "wan",
                        cfg.wan.interface.as_deref(),
                        Filter::wan(&cfg.tunnel),
                    ),
                ];
                (Core::Pe(relay), links, cfg.datapath)
            }
            RelaySection::Gateway(cfg) => {
                let gateway = Gateway::new(GatewayCheck::new(cfg)?, cfg);
                let links = vec![link(
                    Port::Dc,
                    "pe",
                    cfg.interface.as_deref(),
                    Filter::MacControl,
                )];
                (Core::Gateway(gateway), links, cfg.datapath)
            }
        };
        let ports = links
            .iter()
            .map(|l| PortIo {
                side: l.name.into(),
                interface: l.interface.clone(),
                error: Some(NOT_OPENED_YET.into()),
                ..PortIo::default()
            })
            .collect();
        Ok(Host {
            section,
            datapath,
            links,
            core,
            ports,
            xdp: XdpShowSlot::default(),
        })
    }

    /// The section it runs.
    pub fn section(&self) -> &RelaySection {
        &self.section
    }

    /// `pe` or `gateway`.
    pub fn role(&self) -> &'static str {
        role(&self.section)
    }

    /// The data path settings (poll, batch, XDP).
    pub fn datapath(&self) -> &Datapath {
        &self.datapath
    }

    /// The interfaces, in `relay show`'s order.
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    fn slot(&self, side: Port) -> Option<usize> {
        self.links.iter().position(|l| l.side == side)
    }

    fn port_mut(&mut self, side: Port) -> Option<&mut PortIo> {
        let i = self.slot(side)?;
        self.ports.get_mut(i)
    }

    /// The interface of `side` that hands over `frame` as it was on the wire
    /// (the predicate the daemon's filters implement).
    pub fn takes(&self, side: Port, frame: &[u8]) -> bool {
        self.slot(side)
            .is_some_and(|i| self.links[i].filter.takes(frame))
    }

    /// Whether `side`'s interface is open.
    pub fn is_open(&self, side: Port) -> bool {
        self.slot(side).is_some_and(|i| self.ports[i].open)
    }

    /// `side`'s interface opened.
    pub fn opened(&mut self, side: Port) {
        if let Some(p) = self.port_mut(side) {
            p.open = true;
            p.error = None;
        }
    }

    /// `side`'s interface could not be opened, or failed and was closed
    /// (`relay show` says `<interface>: <why>`). True when that is news (the
    /// port's error said something else), for a runtime that logs once.
    pub fn open_failed(&mut self, side: Port, why: &dyn Display) -> bool {
        let Some(p) = self.port_mut(side) else {
            return false;
        };
        let error = format!("{}: {why}", p.interface);
        let news = p.error.as_deref() != Some(error.as_str());
        p.open = false;
        p.error = Some(error);
        news
    }

    /// Counts a batch of `n` frames received on `side` (handed to the core,
    /// or to an XDP program the runtime runs in its stead).
    pub fn count_received(&mut self, side: Port, n: usize) {
        let Some(p) = self.port_mut(side) else {
            return;
        };
        if n > 0 {
            p.received += n as u64;
            p.batches += 1;
            p.largest_batch = p.largest_batch.max(n as u64);
        }
    }

    /// Counts frames the kernel dropped before `side`'s socket read them.
    pub fn count_socket_drops(&mut self, side: Port, n: u64) {
        if let Some(p) = self.port_mut(side) {
            p.socket_drops += n;
        }
    }

    /// Counts frames handed to `side`'s interface: `sent` went, `failed`
    /// did not (with the error, if the send failed as a whole). Frames for
    /// an interface that is not open are `failed` too: lost, and counted.
    pub fn count_sent(&mut self, side: Port, sent: usize, failed: usize, error: Option<String>) {
        let Some(p) = self.port_mut(side) else {
            return;
        };
        p.sent += sent as u64;
        p.send_errors += failed as u64;
        if let Some(e) = error {
            p.error = Some(format!("send: {e}"));
        }
    }

    /// Handles one frame received on `side` at `now` (a batch of one).
    pub fn handle_frame(&mut self, now: Instant, side: Port, frame: &[u8]) -> Handled {
        self.count_received(side, 1);
        match &mut self.core {
            Core::Pe(relay) => Handled::Pe(relay.handle_frame(now, side, frame)),
            Core::Gateway(g) => Handled::Gateway(g.check(now, frame)),
        }
    }

    /// Handles a batch received on `side` at `now`, each frame with the time
    /// it arrived; a PE appends what it yields to `out` (due storm frames
    /// first). Returns how many frames the batch had.
    pub fn process<'f>(
        &mut self,
        now: Instant,
        side: Port,
        frames: impl IntoIterator<Item = (&'f [u8], Instant)>,
        out: &mut TxBatch,
    ) -> usize {
        let mut n = 0;
        let frames = frames.into_iter().inspect(|_| n += 1);
        match &mut self.core {
            Core::Pe(relay) => {
                relay.process_arrived(now, side, frames, out);
            }
            Core::Gateway(g) => {
                for (f, _) in frames {
                    let _ = g.check(now, f);
                }
            }
        }
        self.count_received(side, n);
        n
    }

    /// The storm ceiling's due frames at `now`, queued for
    /// [`Host::poll_transmit`].
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Core::Pe(relay) = &mut self.core {
            relay.handle_timeout(now);
        }
    }

    /// [`Host::handle_timeout`] into a caller's batch.
    pub fn process_timeout(&mut self, now: Instant, out: &mut TxBatch) {
        if let Core::Pe(relay) = &mut self.core {
            relay.process_timeout(now, out);
        }
    }

    /// The next frame to send, in order.
    pub fn poll_transmit(&mut self) -> Option<Transmit<'_>> {
        match &mut self.core {
            Core::Pe(relay) => relay.poll_transmit(),
            Core::Gateway(_) => None,
        }
    }

    /// When [`Host::handle_timeout`] has work next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.core {
            Core::Pe(relay) => relay.poll_timeout(),
            Core::Gateway(_) => None,
        }
    }

    /// A PE's core.
    pub fn relay(&self) -> Option<&Relay> {
        match &self.core {
            Core::Pe(relay) => Some(relay),
            Core::Gateway(_) => None,
        }
    }

    /// A PE's core, for what only the runtime knows (kernel transmit stamps).
    pub fn relay_mut(&mut self) -> Option<&mut Relay> {
        match &mut self.core {
            Core::Pe(relay) => Some(relay),
            Core::Gateway(_) => None,
        }
    }

    /// A gateway's check.
    pub fn gateway(&self) -> Option<&GatewayCheck> {
        match &self.core {
            Core::Gateway(g) => Some(&g.check),
            Core::Pe(_) => None,
        }
    }

    /// What `relay show` says about the XDP path.
    pub fn xdp_mut(&mut self) -> &mut XdpShowSlot {
        &mut self.xdp
    }

    /// A PE's XDP program's counts, read now (added to the core's in
    /// [`Host::show`]).
    pub fn record_xdp(&mut self, counts: XdpCounts) {
        self.xdp.record(counts);
    }

    /// A gateway's XDP programs' counts and the running one's last accepted
    /// frame (kept when it is not older than the host's own).
    pub fn record_gateway_xdp(&mut self, counts: GatewayCounters, last: Option<AcceptedPfc>) {
        if let Core::Gateway(g) = &mut self.core {
            g.xdp = counts;
            if let Some(l) = last {
                if g.last_accepted.is_none_or(|a| a.at_s <= l.at_s) {
                    g.last_accepted = Some(l);
                }
            }
        }
    }

    /// What `lossless relay show` prints at `now` (the host's clock: the
    /// uptime).
    pub fn show(&self, now: Instant) -> RelayShow {
        let (pe, gateway) = match &self.core {
            Core::Pe(r) => (Some(merged(r.status(), &self.xdp.counts)), None),
            Core::Gateway(g) => (None, Some(g.show())),
        };
        RelayShow {
            role: self.role().into(),
            uptime_s: now.since_epoch().as_secs_f64(),
            datapath: self.datapath,
            ports: self.ports.clone(),
            pe,
            gateway,
            xdp: self.xdp.show.clone(),
        }
    }
}

fn role(section: &RelaySection) -> &'static str {
    match section {
        RelaySection::Pe(_) => "pe",
        RelaySection::Gateway(_) => "gateway",
    }
}

fn link(side: Port, name: &'static str, interface: Option<&str>, filter: Filter) -> Link {
    Link {
        side,
        name,
        interface: interface.unwrap_or_default().into(),
        filter,
    }
}

impl Gateway {
    fn new(check: GatewayCheck, cfg: &GatewayConfig) -> Gateway {
        Gateway {
            check,
            pe_port_mac: cfg.pe_port_mac,
            pe_system_mac: cfg.pe_system_mac,
            last_accepted: None,
            xdp: GatewayCounters::default(),
        }
    }

    fn check(&mut self, now: Instant, frame: &[u8]) -> Result<PfcFrame, DropReason> {
        let checked = self.check.check(frame);
        if let Ok(pfc) = &checked {
            self.last_accepted = Some(AcceptedPfc {
                src: pfc.src,
                class_enable: pfc.class_enable,
                quanta: pfc.quanta,
                at_s: now.since_epoch().as_secs_f64(),
            });
        }
        checked
    }

    fn show(&self) -> GatewayShow {
        let mut counters = *self.check.counters();
        counters.add(&self.xdp);
        GatewayShow {
            pe_port_mac: self.pe_port_mac,
            pe_system_mac: self.pe_system_mac,
            counters,
            last_accepted: self.last_accepted,
            buffer: self.check.buffer().cloned(),
        }
    }
}

/// A PE's XDP program's counts in the core's terms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XdpCounts {
    pub egress_received: u64,
    pub egress_relayed: u64,
    pub egress_passed: u64,
    pub egress_dropped: DropCounts,
    pub ingress_received: u64,
    pub ingress_delivered: u64,
    pub ingress_passed: u64,
    pub ingress_dropped: DropCounts,
    pub redirect_failed: u64,
    pub egress_suppressed: u64,
    pub egress_masked: u64,
    pub egress_flushed: u64,
    /// The storm ceiling's state in the program's map, when it keeps it.
    pub storm: Option<[PriorityStatus; 8]>,
}

/// The XDP path's state for `relay show`, and its last counts.
#[derive(Debug, Clone, Default)]
pub struct XdpShowSlot {
    show: Option<XdpShow>,
    counts: XdpCounts,
}

impl XdpShowSlot {
    /// The path does not run, for `why`. True when that is news worth a log
    /// line (it ran, or said something else, and `why` is not a wait).
    pub fn set_off(&mut self, why: &str) -> bool {
        let s = self.show.get_or_insert_with(XdpShow::default);
        if s.running || s.why != why {
            s.running = false;
            s.mode = None;
            s.why = why.to_string();
            return !why.starts_with("waiting");
        }
        false
    }

    /// The path runs in `mode` (`native` or `generic`); `why`: what it
    /// leaves to the packet sockets.
    pub fn set_running(&mut self, mode: &str, why: &str) {
        self.show = Some(XdpShow {
            running: true,
            mode: Some(mode.into()),
            why: why.into(),
            ..XdpShow::default()
        });
    }

    fn record(&mut self, c: XdpCounts) {
        self.counts = c;
        if let Some(s) = self.show.as_mut() {
            s.egress_relayed = c.egress_relayed;
            s.egress_dropped = c.egress_dropped.total();
            s.egress_passed = c.egress_passed;
            s.ingress_delivered = c.ingress_delivered;
            s.ingress_dropped = c.ingress_dropped.total();
            s.ingress_passed = c.ingress_passed;
            s.redirect_failed = c.redirect_failed;
        }
    }
}

/// The core's counters plus what the XDP program decided without it.
fn merged(mut st: RelayStatus, c: &XdpCounts) -> RelayStatus {
    let e = &mut st.egress;
    e.received += c.egress_received - c.egress_passed;
    e.relayed += c.egress_relayed;
    e.suppressed += c.egress_suppressed;
    e.masked += c.egress_masked;
    e.flushed += c.egress_flushed;
    if let (Some(storm), Some(prio)) = (st.storm.as_mut(), c.storm) {
        // The program keeps the ceiling: the core's guard saw no frame.
        storm.priorities = prio.to_vec();
        storm.suppressed = prio.iter().map(|p| p.counters.suppressed).sum();
    }
    e.dropped.add_all(&c.egress_dropped);
    let i = &mut st.ingress;
    i.received += c.ingress_received;
    i.delivered += c.ingress_delivered;
    i.dropped.add_all(&c.ingress_dropped);
    st
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::example::{self, Kind};

    #[test]
    fn ports_start_unopened_and_say_why_not_with_the_interface() {
        let mut h = Host::new(RelaySection::Pe(example::pe(2, Kind::Srv6))).unwrap();
        let s = h.show(Instant::ZERO);
        assert!(s.ports.iter().all(|p| !p.open));
        assert!(s
            .ports
            .iter()
            .all(|p| p.error.as_deref() == Some(NOT_OPENED_YET)));
        let iface = h.links()[0].interface.clone();
        assert!(h.open_failed(Port::Dc, &"No such device"));
        assert!(
            !h.open_failed(Port::Dc, &"No such device"),
            "not news twice"
        );
        assert_eq!(
            h.show(Instant::ZERO).ports[0].error,
            Some(format!("{iface}: No such device"))
        );
        h.opened(Port::Dc);
        assert!(h.is_open(Port::Dc) && !h.is_open(Port::Wan));
    }

    #[test]
    fn a_tag_in_front_is_looked_behind() {
        let mut f = vec![0u8; 64];
        f[12..14].copy_from_slice(&[0x81, 0x00]);
        f[16..18].copy_from_slice(&[0x88, 0x08]);
        assert!(Filter::MacControl.takes(&f));
        assert!(!Filter::MacControl.passes(&f));
        assert_eq!(untagged(&f).unwrap()[12..14], [0x88, 0x08]);
    }
}
