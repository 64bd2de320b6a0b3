//! LLDP transmit timer and transmit machines (802.1AB-2016 §9.2.9, Figures 9-5
//! and 9-6), event-driven: instead of a one-second tick the machine keeps its
//! deadlines and the caller wakes it at `poll_timeout()`.
//!
//! The CEE DCBX specification (§2.3.1.1) asks for fast initial transmission
//! after every initialisation (1 s for the first five frames); 802.1AB-2016
//! generalised that as txFast/msgFastTx, which is what runs here. DCBX changes start a
//! fast burst too, as lldpad does, so that a lost frame is repeated a second
//! later instead of 30 s later.

use crate::config::LldpTimers;
use crate::time::{Duration, Instant};

/// One second: the txTick period that replenishes txCredit.
const TICK: Duration = Duration::from_secs(1);

/// What the transmit machine wants sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    /// A normal LLDPDU with the current local information.
    Info,
    /// A shutdown LLDPDU: TTL 0, mandatory TLVs only.
    Shutdown,
    /// A normal LLDPDU with a TTL one second off ([`LldpTimers::solicit_ttl`]):
    /// it asks the peer for a fresh LLDPDU (see [`TxMachine::solicit`]).
    Solicit,
}

#[derive(Debug, Clone)]
pub struct TxMachine {
    /// Transmission enabled (portEnabled and adminStatus includes tx) and initialised.
    running: bool,
    /// txTTR: when the transmit timer next expires.
    ttr: Option<Instant>,
    /// txFast: fast transmissions still to go.
    fast: u8,
    /// txCredit and the instant of the last txTick that added to it.
    credit: u8,
    last_tick: Instant,
    /// txNow: a transmission is due and waits only for credit.
    now_pending: bool,
    /// A shutdown LLDPDU is due.
    shutdown_pending: bool,
    /// txShutdownWhile: no re-initialisation before this instant.
    shutdown_while: Option<Instant>,
    /// The next LLDPDU asks the peer for a fresh one.
    solicit: bool,
}

impl TxMachine {
    pub fn new(now: Instant) -> Self {
        TxMachine {
            running: false,
            ttr: None,
            fast: 0,
            credit: 0,
            last_tick: now,
            now_pending: false,
            shutdown_pending: false,
            shutdown_while: None,
            solicit: false,
        }
    }

    pub fn is_running(&self) -> bool {
        self.running
    }

    /// TX_TIMER_INITIALIZE followed by fast start: the first frame goes out at
    /// once, then txFastInit more at msgFastTx (5 in all with the defaults, as
    /// the CEE DCBX specification asks). Deferred while txShutdownWhile runs.
    pub fn start(&mut self, now: Instant, t: &LldpTimers) {
        if self.running {
            return;
        }
        self.running = true;
        self.credit = t.tx_credit_max;
        self.last_tick = now;
        self.fast = t.tx_fast_init.saturating_add(1);
        self.ttr = Some(now);
        if self.shutdown_while.is_some_and(|until| until > now) {
            // Re-initialisation waits for reinitDelay after a shutdown.
            self.ttr = self.shutdown_while;
        }
    }

    /// Stops transmission. With `send_shutdown` (adminStatus change while the
    /// link is up) a shutdown LLDPDU is queued and reinitDelay starts.
    pub fn stop(&mut self, now: Instant, t: &LldpTimers, send_shutdown: bool) {
        if !self.running {
            return;
        }
        self.running = false;
        self.ttr = None;
        self.fast = 0;
        self.now_pending = false;
        self.solicit = false;
        if send_shutdown {
            self.shutdown_pending = true;
            self.shutdown_while = Some(now + t.reinit());
        }
    }

    /// somethingChangedLocal: send as soon as credit allows.
    pub fn local_change(&mut self, now: Instant, t: &LldpTimers) {
        if self.running {
            self.signal_tx(now, t);
        }
    }

    /// TX_FAST_START (newNeighbor, or a DCBX change): send now and keep
    /// sending at msgFastTx for txFastInit frames.
    pub fn fast_start(&mut self, now: Instant, t: &LldpTimers) {
        if !self.running {
            return;
        }
        if self.fast == 0 {
            self.fast = t.tx_fast_init;
        }
        self.signal_tx(now, t);
    }

    /// A fast burst whose first LLDPDU asks the peer for a fresh one: it differs from
    /// the last one we sent (its TTL), so a peer that drops an LLDPDU equal to the
    /// last one it received (lldpad) processes it and answers. Used when the port
    /// leaves tooManyNeighbors and needs its peer's information now, not at the peer's
    /// next msgTxInterval.
    pub fn solicit(&mut self, now: Instant, t: &LldpTimers) {
        if self.running {
            self.solicit = true;
            self.fast_start(now, t);
        }
    }

    /// Keeps at least one more fast transmission scheduled (used while a DCBX
    /// SeqNo waits for its acknowledgement).
    pub fn keep_fast(&mut self, now: Instant, t: &LldpTimers) {
        if !self.running || self.fast > 0 {
            return;
        }
        self.fast = 1;
        let due = now + t.fast();
        if self.ttr.is_none_or(|ttr| ttr > due) {
            self.ttr = Some(due);
        }
    }

    fn signal_tx(&mut self, now: Instant, t: &LldpTimers) {
        self.now_pending = true;
        self.ttr = Some(
            now + if self.fast > 0 {
                t.fast()
            } else {
                t.interval()
            },
        );
    }

    fn replenish(&mut self, now: Instant, t: &LldpTimers) {
        let elapsed = now.saturating_since(self.last_tick);
        let ticks = elapsed.as_secs();
        if ticks > 0 {
            let add = ticks.min(u64::from(t.tx_credit_max)) as u8;
            self.credit = self.credit.saturating_add(add).min(t.tx_credit_max);
            self.last_tick = self.last_tick + Duration::from_secs(ticks);
        }
    }

    /// Advances timers to `now` and returns the frame to send now, if any.
    /// Call repeatedly until it returns None.
    pub fn poll(&mut self, now: Instant, t: &LldpTimers) -> Option<TxKind> {
        if self.shutdown_pending {
            self.shutdown_pending = false;
            return Some(TxKind::Shutdown);
        }
        if self.shutdown_while.is_some_and(|until| until <= now) {
            self.shutdown_while = None;
        }
        if !self.running {
            return None;
        }
        self.replenish(now, t);
        if self.ttr.is_some_and(|ttr| ttr <= now) {
            // TX_TIMER_EXPIRES
            self.fast = self.fast.saturating_sub(1);
            self.signal_tx(now, t);
        }
        if self.now_pending && self.credit > 0 {
            self.now_pending = false;
            self.credit -= 1;
            if std::mem::take(&mut self.solicit) {
                return Some(TxKind::Solicit);
            }
            return Some(TxKind::Info);
        }
        None
    }

    /// The next instant at which `poll` may have something to do.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.shutdown_pending {
            return Some(self.last_tick);
        }
        if !self.running {
            return self.shutdown_while;
        }
        let credit_due = (self.now_pending && self.credit == 0).then(|| self.last_tick + TICK);
        match (self.ttr, credit_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(tx: &mut TxMachine, now: Instant, t: &LldpTimers) -> usize {
        let mut n = 0;
        while tx.poll(now, t).is_some() {
            n += 1;
        }
        n
    }

    /// Runs the machine to `end` and returns the send instants.
    fn run(tx: &mut TxMachine, from: Instant, end: Instant, t: &LldpTimers) -> Vec<Instant> {
        let mut sent = Vec::new();
        let mut now = from;
        loop {
            for _ in 0..drain(tx, now, t) {
                sent.push(now);
            }
            match tx.poll_timeout() {
                Some(next) if next <= end => now = next.max(now),
                _ => break,
            }
        }
        sent
    }

    #[test]
    fn five_fast_frames_then_msg_tx_interval() {
        let t = LldpTimers::default();
        let mut tx = TxMachine::new(Instant::ZERO);
        tx.start(Instant::ZERO, &t);
        let sent = run(&mut tx, Instant::ZERO, Instant::from_secs_f64(100.0), &t);
        let secs: Vec<f64> = sent.iter().map(|i| i.since_epoch().as_secs_f64()).collect();
        assert_eq!(secs, vec![0.0, 1.0, 2.0, 3.0, 4.0, 34.0, 64.0, 94.0]);
    }

    #[test]
    fn credit_limits_bursts_to_tx_credit_max() {
        let t = LldpTimers::default();
        let mut tx = TxMachine::new(Instant::ZERO);
        tx.start(Instant::ZERO, &t);
        let now = Instant::ZERO;
        let mut sent = drain(&mut tx, now, &t);
        for _ in 0..10 {
            tx.local_change(now, &t);
            sent += drain(&mut tx, now, &t);
        }
        assert_eq!(sent, usize::from(t.tx_credit_max));
        // The pending change goes out when the next tick adds credit.
        assert_eq!(tx.poll_timeout(), Some(Instant::from_secs_f64(1.0)));
        assert_eq!(drain(&mut tx, Instant::from_secs_f64(1.0), &t), 1);
    }

    #[test]
    fn shutdown_then_reinit_delay() {
        let t = LldpTimers::default();
        let mut tx = TxMachine::new(Instant::ZERO);
        tx.start(Instant::ZERO, &t);
        drain(&mut tx, Instant::ZERO, &t);
        let at = Instant::from_secs_f64(10.0);
        tx.stop(at, &t, true);
        assert_eq!(tx.poll(at, &t), Some(TxKind::Shutdown));
        assert_eq!(tx.poll(at, &t), None);
        tx.start(at, &t);
        // Nothing before reinitDelay (2 s) has passed.
        assert_eq!(drain(&mut tx, Instant::from_secs_f64(11.0), &t), 0);
        assert_eq!(tx.poll_timeout(), Some(Instant::from_secs_f64(12.0)));
        assert_eq!(
            tx.poll(Instant::from_secs_f64(12.0), &t),
            Some(TxKind::Info)
        );
    }

    #[test]
    fn solicit_sends_a_fast_burst_led_by_one_lldpdu_with_another_ttl() {
        let t = LldpTimers::default();
        assert_eq!((t.ttl(), t.solicit_ttl()), (120, 121));
        let long = LldpTimers {
            msg_tx_interval: 3600,
            msg_tx_hold: 100,
            ..t
        };
        assert_eq!((long.ttl(), long.solicit_ttl()), (65535, 65534));
        let mut tx = TxMachine::new(Instant::ZERO);
        tx.start(Instant::ZERO, &t);
        run(&mut tx, Instant::ZERO, Instant::from_secs_f64(100.0), &t);
        let at = Instant::from_secs_f64(100.0);
        tx.solicit(at, &t);
        assert_eq!(tx.poll(at, &t), Some(TxKind::Solicit));
        assert_eq!(tx.poll(at, &t), None);
        let sent = run(&mut tx, at, Instant::from_secs_f64(200.0), &t);
        let secs: Vec<f64> = sent.iter().map(|i| i.since_epoch().as_secs_f64()).collect();
        assert_eq!(secs, vec![101.0, 102.0, 103.0, 104.0, 134.0, 164.0, 194.0]);
    }
}
