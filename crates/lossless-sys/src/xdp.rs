//! The PFC relay's XDP program (`bpf/relay.bpf.c`): loaded with aya, its
//! configuration and devmap written, attached to the DC and WAN interfaces,
//! its counters read; and run on single frames with `BPF_PROG_TEST_RUN`, as
//! the tests compare it with the sans-IO core, or on live frames, as the
//! bench offers load with it.
//!
//! [`object`] is the program as build.rs compiled it, or why it was not
//! (no clang, no libbpf headers): the relay then runs its AF_PACKET path.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use aya::maps::{Array, DevMap, PerCpuArray};
use aya::programs::{Xdp, XdpFlags};
use aya::Ebpf;

mod gateway;
mod storm;
pub use gateway::{GatewayLast, Sources};
pub use storm::{held, ktime_ns, StormPrio, StormState, NEVER, UNIT};

/// Largest tunnel header the program writes (`HDR_MAX` in the C).
pub const HDR_MAX: usize = 192;

// aligned: the ELF parser reads the object in place.
static OBJECT: &[u8] = aya::include_bytes_aligned!(env!("LOSSLESS_XDP_OBJECT"));
const BUILD_ERROR: &str = env!("LOSSLESS_XDP_BUILD_ERROR");

/// The compiled program, or why there is none.
pub fn object() -> Result<&'static [u8], &'static str> {
    if OBJECT.is_empty() {
        Err(if BUILD_ERROR.is_empty() {
            "the XDP object is empty"
        } else {
            BUILD_ERROR
        })
    } else {
        Ok(OBJECT)
    }
}

/// `struct relay_cfg` of the C, field for field.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RelayCfg {
    pub dc_port_mac: [u8; 6],
    pub gw_port_mac: [u8; 6],
    pub gw_system_mac: [u8; 6],
    pub has_system_mac: u8,
    pub kind: u8,
    pub wan_port_mac: [u8; 6],
    pub storm: u8,
    pub control_word: u8,
    pub hdr_len: u8,
    _pad0: u8,
    pub udp_csum_off: u16,
    /// The VXLAN port as the program compares it: network order in memory.
    pub vxlan_port: u16,
    _pad1: u16,
    pub vni: u32,
    pub local_label: u32,
    pub local_addr: [u8; 16],
    pub hdr60: [u8; HDR_MAX],
    pub hdr64: [u8; HDR_MAX],
    /// MPLS labels above ours to pop (the first `npop`).
    pub pop_labels: [u32; 4],
    pub npop: u32,
}

// SAFETY: plain bytes and integers, repr(C), padding made explicit.
unsafe impl aya::Pod for RelayCfg {}

/// `enum kind` of the C.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Srv6 = 1,
    Srv6Reduced = 2,
    Vxlan4 = 3,
    Vxlan6 = 4,
    Mpls = 5,
}

impl Default for RelayCfg {
    fn default() -> Self {
        RelayCfg {
            dc_port_mac: [0; 6],
            gw_port_mac: [0; 6],
            gw_system_mac: [0; 6],
            has_system_mac: 0,
            kind: 0,
            wan_port_mac: [0; 6],
            storm: 0,
            control_word: 0,
            hdr_len: 0,
            _pad0: 0,
            udp_csum_off: 0,
            vxlan_port: 0,
            _pad1: 0,
            vni: 0,
            local_label: 0,
            local_addr: [0; 16],
            hdr60: [0; HDR_MAX],
            hdr64: [0; HDR_MAX],
            pop_labels: [0; 4],
            npop: 0,
        }
    }
}

impl RelayCfg {
    pub fn set_vxlan_port(&mut self, port: u16) {
        self.vxlan_port = u16::from_ne_bytes(port.to_be_bytes());
    }
}

/// Counter indexes (`enum counter` of the C): egress drops by reason at
/// 0..12, ingress drops by reason at 12..24 (reasons in the core's order).
pub mod counter {
    pub const EGRESS_DROP: usize = 0;
    pub const INGRESS_DROP: usize = 12;
    pub const EGRESS_RECEIVED: usize = 24;
    pub const EGRESS_RELAYED: usize = 25;
    pub const EGRESS_PASSED: usize = 26;
    pub const INGRESS_RECEIVED: usize = 27;
    pub const INGRESS_DELIVERED: usize = 28;
    pub const INGRESS_PASSED: usize = 29;
    pub const REDIRECT_FAILED: usize = 30;
    /// Frames `xdp_sink` counted (the bench).
    pub const SINK: usize = 31;
    /// Legal frames the storm ceiling held back whole.
    pub const EGRESS_SUPPRESSED: usize = 32;
    /// Relayed frames the ceiling trimmed to the priorities that may go.
    pub const EGRESS_MASKED: usize = 33;
    /// Held values sent later in a frame of their own (`xdp_storm_flush`).
    pub const EGRESS_FLUSHED: usize = 34;
    /// `xdp_gateway`'s drops by reason (the core's order) at 35..47.
    pub const GATEWAY_DROP: usize = 35;
    /// MAC Control frames `xdp_gateway` checked, and the legal ones.
    pub const GATEWAY_RECEIVED: usize = 47;
    pub const GATEWAY_ACCEPTED: usize = 48;
    pub const COUNT: usize = 49;
}

/// Which program: the DC side's or the WAN side's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Dc,
    Wan,
    /// The bench's generator (`xdp_gen`: out of `ports[1]`).
    Gen,
    /// The bench's sink (`xdp_sink`: counts and drops).
    Sink,
    /// The storm ceiling's held values (`xdp_storm_flush`, run by user space).
    StormFlush,
    /// A DC gateway's check of the PFC its PE forwards (`xdp_gateway`).
    Gateway,
}

impl Side {
    fn program(self) -> &'static str {
        match self {
            Side::Dc => "xdp_dc",
            Side::Wan => "xdp_wan",
            Side::Gen => "xdp_gen",
            Side::Sink => "xdp_sink",
            Side::StormFlush => "xdp_storm_flush",
            Side::Gateway => "xdp_gateway",
        }
    }
}

/// XDP actions.
pub const XDP_DROP: u32 = 1;
pub const XDP_PASS: u32 = 2;
pub const XDP_REDIRECT: u32 = 4;

/// How the program was attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In the driver (veth, most NICs).
    Native,
    /// In the stack, after the skb is built (any interface; slower).
    Generic,
}

fn err(what: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("{what}: {e}"))
}

/// The loaded programs and their maps.
pub struct XdpRelay {
    ebpf: Ebpf,
}

impl XdpRelay {
    /// Loads a PE's programs (the verifier runs here) and writes `cfg`.
    pub fn load(cfg: &RelayCfg) -> io::Result<XdpRelay> {
        let mut relay =
            XdpRelay::load_sides(&[Side::Dc, Side::Wan, Side::Gen, Side::Sink, Side::StormFlush])?;
        relay.configure(cfg)?;
        Ok(relay)
    }

    /// The object's maps, and of its programs those of `sides`.
    fn load_sides(sides: &[Side]) -> io::Result<XdpRelay> {
        let obj = object().map_err(|e| io::Error::new(io::ErrorKind::Unsupported, e))?;
        let mut ebpf = Ebpf::load(obj).map_err(|e| err("loading the XDP object", e))?;
        for side in sides {
            let prog: &mut Xdp = ebpf
                .program_mut(side.program())
                .ok_or_else(|| err(side.program(), "missing from the object"))?
                .try_into()
                .map_err(|e| err(side.program(), e))?;
            prog.load().map_err(|e| err(side.program(), e))?;
        }
        Ok(XdpRelay { ebpf })
    }

    /// Replaces the configuration the programs read.
    pub fn configure(&mut self, cfg: &RelayCfg) -> io::Result<()> {
        let map = self
            .ebpf
            .map_mut("config")
            .ok_or_else(|| err("config", "no such map"))?;
        let mut a: Array<_, RelayCfg> = Array::try_from(map).map_err(|e| err("config", e))?;
        a.set(0, cfg, 0).map_err(|e| err("config", e))
    }

    /// Where `Side::Dc` frames go (the DC interface) and `Side::Wan` ones.
    pub fn set_ports(&mut self, dc_ifindex: u32, wan_ifindex: u32) -> io::Result<()> {
        let map = self
            .ebpf
            .map_mut("ports")
            .ok_or_else(|| err("ports", "no such map"))?;
        let mut d = DevMap::try_from(map).map_err(|e| err("ports", e))?;
        d.set(0, dc_ifindex, None, 0)
            .map_err(|e| err("ports: DC interface", e))?;
        d.set(1, wan_ifindex, None, 0)
            .map_err(|e| err("ports: WAN interface", e))
    }

    fn xdp(&mut self, side: Side) -> io::Result<&mut Xdp> {
        self.ebpf
            .program_mut(side.program())
            .ok_or_else(|| err(side.program(), "missing"))?
            .try_into()
            .map_err(|e| err(side.program(), e))
    }

    /// Attaches `side`'s program to `ifindex`, natively where the driver
    /// can, else generic. Detached when this value is dropped.
    pub fn attach(&mut self, side: Side, ifindex: u32) -> io::Result<Mode> {
        let prog = self.xdp(side)?;
        match prog.attach_to_if_index(ifindex, XdpFlags::DRV_MODE) {
            Ok(_) => Ok(Mode::Native),
            Err(native) => match prog.attach_to_if_index(ifindex, XdpFlags::SKB_MODE) {
                Ok(_) => Ok(Mode::Generic),
                Err(e) => Err(err(
                    &format!("attaching XDP to ifindex {ifindex}"),
                    format!("native: {native}; generic: {e}"),
                )),
            },
        }
    }

    /// Every counter, summed over the CPUs.
    pub fn counters(&self) -> io::Result<[u64; counter::COUNT]> {
        let map = self
            .ebpf
            .map("counters")
            .ok_or_else(|| err("counters", "no such map"))?;
        let a: PerCpuArray<_, u64> = PerCpuArray::try_from(map).map_err(|e| err("counters", e))?;
        let mut out = [0u64; counter::COUNT];
        for (i, o) in out.iter_mut().enumerate() {
            let v = a.get(&(i as u32), 0).map_err(|e| err("counters", e))?;
            *o = v.iter().sum();
        }
        Ok(out)
    }

    fn prog_fd(&mut self, side: Side) -> io::Result<i32> {
        let prog = self.xdp(side)?;
        let fd = prog.fd().map_err(|e| err(side.program(), e))?;
        Ok(fd.as_fd().as_raw_fd())
    }

    /// Runs `side`'s program `repeat` times on `frame` (not live): the
    /// kernel's mean time per run, in nanoseconds.
    pub fn time_run(&mut self, side: Side, frame: &[u8], repeat: u32) -> io::Result<u32> {
        let fd = self.prog_fd(side)?;
        let mut out = vec![0u8; 4096];
        Ok(test_run(fd, frame, &mut out, repeat, 0)?.duration)
    }

    /// Runs `side`'s program once on `frame` (`BPF_PROG_TEST_RUN`): the
    /// action and the frame as the program left it.
    pub fn test_run(&mut self, side: Side, frame: &[u8]) -> io::Result<(u32, Vec<u8>)> {
        let fd = self.prog_fd(side)?;
        let mut out = vec![0u8; 4096];
        let r = test_run(fd, frame, &mut out, 1, 0)?;
        out.truncate(r.size_out as usize);
        Ok((r.retval, out))
    }

    /// Runs `side`'s program `repeat` times on `frame` as live frames
    /// (`BPF_F_TEST_XDP_LIVE_FRAMES`): redirects really transmit, as
    /// xdp-trafficgen does. Returns the kernel's mean time per run (ns).
    pub fn live_frames(&mut self, side: Side, frame: &[u8], repeat: u32) -> io::Result<u32> {
        let fd = self.prog_fd(side)?;
        let mut out = [0u8; 0];
        let r = test_run(fd, frame, &mut out, repeat, BPF_F_TEST_XDP_LIVE_FRAMES)?;
        Ok(r.duration)
    }
}

/// A program that passes every frame, attached to one interface (in the
/// caller's network namespace) until dropped: what a veth needs on its
/// receiving end to take frames another interface's XDP program redirects
/// into it (or GRO on, where ethtool is there).
pub struct PassProgram {
    _ebpf: Ebpf,
}

impl PassProgram {
    pub fn attach(ifindex: u32) -> io::Result<PassProgram> {
        let obj = object().map_err(|e| io::Error::new(io::ErrorKind::Unsupported, e))?;
        let mut ebpf = Ebpf::load(obj).map_err(|e| err("loading the XDP object", e))?;
        let prog: &mut Xdp = ebpf
            .program_mut("xdp_pass")
            .ok_or_else(|| err("xdp_pass", "missing from the object"))?
            .try_into()
            .map_err(|e| err("xdp_pass", e))?;
        prog.load().map_err(|e| err("xdp_pass", e))?;
        prog.attach_to_if_index(ifindex, XdpFlags::DRV_MODE)
            .map_err(|e| err("attaching xdp_pass", e))?;
        Ok(PassProgram { _ebpf: ebpf })
    }
}

const BPF_PROG_TEST_RUN: libc::c_long = 10;
const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;

/// `union bpf_attr`'s `test` member (linux/bpf.h).
#[repr(C)]
#[derive(Default)]
struct TestAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    _pad: u32,
}

struct TestResult {
    retval: u32,
    size_out: u32,
    duration: u32,
}

fn test_run(
    fd: i32,
    data: &[u8],
    out: &mut [u8],
    repeat: u32,
    flags: u32,
) -> io::Result<TestResult> {
    let mut attr = TestAttr {
        prog_fd: fd as u32,
        data_size_in: data.len() as u32,
        data_size_out: out.len() as u32,
        data_in: data.as_ptr() as u64,
        data_out: if out.is_empty() {
            0
        } else {
            out.as_mut_ptr() as u64
        },
        repeat,
        flags,
        ..TestAttr::default()
    };
    // SAFETY: attr is a valid bpf_attr prefix of the size passed; data_in
    // and data_out point to buffers of the sizes given, alive for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_PROG_TEST_RUN,
            &mut attr as *mut TestAttr,
            std::mem::size_of::<TestAttr>(),
        )
    };
    if r < 0 {
        return Err(err("BPF_PROG_TEST_RUN", io::Error::last_os_error()));
    }
    Ok(TestResult {
        retval: attr.retval,
        size_out: attr.data_size_out,
        duration: attr.duration,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_is_laid_out_as_the_c() {
        // The verifier's log shows the map's value size: 464.
        assert_eq!(std::mem::size_of::<RelayCfg>(), 464);
        let c = RelayCfg::default();
        let base = &c as *const _ as usize;
        assert_eq!(&c.vni as *const _ as usize - base, 36);
        assert_eq!(&c.local_addr as *const _ as usize - base, 44);
        assert_eq!(&c.hdr60 as *const _ as usize - base, 60);
    }
}
