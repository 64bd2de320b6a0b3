//! Which frames the ports' packet sockets read go to the node (sans-IO: interfaces,
//! sockets and the kernel's stamps in, "deliver, skip or exclude" out; the sockets
//! are [`crate::port_sockets`]'s).
//!
//! [`Delivery`] holds the rule for every port: a frame of an interface that is no port
//! is not delivered, and the interface is excluded from the shared sockets (their
//! filter, [`Delivery::excluded`]: the ports with their own socket first); a frame of
//! a port reading its own socket is delivered from one socket only, by its
//! [`Switch`]. Below, a port's switch from the shared packet sockets to a socket of
//! its own, as a rule on the kernel's receive stamps only.
//!
//! For a few microseconds both sockets receive the port's frames: the own socket from
//! its bind, the shared ones until their filter excludes the port. A frame both
//! received is the same buffer, and carries the same kernel stamp (`SO_TIMESTAMPNS`,
//! set once as the frame enters the stack) on either socket. Each socket reads in the
//! kernel's order, and the core takes their batches in any order:
//!
//! * until the own socket delivered a frame, the shared sockets' frames are delivered
//!   and their stamps remembered; an own frame with a remembered stamp is a copy,
//!   skipped; the first own frame without one starts the own socket's stream;
//! * from then on every own frame is delivered, and a shared frame only if the kernel
//!   stamped it before that first own frame (received before the bind).
//!
//! No time the daemon read is compared with the kernel's stamps: a step of the wall
//! clock (chrony's `makestep`, a VM resume) after the switch cannot make the port
//! deaf. Kernel stamps are compared with kernel stamps, for equality on the own
//! socket's side. What a step back could still do: a frame the shared sockets hold
//! from before the bind, read after the own socket's first frame, with the step
//! between the two (the milliseconds of the shared queue), is skipped and lost; on a
//! port the shared sockets never exclude (more flooded ports than their filter's
//! 1,024), its frames are delivered twice for the length of the step. Neither loses
//! the port its frames for the length of a step.
//!
//! Frames with no stamp (the kernel gave none) cannot be placed: the own socket's are
//! delivered, the shared sockets' skipped, as before this rule.
//!
//! A port's own sockets are two, one per EtherType [`Class`] (LLDP, MAC Control), as
//! the shared ones are: a storm of MAC Control frames fills the MAC Control socket's
//! receive buffer, never the LLDP one's. Each is bound on its own, a moment apart, so
//! a port has a [`Switch`] per class: the shared LLDP socket pairs with the own LLDP
//! socket, the shared MAC Control socket with the own MAC Control one. (One switch
//! for both would skip an LLDPDU only the shared LLDP socket received, stamped after
//! the own MAC Control socket's first frame but before the own LLDP socket's bind.)

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

/// The EtherType class of a packet socket: each class has its shared socket, and a
/// port reading alone has its own socket of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Class {
    /// LLDP (0x88cc).
    Lldp,
    /// MAC Control (0x8808: PAUSE, PFC).
    MacControl,
}

impl Class {
    /// Its place among a port's [`Switch`]es.
    fn index(self) -> usize {
        match self {
            Class::Lldp => 0,
            Class::MacControl => 1,
        }
    }
}

/// What becomes of one frame a socket read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// To the node.
    Deliver,
    /// A copy of a frame the port's other socket delivered (counted, not delivered).
    Copy,
    /// An interface that is no port, on the shared sockets: not delivered; `new`, it
    /// was not excluded yet (the filter changes).
    Stranger { new: bool },
}

/// The ports the shared sockets serve, those reading sockets of their own (each
/// with a [`Switch`] per [`Class`]), and the interfaces that are no port whose frames reached the
/// shared sockets.
#[derive(Debug, Default)]
pub(crate) struct Delivery {
    open: HashSet<u32>,
    own: HashMap<u32, [Switch; 2]>,
    strangers: BTreeSet<u32>,
}

impl Delivery {
    /// A port about to join the shared sockets is no stranger: whether it was one
    /// (the shared sockets' filter then changes).
    pub(crate) fn forget_stranger(&mut self, ifindex: u32) -> bool {
        self.strangers.remove(&ifindex)
    }

    /// The port joined the shared sockets.
    pub(crate) fn opened(&mut self, ifindex: u32) {
        self.open.insert(ifindex);
    }

    pub(crate) fn is_open(&self, ifindex: u32) -> bool {
        self.open.contains(&ifindex)
    }

    /// The open ports.
    pub(crate) fn ports(&self) -> Vec<u32> {
        self.open.iter().copied().collect()
    }

    /// Whether the port may get a socket of its own: open, and none yet.
    pub(crate) fn may_receive_alone(&self, ifindex: u32) -> bool {
        self.open.contains(&ifindex) && !self.own.contains_key(&ifindex)
    }

    /// The port's own sockets are open (bound): its switches start, one per class.
    pub(crate) fn receives_alone(&mut self, ifindex: u32) {
        self.own.insert(ifindex, [Switch::new(), Switch::new()]);
    }

    /// A port gone: None if it was not open, else whether it had a socket of its own
    /// (the shared sockets' filter then changes).
    pub(crate) fn closed(&mut self, ifindex: u32) -> Option<bool> {
        if !self.open.remove(&ifindex) {
            return None;
        }
        Some(self.own.remove(&ifindex).is_some())
    }

    /// A frame of interface `ifindex` read from a socket of EtherType class `class`,
    /// the shared one (`shared`) or the port's own, with the kernel's receive stamp.
    pub(crate) fn frame(
        &mut self,
        ifindex: u32,
        class: Class,
        shared: bool,
        stamp: Option<u64>,
    ) -> Verdict {
        if shared && !self.open.contains(&ifindex) {
            return Verdict::Stranger {
                new: self.strangers.insert(ifindex),
            };
        }
        if let Some(switches) = self.own.get_mut(&ifindex) {
            // Each frame from one socket of its class only (the kernel's stamps tell).
            let switch = &mut switches[class.index()];
            let deliver = if shared {
                switch.shared(stamp)
            } else {
                switch.own(stamp)
            };
            if !deliver {
                return Verdict::Copy;
            }
        }
        Verdict::Deliver
    }

    /// The interfaces the shared sockets are to drop in the kernel, at most `max`:
    /// the ports with a socket of their own, then the strangers (forgotten when both
    /// do not fit: they come back with their next frame).
    pub(crate) fn excluded(&mut self, max: usize) -> Vec<u32> {
        let mut excluded: Vec<u32> = self.own.keys().copied().collect();
        excluded.sort_unstable();
        if excluded.len() + self.strangers.len() > max {
            self.strangers.clear();
        }
        excluded.extend(self.strangers.iter().copied());
        excluded.truncate(max);
        excluded
    }
}

/// Stamps of the port's frames the shared sockets delivered since the switch that are
/// remembered until the own socket delivers its first frame (the newest kept). The
/// window both sockets receive in is a few system calls long: tens of frames in a
/// flood.
pub(crate) const REMEMBERED: usize = 1024;

/// One port's switch, from the moment its own socket is open.
#[derive(Debug, Default)]
pub(crate) struct Switch {
    /// Stamps of the port's frames the shared sockets delivered since the switch, until
    /// the own socket delivered one (the newest [`REMEMBERED`]).
    from_shared: VecDeque<u64>,
    /// The stamp of the first frame the own socket delivered.
    own_first: Option<u64>,
}

impl Switch {
    pub(crate) fn new() -> Switch {
        Switch::default()
    }

    /// A frame of the port the shared sockets read (`stamp`: the kernel's receive
    /// stamp): whether to deliver it.
    pub(crate) fn shared(&mut self, stamp: Option<u64>) -> bool {
        let Some(t) = stamp else {
            return false;
        };
        match self.own_first {
            // The own socket has every frame the kernel stamped from its first on.
            Some(first) => t < first,
            None => {
                if self.from_shared.len() == REMEMBERED {
                    self.from_shared.pop_front();
                }
                self.from_shared.push_back(t);
                true
            }
        }
    }

    /// A frame of the port its own socket read: whether to deliver it.
    pub(crate) fn own(&mut self, stamp: Option<u64>) -> bool {
        let Some(t) = stamp else {
            return true;
        };
        if self.own_first.is_none() {
            if let Some(i) = self.from_shared.iter().position(|&s| s == t) {
                // Delivered from the shared sockets, and so was every frame before it.
                self.from_shared.drain(..=i);
                return false;
            }
            self.own_first = Some(t);
            self.from_shared = VecDeque::new();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::{Class, Delivery, Switch, Verdict, REMEMBERED};

    const L: Class = Class::Lldp;
    const M: Class = Class::MacControl;

    const S: u64 = 1_000_000_000;
    /// The wall clock when the daemon opened the port's own socket (what the rule
    /// before this one read, and compared the kernel's stamps with).
    const WALL_AT_SWITCH: u64 = 1_800_000_000 * S;

    /// Kernel stamps of a flood, one frame a microsecond from `from`.
    fn frames(from: u64, n: u64) -> Vec<u64> {
        (0..n).map(|i| from + i * 1_000).collect()
    }

    /// The clock steps back 20 s just after the switch (chrony's makestep, a VM resume):
    /// the kernel stamps every later frame 20 s earlier than the wall clock read at the
    /// switch. The own socket's frames are the port's only ones (the shared sockets
    /// exclude it): each must be delivered.
    #[test]
    fn a_step_back_after_the_switch_loses_no_frame() {
        let mut sw = Switch::new();
        // The shared sockets delivered the port's frames up to the switch.
        for t in frames(WALL_AT_SWITCH - 100_000, 100) {
            assert!(sw.shared(Some(t)));
        }
        let stepped = WALL_AT_SWITCH + 1_000 - 20 * S;
        let delivered = frames(stepped, 1_000)
            .into_iter()
            .filter(|&t| sw.own(Some(t)))
            .count();
        assert_eq!(delivered, 1_000, "frames received after the step");
    }

    /// The same long after the switch: the port's own socket is its only one for good.
    #[test]
    fn a_step_back_long_after_the_switch_loses_no_frame() {
        let mut sw = Switch::new();
        for t in frames(WALL_AT_SWITCH, 10) {
            assert!(sw.own(Some(t)));
        }
        for t in frames(WALL_AT_SWITCH + 3_600 * S - 20 * S, 100) {
            assert!(sw.own(Some(t)));
        }
    }

    /// The window both sockets receive in: frames 0..100 only on the shared sockets
    /// (before the own socket's bind), 100..150 on both, 150..300 on the own socket only.
    /// Whichever reader the core hears first, every frame is delivered once, and the
    /// copies are counted.
    #[test]
    fn the_overlap_is_delivered_once_in_any_order() {
        let all = frames(WALL_AT_SWITCH - 100_000, 300);
        let shared = &all[..150];
        let own = &all[100..];
        // Interleavings of the two readers' batches (the core takes each batch whole).
        for (shared_batch, own_batch) in [(1, 1), (7, 3), (64, 64), (150, 1), (1, 200), (33, 17)] {
            for shared_first in [true, false] {
                let mut sw = Switch::new();
                let mut got = Vec::new();
                let mut skipped = 0;
                let (mut a, mut b) = (shared.chunks(shared_batch), own.chunks(own_batch));
                let mut turn = shared_first;
                loop {
                    let next = if turn {
                        a.next()
                            .map(|x| (true, x))
                            .or_else(|| b.next().map(|x| (false, x)))
                    } else {
                        b.next()
                            .map(|x| (false, x))
                            .or_else(|| a.next().map(|x| (true, x)))
                    };
                    let Some((from_shared, batch)) = next else {
                        break;
                    };
                    for &t in batch {
                        let keep = if from_shared {
                            sw.shared(Some(t))
                        } else {
                            sw.own(Some(t))
                        };
                        if keep {
                            got.push(t);
                        } else {
                            skipped += 1;
                        }
                    }
                    turn = !turn;
                }
                got.sort_unstable();
                assert_eq!(
                    got, all,
                    "batches {shared_batch}/{own_batch}, shared first: {shared_first}"
                );
                assert_eq!(skipped, 50, "the copies");
            }
        }
    }

    /// A step back inside the window: stamps are matched, not ordered, so it changes
    /// nothing. Frames 0..10 shared only; 10..20 on both; then the clock steps back
    /// 20 s and 20..40 reach the own socket only.
    #[test]
    fn a_step_back_inside_the_overlap_loses_no_frame() {
        let before = frames(WALL_AT_SWITCH - 10_000, 20);
        let after = frames(WALL_AT_SWITCH + 10_000 - 20 * S, 20);
        let mut sw = Switch::new();
        for &t in &before {
            assert!(sw.shared(Some(t)));
        }
        let own: Vec<bool> = before[10..]
            .iter()
            .chain(&after)
            .map(|&t| sw.own(Some(t)))
            .collect();
        assert_eq!(own.iter().filter(|&&k| k).count(), 20);
        assert!(own[..10].iter().all(|&k| !k), "the copies skipped");
    }

    /// A port the shared sockets never exclude (more flooded ports than their filter
    /// holds): every frame reaches both sockets for good, and is delivered once.
    #[test]
    fn a_port_never_excluded_is_delivered_once() {
        let all = frames(WALL_AT_SWITCH, 3 * REMEMBERED as u64);
        let mut sw = Switch::new();
        let (early, late) = all.split_at(10);
        assert!(early.iter().all(|&t| sw.shared(Some(t))));
        assert!(early.iter().all(|&t| !sw.own(Some(t))), "copies");
        assert!(late.iter().all(|&t| sw.own(Some(t))));
        assert!(late.iter().all(|&t| !sw.shared(Some(t))), "copies");
    }

    /// The documented cost of a step back on such a port: its frames are delivered twice
    /// for the length of the step, none is lost.
    #[test]
    fn a_step_back_on_a_port_never_excluded_delivers_twice_loses_nothing() {
        let mut sw = Switch::new();
        assert!(sw.own(Some(WALL_AT_SWITCH)));
        let stepped = frames(WALL_AT_SWITCH + 1_000 - 20 * S, 100);
        assert!(stepped.iter().all(|&t| sw.own(Some(t))));
        assert!(stepped.iter().all(|&t| sw.shared(Some(t))));
    }

    /// No stamp: the own socket's frame delivered, the shared sockets' skipped.
    #[test]
    fn no_stamp_goes_to_the_own_socket() {
        let mut sw = Switch::new();
        assert!(!sw.shared(None));
        assert!(sw.own(None));
    }

    /// Interfaces that are no port: not delivered, excluded once; a port opening on
    /// one is no stranger any more.
    #[test]
    fn strangers_are_excluded_once_and_forgotten_when_they_become_ports() {
        let mut d = Delivery::default();
        d.opened(1);
        assert_eq!(d.frame(1, L, true, Some(5)), Verdict::Deliver);
        assert_eq!(
            d.frame(7, L, true, Some(6)),
            Verdict::Stranger { new: true }
        );
        assert_eq!(
            d.frame(7, L, true, Some(7)),
            Verdict::Stranger { new: false }
        );
        assert_eq!(d.excluded(16), [7]);
        assert!(d.forget_stranger(7));
        d.opened(7);
        assert_eq!(d.frame(7, L, true, Some(8)), Verdict::Deliver);
        assert_eq!(d.excluded(16), Vec::<u32>::new());
    }

    /// A port with a socket of its own: each frame from one socket only, the copy
    /// counted; the port excluded from the shared sockets until it closes.
    #[test]
    fn a_port_alone_is_delivered_once_and_excluded() {
        let mut d = Delivery::default();
        assert!(!d.may_receive_alone(3), "not open");
        d.opened(3);
        assert!(d.may_receive_alone(3));
        d.receives_alone(3);
        assert!(!d.may_receive_alone(3), "once");
        // Frame 10 reached both sockets; 11 only the own one.
        assert_eq!(d.frame(3, L, true, Some(10)), Verdict::Deliver);
        assert_eq!(d.frame(3, L, false, Some(10)), Verdict::Copy);
        assert_eq!(d.frame(3, L, false, Some(11)), Verdict::Deliver);
        assert_eq!(d.frame(3, L, true, Some(11)), Verdict::Copy);
        assert_eq!(d.excluded(16), [3]);
        assert_eq!(d.closed(3), Some(true));
        assert_eq!(d.closed(3), None, "closed already");
        assert_eq!(d.excluded(16), Vec::<u32>::new());
    }

    /// A port's own sockets are bound one after the other (LLDP, then MAC Control, or
    /// the other way): each class switches on its own. The own MAC Control socket's
    /// first frame (stamp 20) says nothing about the LLDP sockets: an LLDPDU only the
    /// shared LLDP socket received after it (stamp 25, before the own LLDP socket's
    /// bind) is delivered, and the LLDP overlap is matched against the LLDP sockets
    /// only. One switch for both classes skipped that LLDPDU.
    #[test]
    fn each_class_switches_on_its_own() {
        let mut d = Delivery::default();
        d.opened(3);
        d.receives_alone(3);
        // MAC Control: frame 10 on both, then the own socket's stream from 20.
        assert_eq!(d.frame(3, M, true, Some(10)), Verdict::Deliver);
        assert_eq!(d.frame(3, M, false, Some(10)), Verdict::Copy);
        assert_eq!(d.frame(3, M, false, Some(20)), Verdict::Deliver);
        // LLDP: 25 on the shared socket alone (the own LLDP socket not bound yet),
        // 30 on both, 40 on the own one alone.
        assert_eq!(d.frame(3, L, true, Some(25)), Verdict::Deliver);
        assert_eq!(d.frame(3, L, true, Some(30)), Verdict::Deliver);
        assert_eq!(d.frame(3, L, false, Some(30)), Verdict::Copy);
        assert_eq!(d.frame(3, L, false, Some(40)), Verdict::Deliver);
        assert_eq!(d.frame(3, L, true, Some(40)), Verdict::Copy);
        // MAC Control unchanged by the LLDP sockets: a shared frame after its own
        // socket's first is a copy; an own one is delivered.
        assert_eq!(d.frame(3, M, true, Some(35)), Verdict::Copy);
        assert_eq!(d.frame(3, M, false, Some(35)), Verdict::Deliver);
        // A stamp of one class never matches the other's: the same stamp on the own
        // LLDP socket (its stream started) is delivered, not taken for a MAC copy.
        assert_eq!(d.frame(3, L, false, Some(35)), Verdict::Deliver);
        assert_eq!(d.excluded(16), [3], "the port once, not per class");
    }

    /// The overlap of each class delivered once, the two classes' frames interleaved
    /// in the kernel's time (a PFC storm around the peer's LLDPDUs): every frame of
    /// either class once, the copies counted per class.
    #[test]
    fn both_classes_overlapping_are_each_delivered_once() {
        let mut d = Delivery::default();
        d.opened(5);
        d.receives_alone(5);
        // Even stamps MAC Control, odd LLDP. Shared sockets: 0..200; own: 100..300.
        let class = |t: u64| if t.is_multiple_of(2) { M } else { L };
        let mut got = Vec::new();
        let mut copies = [0, 0];
        for t in 0..200 {
            if d.frame(5, class(t), true, Some(t)) == Verdict::Deliver {
                got.push(t);
            } else {
                copies[(t % 2) as usize] += 1;
            }
        }
        for t in 100..300 {
            if d.frame(5, class(t), false, Some(t)) == Verdict::Deliver {
                got.push(t);
            } else {
                copies[(t % 2) as usize] += 1;
            }
        }
        got.sort_unstable();
        assert_eq!(got, (0..300).collect::<Vec<u64>>());
        assert_eq!(copies, [50, 50]);
    }

    /// The filter's room: ports alone first, in order; strangers forgotten when both
    /// do not fit.
    #[test]
    fn the_filter_keeps_the_ports_alone_first() {
        let mut d = Delivery::default();
        for p in [9, 2, 5] {
            d.opened(p);
            d.receives_alone(p);
        }
        assert!(matches!(
            d.frame(40, L, true, None),
            Verdict::Stranger { new: true }
        ));
        assert_eq!(d.excluded(4), [2, 5, 9, 40]);
        assert!(matches!(
            d.frame(41, L, true, None),
            Verdict::Stranger { new: true }
        ));
        assert_eq!(d.excluded(4), [2, 5, 9]);
        // Forgotten: the next frame is new again.
        assert_eq!(d.frame(41, L, true, None), Verdict::Stranger { new: true });
        assert_eq!(d.excluded(2), [2, 5]);
    }
}
