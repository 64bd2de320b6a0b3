//! Programs CEE DCB on one interface through dcbnl the way the daemon does,
//! commits it, reads it back and prints what the driver holds.
//!
//! ```text
//! dcbnl_probe IFNAME
//! ```
//!
//! Sets DCB on, PFC on priorities 3 and 4, PFC state on, priority groups
//! 0-3 -> PG 0 (25%), 4-6 -> PG 1 (75%), 7 -> strict (PGID 15), then SET_ALL.
//! On a veth the first request fails with "does not support DCB netlink":
//! the kernel's own answer. Under lossless-testkit's emulated DCB driver,
//! which plays a DCB-capable driver in-process, it shows that driver's state
//! (the .so is built into target/ by lossless-testkit's build script):
//!
//! ```text
//! LD_PRELOAD=target/debug/build/lossless-testkit-*/out/liblossless_dcbdrv.so \
//!     LOSSLESS_DCBDRV_IFACES=va LOSSLESS_DCBDRV_DIR=/tmp/st \
//!     ip netns exec NS target/debug/examples/dcbnl_probe va
//! ```

use lossless_sys::dcbnl::{DcbError, Dcbnl, PfcSetting, PgConfig, PgSetting};

/// PFC on priorities 3 and 4.
pub const PFC: PfcSetting = [false, false, false, true, true, false, false, false];

/// Priorities 0-3 in PG 0, 4-6 in PG 1, 7 strict; PG 0 25%, PG 1 75%.
pub const PG: PgSetting = PgSetting {
    pgid: [0, 0, 0, 0, 1, 1, 1, 15],
    percent: [25, 75, 0, 0, 0, 0, 0, 0],
};

/// What the driver reports after programming.
#[derive(Debug)]
pub struct Report {
    pub set_all: u8,
    pub state: bool,
    pub pfc: PfcSetting,
    pub pfc_state: bool,
    pub pg_tx: PgConfig,
    pub pg_rx: PgConfig,
}

/// Programs [`PFC`] and [`PG`] on `ifname`, commits, reads back.
pub fn run(ifname: &str) -> Result<Report, DcbError> {
    let mut d = Dcbnl::open()?;
    d.set_state(ifname, true)?;
    d.set_pfc(ifname, PFC)?;
    d.set_pfc_state(ifname, true)?;
    d.set_pg(ifname, &PG)?;
    let set_all = d.set_all(ifname)?;
    Ok(Report {
        set_all,
        state: d.get_state(ifname)?,
        pfc: d.get_pfc(ifname)?,
        pfc_state: d.get_pfc_state(ifname)?,
        pg_tx: d.get_pg_tx(ifname)?,
        pg_rx: d.get_pg_rx(ifname)?,
    })
}

fn bits(v: &[bool]) -> String {
    v.iter().map(|&b| if b { '1' } else { '0' }).collect()
}

pub fn print(r: &Report) {
    println!("set_all status: {}", r.set_all);
    println!("dcb state:      {}", u8::from(r.state));
    println!("pfc state:      {}", u8::from(r.pfc_state));
    println!("pfc up:         {}", bits(&r.pfc));
    for (dir, pg) in [("tx", &r.pg_tx), ("rx", &r.pg_rx)] {
        let cee = pg.to_cee();
        println!("pg {dir} pgid:     {:x?}", cee.pgid);
        println!("pg {dir} percent:  {:?}", cee.percent);
        for (t, tc) in pg.tc.iter().enumerate() {
            println!(
                "pg {dir} tc{t}: pgid {} up_map {:08b} strict {} bw {}%",
                tc.pgid, tc.up_map, tc.strict_prio, tc.bw_pct
            );
        }
    }
}

#[allow(dead_code)]
fn main() {
    let Some(ifname) = std::env::args().nth(1) else {
        eprintln!("usage: dcbnl_probe IFNAME");
        std::process::exit(2);
    };
    match run(&ifname) {
        Ok(r) => print(&r),
        Err(e) => {
            eprintln!("dcbnl_probe: {e}");
            std::process::exit(1);
        }
    }
}
