//! A PE's data path: PFC from the DC gateway in, tunnel frames to the WAN
//! out, and the reverse. One thread, two sockets, batches both ways.

use lossless_relay::{Instant, Port, RelayConfig, TxBatch};
use lossless_sys::if_hwaddr;
use lossless_wire::tunnel::udp::{fill_checksum_v4, fill_checksum_v6, udp_in_frame, IpPair};

use super::{idle, ring_options, Link, Shared};

/// Completes the UDP checksum of a frame the kernel handed over with the
/// checksum not computed yet (`TP_STATUS_CSUMNOTREADY`): a VXLAN
/// packet from a VTEP on this host, or across a veth or virtio link whose
/// sender left the sum to offload. The field holds only the pseudo-header
/// sum, which the tunnel decoder would refuse as a bad checksum, while the
/// kernel itself trusts such a packet. Anything that is not UDP over IPv4 or
/// IPv6 (without extension headers, as the WAN filter passes) is left alone.
fn complete_udp_checksum(frame: &mut [u8]) {
    let Some(udp) = udp_in_frame(frame) else {
        return;
    };
    let Some(datagram) = frame.get_mut(udp.range).filter(|d| d.len() >= 8) else {
        return;
    };
    match udp.addrs {
        IpPair::V4(src, dst) => fill_checksum_v4(&src, &dst, datagram),
        IpPair::V6(src, dst) => fill_checksum_v6(&src, &dst, datagram),
    }
}

pub(super) fn run(shared: &Shared, cfg: &RelayConfig) {
    let batch = usize::from(cfg.datapath.batch);
    let priority = cfg.marking.socket_priority;
    let dc_name = cfg.dc.interface.clone().unwrap_or_default();
    let wan_name = cfg.wan.interface.clone().unwrap_or_default();
    // Tunnel frames come addressed to wan.port_mac: when that is not the
    // interface's own address, the NIC must pass other unicast up.
    let promiscuous = if_hwaddr(&wan_name).map_or(true, |mac| mac != cfg.wan.port_mac.0);
    let (mut dc, mut wan) = {
        let host = shared.lock();
        let [dc, wan] = host.links() else {
            return;
        };
        (
            Link::new(dc, ring_options(priority, false)),
            Link::new(wan, ring_options(priority, promiscuous)),
        )
    };
    if cfg.measure.is_some() {
        // The WAN delay measurement times its frames' departures by them.
        wan = wan.with_tx_stamps();
    }
    let mut out = TxBatch::with_capacity(2 * batch, 256);
    let mut fast = super::xdp::XdpPath::new(cfg);
    let mut last_counts = std::time::Instant::now();
    // DC frames the XDP program passed up, kept past the lock (reused: no
    // allocation per frame).
    let mut deferred = TxBatch::with_capacity(batch, 128);
    // The last turn ended in a wait that woke with nothing received.
    let mut woke = false;
    while !shared.stopping() {
        dc.ensure_open(shared);
        wan.ensure_open(shared);
        {
            let mut host = shared.lock();
            fast.ensure(&dc_name, &wan_name, host.xdp_mut());
            if last_counts.elapsed() >= super::STATS_EVERY {
                last_counts = std::time::Instant::now();
                if let Some(c) = fast.counts(shared.now()) {
                    host.record_xdp(c);
                }
            }
        }
        out.clear();
        let storm_xdp = fast.storm_running();
        deferred.clear();
        let (received, next) = {
            let mut host = shared.lock();
            let tick = std::time::Instant::now();
            let now = shared.at(tick);
            let Some(relay) = host.relay_mut() else {
                return;
            };
            relay.set_kernel_tx_stamps(wan.tx_stamps());
            wan.take_tx_stamps(woke, |frame, stamp| {
                let (now, wall) = clocks(shared);
                relay.handle_tx_stamp(now, frame, arrival(now, wall, stamp), &mut out);
            });
            let mut received = 0;
            for link in [&mut dc, &mut wan] {
                let port = link.side;
                // Only UDP (VXLAN) from the WAN has a checksum to finish.
                let complete = |f: &mut [u8]| {
                    if port == Port::Wan {
                        complete_udp_checksum(f);
                    }
                };
                received += link.recv(batch, complete, |frames| {
                    if port == Port::Dc && storm_xdp {
                        // The XDP program passed these up behind a due flush.
                        for f in frames.iter() {
                            deferred.push(Port::Dc, priority, f);
                        }
                        host.count_received(port, frames.len());
                    } else {
                        let (now, wall) = clocks(shared);
                        let stamped = frames
                            .iter_stamped()
                            .map(|(f, stamp)| (f, arrival(now, wall, stamp)));
                        host.process(now, port, stamped, &mut out);
                    }
                });
                link.read_stats(&mut host, tick);
            }
            host.process_timeout(now, &mut out);
            (received, host.poll_timeout())
        };
        let mut next = next;
        if storm_xdp {
            for f in deferred.iter() {
                fast.storm_run(Some(f.frame), priority, &mut out);
            }
            match fast.storm_due_in() {
                Some(d) if d.is_zero() => fast.storm_run(None, priority, &mut out),
                Some(d) => {
                    let at = shared.at(std::time::Instant::now() + d);
                    next = Some(next.map_or(at, |n| n.min(at)));
                }
                None => {}
            }
        }
        dc.send(&out, shared);
        wan.send(&out, shared);
        woke = received == 0 && out.is_empty();
        if woke {
            idle(shared, &[&dc, &wan], next);
        }
    }
}

/// The relay's time and the real-time clock (the one the kernel stamps
/// frames on), read together once the frames or stamps to convert are in
/// hand: every stamp among them was taken before, so [`arrival`] places it
/// exactly. (Read before them, a frame stamped after the read would count
/// as `now`, early by however long the thread was held up in between.)
fn clocks(shared: &Shared) -> (Instant, u64) {
    let now = shared.at(std::time::Instant::now());
    (now, crate::clock::unix_ns())
}

/// The relay's time of a frame the kernel stamped at `stamp` (real-time
/// nanoseconds), by how long before `wall` (read with `now`) that was. A
/// stamp after `wall` (a clock step) counts as `now`.
fn arrival(now: Instant, wall: u64, stamp: u64) -> Instant {
    let ago = std::time::Duration::from_nanos(wall.saturating_sub(stamp));
    Instant::from_duration(now.since_epoch().saturating_sub(ago))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use lossless_relay::example::{self, Kind, DC2_GW};
    use lossless_relay::{Instant, Relay, Verdict};
    use lossless_wire::tunnel::checksum::{pseudo_header_v4, pseudo_header_v6};
    use lossless_wire::tunnel::IpProtocol;
    use lossless_wire::MacAddr;

    use super::*;

    /// A legal PFC frame from DC2 GW, tunnelled by PE2 of `kind`.
    fn tunnelled(kind: Kind) -> Vec<u8> {
        let mut pfc = vec![0u8; 60];
        pfc[..6].copy_from_slice(&MacAddr::MAC_CONTROL.0);
        pfc[6..12].copy_from_slice(&DC2_GW.0);
        pfc[12..18].copy_from_slice(&[0x88, 0x08, 0x01, 0x01, 0x00, 0x08]);
        pfc[24..26].copy_from_slice(&[0xff, 0xff]);
        let mut pe2 = Relay::new(example::pe(2, kind), Instant::ZERO).unwrap();
        assert!(matches!(
            pe2.handle_frame(Instant::ZERO, Port::Dc, &pfc),
            Verdict::Relayed { .. }
        ));
        pe2.poll_transmit().unwrap().frame.to_vec()
    }

    /// What a packet socket reads of a CHECKSUM_PARTIAL packet: the UDP
    /// checksum field holds the folded pseudo-header sum, not the checksum.
    fn partial(frame: &[u8]) -> Vec<u8> {
        let mut f = frame.to_vec();
        let (at, sum) = if f[12..14] == [0x08, 0x00] {
            let (src, dst) = (&f[26..30], &f[30..34]);
            let sum = pseudo_header_v4(
                &Ipv4Addr::from(<[u8; 4]>::try_from(src).unwrap()),
                &Ipv4Addr::from(<[u8; 4]>::try_from(dst).unwrap()),
                (f.len() - 34) as u16,
                IpProtocol::UDP,
            );
            (34 + 6, sum)
        } else {
            let (src, dst) = (&f[22..38], &f[38..54]);
            let sum = pseudo_header_v6(
                &Ipv6Addr::from(<[u8; 16]>::try_from(src).unwrap()),
                &Ipv6Addr::from(<[u8; 16]>::try_from(dst).unwrap()),
                (f.len() - 54) as u32,
                IpProtocol::UDP,
            );
            (54 + 6, sum)
        };
        f[at..at + 2].copy_from_slice(&sum.folded().to_be_bytes());
        f
    }

    #[test]
    fn a_kernel_stamp_is_placed_on_the_relays_clock_by_its_age() {
        let now = Instant::from_duration(std::time::Duration::from_millis(500));
        let wall = 1_800_000_000_000_000_000;
        // Received 3 ms before the wall clock was read with `now`.
        assert_eq!(
            arrival(now, wall, wall - 3_000_000),
            Instant::from_duration(std::time::Duration::from_millis(497))
        );
        // A stamp after `wall` (the clock stepped back) is now, never later.
        assert_eq!(arrival(now, wall, wall + 9), now);
        // Older than the relay's clock: its start.
        assert_eq!(arrival(now, wall, wall - 600_000_000), Instant::ZERO);
    }

    #[test]
    fn a_partial_vxlan_checksum_is_completed_and_the_frame_delivered() {
        for kind in [Kind::Vxlan4, Kind::Vxlan6] {
            let sent = tunnelled(kind);
            let mut got = partial(&sent);
            assert_ne!(got, sent, "{kind:?}: the partial sum differs");
            let mut pe1 = Relay::new(example::pe(1, kind), Instant::ZERO).unwrap();
            assert_eq!(
                pe1.handle_frame(Instant::ZERO, Port::Wan, &got),
                Verdict::Dropped(lossless_relay::DropReason::MalformedTunnel),
                "{kind:?}: refused as it is"
            );
            complete_udp_checksum(&mut got);
            assert_eq!(got, sent, "{kind:?}");
            assert_eq!(
                pe1.handle_frame(Instant::ZERO, Port::Wan, &got),
                Verdict::Delivered,
                "{kind:?}"
            );
        }
    }

    #[test]
    fn frames_that_are_not_whole_udp_datagrams_are_left_alone() {
        for kind in [Kind::Srv6, Kind::Mpls] {
            let sent = tunnelled(kind);
            let mut got = sent.clone();
            complete_udp_checksum(&mut got);
            assert_eq!(got, sent, "{kind:?}");
        }
        for len in 0..60 {
            let mut cut = tunnelled(Kind::Vxlan4)[..len].to_vec();
            let before = cut.clone();
            complete_udp_checksum(&mut cut);
            assert_eq!(cut, before, "{len} octets");
        }
    }
}
