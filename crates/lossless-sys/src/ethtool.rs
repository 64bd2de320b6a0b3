//! A driver's statistics by name, as `ethtool -S` reads them: `ETHTOOL_GSSET_INFO` (how
//! many), `ETHTOOL_GSTRINGS` (their names) and `ETHTOOL_GSTATS` (their values) over the
//! `SIOCETHTOOL` ioctl. Used for the PFC counters drivers keep beyond dcbnl's (mlx5's
//! `rx_prio<N>_pause_duration`, `tx_pause_storm_error_events`, ...).

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::sys;
use crate::timestamp::ifreq_for;

// <linux/ethtool.h>
const ETHTOOL_GDRVINFO: u32 = 0x03;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSTATS: u32 = 0x1d;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETH_SS_STATS: u32 = 1;
const ETH_GSTRING_LEN: usize = 32;
/// The kernel writes as many entries as the driver counts at the time of the call,
/// which may have grown since we asked: room for this many more.
const SLACK: usize = 256;
/// More statistics than any driver has: a count above it is refused.
const MAX_STATS: u32 = 1 << 16;

/// A socket to ask drivers for their statistics.
#[derive(Debug)]
pub struct EthtoolStats {
    fd: OwnedFd,
}

impl EthtoolStats {
    pub fn open() -> io::Result<EthtoolStats> {
        Ok(EthtoolStats {
            fd: sys::socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?,
        })
    }

    /// `ioctl(SIOCETHTOOL)` with `buf` as the command's structure.
    fn ioctl(&self, ifname: &str, buf: &mut [u64]) -> io::Result<()> {
        let mut ifr = ifreq_for(ifname)?;
        ifr.ifr_ifru.ifru_data = buf.as_mut_ptr().cast::<libc::c_char>();
        // SAFETY: ifr names the interface and points at `buf`, which holds the
        // command's header and room for what the kernel writes after it (the count
        // asked for plus SLACK entries); both outlive the call.
        sys::cvt(unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::SIOCETHTOOL as _, &mut ifr) })?;
        Ok(())
    }

    /// The name of the interface's driver (`veth`, `mlx5_core`, `ice`), as
    /// `ethtool -i` shows it.
    pub fn driver(&self, ifname: &str) -> io::Result<String> {
        // struct ethtool_drvinfo { u32 cmd; char driver[32]; char version[32]; ... }:
        // 196 octets in all.
        let mut buf = [0u64; 25];
        write_u32(&mut buf, 0, ETHTOOL_GDRVINFO);
        self.ioctl(ifname, &mut buf)?;
        let bytes: Vec<u8> = buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let name = &bytes[4..4 + ETH_GSTRING_LEN];
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        Ok(String::from_utf8_lossy(&name[..end]).into_owned())
    }

    /// How many statistics the driver has (`EOPNOTSUPP`: it has none).
    pub fn count(&self, ifname: &str) -> io::Result<u32> {
        // struct ethtool_sset_info { u32 cmd; u32 reserved; u64 sset_mask; u32 data[]; }
        let mut buf = [0u64; 3];
        write_u32(&mut buf, 0, ETHTOOL_GSSET_INFO);
        buf[1] = 1u64 << ETH_SS_STATS;
        self.ioctl(ifname, &mut buf)?;
        if buf[1] & (1 << ETH_SS_STATS) == 0 {
            return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        }
        let n = read_u32(&buf, 16);
        if n > MAX_STATS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the driver reports {n} statistics"),
            ));
        }
        Ok(n)
    }

    /// The names of the `n` statistics.
    pub fn names(&self, ifname: &str, n: u32) -> io::Result<Vec<String>> {
        // struct ethtool_gstrings { u32 cmd; u32 string_set; u32 len; u8 data[]; }
        let room = n as usize + SLACK;
        let mut buf = vec![0u64; (12 + room * ETH_GSTRING_LEN).div_ceil(8)];
        write_u32(&mut buf, 0, ETHTOOL_GSTRINGS);
        write_u32(&mut buf, 4, ETH_SS_STATS);
        write_u32(&mut buf, 8, n);
        self.ioctl(ifname, &mut buf)?;
        let len = read_u32(&buf, 8) as usize;
        if len > room {
            return Err(grew(len, n));
        }
        let bytes = as_bytes(&buf);
        Ok((0..len)
            .map(|i| {
                let s = &bytes[12 + i * ETH_GSTRING_LEN..12 + (i + 1) * ETH_GSTRING_LEN];
                let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
                String::from_utf8_lossy(&s[..end]).into_owned()
            })
            .collect())
    }

    /// The values of the `n` statistics, in the order of [`Self::names`], read into
    /// `buf` (kept by the caller: a reading on a known driver allocates nothing).
    pub fn values<'b>(&self, ifname: &str, n: u32, buf: &'b mut Vec<u64>) -> io::Result<&'b [u64]> {
        // struct ethtool_stats { u32 cmd; u32 n_stats; u64 data[]; }
        let room = n as usize + SLACK;
        buf.clear();
        buf.resize(1 + room, 0);
        write_u32(buf, 0, ETHTOOL_GSTATS);
        write_u32(buf, 4, n);
        self.ioctl(ifname, buf)?;
        let got = read_u32(buf, 4) as usize;
        if got > room {
            return Err(grew(got, n));
        }
        Ok(&buf[1..1 + got])
    }
}

fn grew(got: usize, n: u32) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the driver's statistics grew from {n} to {got} during the call"),
    )
}

fn as_bytes(buf: &[u64]) -> &[u8] {
    // SAFETY: u64 has no padding and any byte is a valid u8; the slice covers exactly
    // the memory of `buf` and borrows it.
    unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), mem::size_of_val(buf)) }
}

fn write_u32(buf: &mut [u64], at: usize, v: u32) {
    // SAFETY: as in as_bytes, mutably; `at + 4` is within the buffer (callers write the
    // headers of buffers at least 16 bytes long).
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<u8>(), mem::size_of_val(buf))
    };
    bytes[at..at + 4].copy_from_slice(&v.to_ne_bytes());
}

fn read_u32(buf: &[u64], at: usize) -> u32 {
    let b = as_bytes(buf);
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_laid_out_as_the_kernel_reads_them() {
        let mut buf = vec![0u64; 3];
        write_u32(&mut buf, 0, ETHTOOL_GSTRINGS);
        write_u32(&mut buf, 4, ETH_SS_STATS);
        write_u32(&mut buf, 8, 7);
        let b = as_bytes(&buf);
        assert_eq!(&b[0..4], &0x1bu32.to_ne_bytes());
        assert_eq!(&b[4..8], &1u32.to_ne_bytes());
        assert_eq!(read_u32(&buf, 8), 7);
    }

    #[test]
    fn loopback_has_no_statistics() {
        let s = EthtoolStats::open().expect("socket");
        let e = s.count("lo").expect_err("lo has no ethtool statistics");
        assert_eq!(e.raw_os_error(), Some(libc::EOPNOTSUPP), "{e}");
    }
}
