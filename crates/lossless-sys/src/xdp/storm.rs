//! The storm ceiling's state in the `storm` map (`struct storm_state` of the
//! C): written at start from the configuration, read for `relay show` and the
//! tests, and the held values sent by running `xdp_storm_flush` with
//! `BPF_PROG_TEST_RUN` when `next_due` comes.

use std::io;

use aya::maps::Array;

use super::{err, test_run, Side, XdpRelay, XDP_DROP, XDP_PASS, XDP_REDIRECT};

/// `BPF_F_LOCK`: read or write the value under its spin lock.
const BPF_F_LOCK: u64 = 4;

/// Token units per frame (`UNIT` of the C and of lossless_relay::storm).
pub const UNIT: u64 = 1_000_000_000;
/// `next_due` when nothing is held.
pub const NEVER: u64 = u64::MAX;

/// `enum held` of the C.
pub mod held {
    pub const NOTHING: u8 = 0;
    pub const RESUME: u8 = 1;
    pub const REFRESH: u8 = 2;
}

/// `struct storm_prio` of the C: one priority, times in nanoseconds.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StormPrio {
    pub tokens: u64,
    pub refilled: u64,
    pub ep_last_seen: u64,
    pub far_until: u64,
    pub far_refresh_at: u64,
    pub held_until: u64,
    pub episodes: u64,
    pub relayed: u64,
    pub bypassed: u64,
    pub suppressed: u64,
    pub flushed: u64,
    pub refreshed: u64,
    pub held_quanta: u16,
    pub in_episode: u8,
    pub far_paused: u8,
    pub held: u8,
    _pad: [u8; 3],
}

/// `struct storm_state` of the C.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct StormState {
    _lock: u32,
    pub tmpl_len: u32,
    pub rate: u64,
    pub cap: u64,
    pub gap_ns: u64,
    pub speed_bps: u64,
    pub refresh_before_ns: u64,
    pub next_due: u64,
    pub tmpl: [u8; 64],
    pub p: [StormPrio; 8],
}

// SAFETY: plain integers and bytes, repr(C), no implicit padding (the
// layout test checks the size the C has).
unsafe impl aya::Pod for StormState {}

impl StormState {
    /// The ceiling as lossless_relay's `StormGuard::new` starts it at
    /// `now_ns`: `rate` tokens a second (at least 1), buckets of `burst`
    /// (at least 1) full, nothing held.
    pub fn new(
        now_ns: u64,
        rate: u32,
        burst: u32,
        gap_ns: u64,
        speed_bps: u64,
        refresh_before_ns: u64,
    ) -> StormState {
        let cap = u64::from(burst.max(1)) * UNIT;
        let p = StormPrio {
            tokens: cap,
            refilled: now_ns,
            ..StormPrio::default()
        };
        StormState {
            _lock: 0,
            tmpl_len: 0,
            rate: u64::from(rate.max(1)),
            cap,
            gap_ns,
            speed_bps: speed_bps.max(1),
            refresh_before_ns,
            next_due: NEVER,
            tmpl: [0; 64],
            p: [p; 8],
        }
    }
}

/// `bpf_ktime_get_ns()`: CLOCK_MONOTONIC in nanoseconds, the programs'
/// clock.
pub fn ktime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec for the call to fill.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if r != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

impl XdpRelay {
    /// Writes the storm ceiling's state (at start).
    pub fn storm_init(&mut self, st: &StormState) -> io::Result<()> {
        let map = self
            .ebpf
            .map_mut("storm")
            .ok_or_else(|| err("storm", "no such map"))?;
        let mut a: Array<_, StormState> = Array::try_from(map).map_err(|e| err("storm", e))?;
        a.set(0, st, BPF_F_LOCK).map_err(|e| err("storm", e))
    }

    /// The storm ceiling's state, read under its lock.
    pub fn storm_state(&self) -> io::Result<StormState> {
        let map = self
            .ebpf
            .map("storm")
            .ok_or_else(|| err("storm", "no such map"))?;
        let a: Array<_, StormState> = Array::try_from(map).map_err(|e| err("storm", e))?;
        a.get(&0, BPF_F_LOCK).map_err(|e| err("storm", e))
    }

    /// Sets the programs' clock to `ns` (0: `bpf_ktime_get_ns`, the
    /// default). For tests, which cannot set the kernel's clock.
    pub fn set_clock(&mut self, ns: u64) -> io::Result<()> {
        let map = self
            .ebpf
            .map_mut("clock")
            .ok_or_else(|| err("clock", "no such map"))?;
        let mut a: Array<_, u64> = Array::try_from(map).map_err(|e| err("clock", e))?;
        a.set(0, ns, 0).map_err(|e| err("clock", e))
    }

    /// Sends what the storm ceiling holds that is due now: runs
    /// `xdp_storm_flush` until it says nothing is due; the tunnel frames to
    /// send on the WAN, in order.
    pub fn storm_flush(&mut self) -> io::Result<Vec<Vec<u8>>> {
        let fd = self.prog_fd(Side::StormFlush)?;
        let mut frames = Vec::new();
        // Each run sends a frame or clears at least one held value: 8
        // priorities, so 9 runs end it; more is a bug in the program.
        for _ in 0..64 {
            let mut out = vec![0u8; 512];
            let r = test_run(fd, &[0u8; 64], &mut out, 1, 0)?;
            match r.retval {
                XDP_REDIRECT => {
                    out.truncate(r.size_out as usize);
                    frames.push(out);
                }
                XDP_PASS => {}
                XDP_DROP => return Ok(frames),
                other => return Err(err("xdp_storm_flush", format!("returned {other}"))),
            }
        }
        Err(err("xdp_storm_flush", "still due after 64 runs"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_is_laid_out_as_the_c() {
        // The verifier's log shows the map's value size: 952.
        assert_eq!(std::mem::size_of::<StormPrio>(), 104);
        assert_eq!(std::mem::size_of::<StormState>(), 952);
    }
}
