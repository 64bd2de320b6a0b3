//! `xdp_gateway`'s maps: the PE's MACs it accepts PFC from (`gateway`), and
//! the last frame it accepted on each CPU (`gateway_last`).

use std::io;

use aya::maps::{Array, PerCpuArray};

use super::{err, Side, XdpRelay};

/// `struct sources` of the C: who may send PFC.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sources {
    pub port_mac: [u8; 6],
    pub system_mac: [u8; 6],
    pub has_system_mac: u8,
}

// SAFETY: plain bytes, repr(C), no padding (13 octets, alignment 1).
unsafe impl aya::Pod for Sources {}

/// `struct gateway_last` of the C.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LastRaw {
    at_ns: u64,
    src: [u8; 6],
    class_enable: u8,
    _pad: u8,
    quanta: [u8; 16],
}

// SAFETY: plain bytes and integers, repr(C), padding made explicit.
unsafe impl aya::Pod for LastRaw {}

/// The last frame `xdp_gateway` accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GatewayLast {
    /// On the programs' clock (`bpf_ktime_get_ns`, or the `clock` map's).
    pub at_ns: u64,
    pub src: [u8; 6],
    pub class_enable: u8,
    /// Pause times of priorities 0..7, as the frame carried them.
    pub quanta: [u16; 8],
}

impl XdpRelay {
    /// Loads `xdp_gateway` alone (the verifier runs here) and writes `s`.
    pub fn load_gateway(s: &Sources) -> io::Result<XdpRelay> {
        let mut relay = XdpRelay::load_sides(&[Side::Gateway])?;
        relay.set_gateway(s)?;
        Ok(relay)
    }

    /// Sets the MACs `xdp_gateway` accepts PFC from.
    pub fn set_gateway(&mut self, s: &Sources) -> io::Result<()> {
        let map = self
            .ebpf
            .map_mut("gateway")
            .ok_or_else(|| err("gateway", "no such map"))?;
        let mut a: Array<_, Sources> = Array::try_from(map).map_err(|e| err("gateway", e))?;
        a.set(0, s, 0).map_err(|e| err("gateway", e))
    }

    /// The latest frame `xdp_gateway` accepted on any CPU, if any.
    pub fn gateway_last(&self) -> io::Result<Option<GatewayLast>> {
        let map = self
            .ebpf
            .map("gateway_last")
            .ok_or_else(|| err("gateway_last", "no such map"))?;
        let a: PerCpuArray<_, LastRaw> =
            PerCpuArray::try_from(map).map_err(|e| err("gateway_last", e))?;
        let per_cpu = a.get(&0, 0).map_err(|e| err("gateway_last", e))?;
        Ok(per_cpu
            .iter()
            .filter(|l| l.at_ns != 0)
            .max_by_key(|l| l.at_ns)
            .map(|l| GatewayLast {
                at_ns: l.at_ns,
                src: l.src,
                class_enable: l.class_enable,
                quanta: std::array::from_fn(|i| {
                    u16::from_be_bytes([l.quanta[2 * i], l.quanta[2 * i + 1]])
                }),
            }))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_maps_are_laid_out_as_the_c() {
        assert_eq!(std::mem::size_of::<super::Sources>(), 13);
        assert_eq!(std::mem::size_of::<super::LastRaw>(), 32);
    }
}
