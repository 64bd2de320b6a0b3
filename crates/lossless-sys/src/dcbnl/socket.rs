//! The blocking dcbnl socket: the only part of dcbnl that does I/O.

use std::io;
use std::time::{Duration, Instant};

use super::app::{AppSelector, DcbApp};
use super::buffer::{encode_set_dcb_buffer, DcbBuffer};
use super::cee::*;
use super::dcbx::{encode_get_dcbx, encode_set_dcbx, DcbxMode};
use super::error::DcbError;
use super::ieee::{
    decode_ieee_reply, decode_ieee_state, encode_del_ieee_apps, encode_get_ieee,
    encode_set_app_trust, encode_set_ieee, encode_set_ieee_apps, encode_set_ieee_ets,
    encode_set_ieee_pfc, IeeeConfig, IeeeEts, IeeeSet, IeeeState,
};
use super::msg::{decode_u8_reply, DcbCmd};

/// Each APP entry with the driver's answer to it.
pub type AppAnswers = Vec<(DcbApp, Result<(), DcbError>)>;
use crate::netlink::NlSocket;

/// How long [`Dcbnl`] waits for the kernel's answer.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(1);

/// A blocking `NETLINK_ROUTE` socket for dcbnl requests, one at a time, each
/// waiting at most [`REPLY_TIMEOUT`] for its answer. Works on interfaces of
/// the network namespace the socket was opened in.
#[derive(Debug)]
pub struct Dcbnl {
    sock: NlSocket,
    seq: u32,
    buf: Vec<u8>,
}

impl Dcbnl {
    pub fn open() -> io::Result<Dcbnl> {
        let sock = NlSocket::open(false, 0)?;
        sock.set_rcvtimeo(REPLY_TIMEOUT)?;
        Ok(Dcbnl {
            sock,
            seq: 0,
            buf: vec![0; 16 << 10],
        })
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1).max(1);
        self.seq
    }

    /// Sends the request `encode` builds for a fresh sequence number and
    /// waits for its answer, which `decode` finds in a datagram (skipping
    /// stale replies to earlier requests).
    fn transact<T>(
        &mut self,
        cmd: DcbCmd,
        ifname: &str,
        encode: impl FnOnce(u32) -> Result<Vec<u8>, DcbError>,
        decode: impl Fn(&[u8], u32) -> Result<Option<T>, DcbError>,
    ) -> Result<T, DcbError> {
        let seq = self.next_seq();
        let req = encode(seq)?;
        let io_err = |source| DcbError::Io {
            cmd: Some(cmd),
            source,
        };
        let timeout = || DcbError::Timeout {
            ifname: ifname.to_owned(),
            cmd,
            seq,
            waited: REPLY_TIMEOUT,
        };
        self.sock.send(&req).map_err(io_err)?;
        let deadline = Instant::now() + REPLY_TIMEOUT;
        loop {
            let n = match self.sock.recv(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(timeout()),
                Err(e) => return Err(io_err(e)),
            };
            if let Some(v) = decode(self.buf.get(..n).unwrap_or(&[]), seq)? {
                return Ok(v);
            }
            if Instant::now() >= deadline {
                return Err(timeout());
            }
        }
    }

    fn u8_cmd(
        &mut self,
        cmd: DcbCmd,
        ifname: &str,
        encode: impl FnOnce(u32) -> Result<Vec<u8>, DcbError>,
    ) -> Result<u8, DcbError> {
        self.transact(cmd, ifname, encode, |b, seq| {
            decode_u8_reply(b, seq, cmd, ifname)
        })
    }

    fn set_cmd(
        &mut self,
        cmd: DcbCmd,
        ifname: &str,
        encode: impl FnOnce(u32) -> Result<Vec<u8>, DcbError>,
    ) -> Result<(), DcbError> {
        match self.u8_cmd(cmd, ifname, encode)? {
            0 => Ok(()),
            // `dcbnl_ieee_set`/`dcbnl_ieee_del` put the driver's return in the status
            // byte: a negative errno is >= 128 there, and a positive return (ice's
            // `ice_dcbnl_setapp` answers ICE_DCB_NO_HW_CHG = 1 or ICE_DCB_HW_CHG = 2
            // when the entry went through) is the driver's success, not a refusal.
            1..=127 if matches!(cmd, DcbCmd::IeeeSet | DcbCmd::IeeeDel) => Ok(()),
            status => Err(DcbError::Status {
                ifname: ifname.to_owned(),
                cmd,
                status,
            }),
        }
    }

    /// `DCB_CMD_GSTATE`: whether DCB is on. On a device without DCB support
    /// (veth) this is [`DcbError::Unsupported`]: the probe for DCB capability.
    pub fn get_state(&mut self, ifname: &str) -> Result<bool, DcbError> {
        Ok(self.u8_cmd(DcbCmd::GetState, ifname, |s| encode_get_state(s, ifname))? != 0)
    }

    /// `DCB_CMD_SSTATE`: switches DCB on or off.
    pub fn set_state(&mut self, ifname: &str, on: bool) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::SetState, ifname, |s| {
            encode_set_state(s, ifname, on)
        })
    }

    /// `DCB_CMD_PFC_SCFG`: PFC per priority (takes effect with
    /// [`Dcbnl::set_all`]).
    pub fn set_pfc(&mut self, ifname: &str, priorities: PfcSetting) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::PfcSetCfg, ifname, |s| {
            encode_set_pfc(s, ifname, priorities)
        })
    }

    /// `DCB_CMD_PFC_GCFG`: PFC per priority as the driver has it.
    pub fn get_pfc(&mut self, ifname: &str) -> Result<PfcSetting, DcbError> {
        self.transact(
            DcbCmd::PfcGetCfg,
            ifname,
            |s| encode_get_pfc(s, ifname),
            |b, s| decode_pfc_reply(b, s, ifname),
        )
    }

    /// `DCB_CMD_PFC_SSTATE`: PFC on or off as a whole.
    pub fn set_pfc_state(&mut self, ifname: &str, on: bool) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::PfcSetState, ifname, |s| {
            encode_set_pfc_state(s, ifname, on)
        })
    }

    /// `DCB_CMD_PFC_GSTATE`.
    pub fn get_pfc_state(&mut self, ifname: &str) -> Result<bool, DcbError> {
        Ok(self.u8_cmd(DcbCmd::PfcGetState, ifname, |s| {
            encode_get_pfc_state(s, ifname)
        })? != 0)
    }

    /// Programs a CEE priority-group setting for transmit and receive
    /// (`DCB_CMD_PGTX_SCFG`, then `DCB_CMD_PGRX_SCFG`), mapped as
    /// [`PgConfig::from_cee`] does; takes effect with [`Dcbnl::set_all`].
    pub fn set_pg(&mut self, ifname: &str, pg: &PgSetting) -> Result<(), DcbError> {
        let cfg = PgConfig::from_cee(pg)?;
        self.set_pg_config(ifname, PgDir::Tx, &cfg)?;
        self.set_pg_config(ifname, PgDir::Rx, &cfg)
    }

    /// Programs one direction's traffic classes as given.
    pub fn set_pg_config(
        &mut self,
        ifname: &str,
        dir: PgDir,
        cfg: &PgConfig,
    ) -> Result<(), DcbError> {
        self.set_cmd(dir.set_cmd(), ifname, |s| {
            encode_set_pg(s, ifname, dir, cfg)
        })
    }

    /// `DCB_CMD_PGTX_GCFG`: the transmit priority groups as the driver has
    /// them ([`PgConfig::to_cee`] for the CEE view).
    pub fn get_pg_tx(&mut self, ifname: &str) -> Result<PgConfig, DcbError> {
        self.get_pg(ifname, PgDir::Tx)
    }

    /// `DCB_CMD_PGRX_GCFG`.
    pub fn get_pg_rx(&mut self, ifname: &str) -> Result<PgConfig, DcbError> {
        self.get_pg(ifname, PgDir::Rx)
    }

    fn get_pg(&mut self, ifname: &str, dir: PgDir) -> Result<PgConfig, DcbError> {
        self.transact(
            dir.get_cmd(),
            ifname,
            |s| encode_get_pg(s, ifname, dir),
            |b, s| decode_pg_reply(b, s, dir, ifname),
        )
    }

    /// `DCB_CMD_IEEE_SET` of the PFC object: enabled priorities and the delay
    /// allowance in bit times (see [`encode_set_ieee_pfc`]).
    pub fn set_ieee_pfc(&mut self, ifname: &str, enabled: u8, delay: u16) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::IeeeSet, ifname, |s| {
            encode_set_ieee_pfc(s, ifname, enabled, delay)
        })
    }

    /// `DCB_CMD_IEEE_GET`: the PFC object and the DCB buffer as the driver
    /// reports them (each `None` when the driver has no op for it).
    pub fn get_ieee(&mut self, ifname: &str) -> Result<IeeeConfig, DcbError> {
        self.transact(
            DcbCmd::IeeeGet,
            ifname,
            |s| encode_get_ieee(s, ifname),
            |b, s| decode_ieee_reply(b, s, ifname),
        )
    }

    /// `DCB_CMD_IEEE_SET` of the DCB buffer. The kernel answers 0 even when
    /// the driver has no `dcbnl_setbuffer` (it drops the attribute), so read
    /// the buffer back with [`Dcbnl::get_ieee`] to know what the driver took.
    pub fn set_dcb_buffer(&mut self, ifname: &str, buffer: &DcbBuffer) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::IeeeSet, ifname, |s| {
            encode_set_dcb_buffer(s, ifname, buffer)
        })
    }

    /// `DCB_CMD_SET_ALL`: commits what was set. Returns the driver's status:
    /// [`SET_ALL_CHANGED_RESET`] (0), [`SET_ALL_NO_CHANGE`] (1) or
    /// [`SET_ALL_CHANGED_NO_RESET`] (2); anything else is a driver failure
    /// the caller may report.
    pub fn set_all(&mut self, ifname: &str) -> Result<u8, DcbError> {
        self.u8_cmd(DcbCmd::SetAll, ifname, |s| encode_set_all(s, ifname))
    }

    /// `DCB_CMD_IEEE_GET`, all of it: ETS, MAXRATE, PFC (with its counters),
    /// the DCB buffer, the APP table, the trust order, the peer's objects
    /// (firmware agents) and the DCBX mode, each `None` when the driver does
    /// not report it.
    pub fn get_ieee_state(&mut self, ifname: &str) -> Result<IeeeState, DcbError> {
        self.transact(
            DcbCmd::IeeeGet,
            ifname,
            |s| encode_get_ieee(s, ifname),
            |b, s| decode_ieee_state(b, s, ifname),
        )
    }

    /// `DCB_CMD_IEEE_SET` of whatever `set` holds, in one request (see
    /// [`encode_set_ieee`]). The driver's refusal is [`DcbError::Status`]
    /// with its errno; objects before the refused one were applied.
    pub fn set_ieee(&mut self, ifname: &str, set: &IeeeSet) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::IeeeSet, ifname, |s| encode_set_ieee(s, ifname, set))
    }

    /// `DCB_CMD_IEEE_SET` of ETS (checked with [`IeeeEts::check`]). A
    /// kernel passes it only to a driver with `ieee_setets`; read back with
    /// [`Dcbnl::get_ieee_state`] to know the driver took it.
    pub fn set_ieee_ets(&mut self, ifname: &str, ets: &IeeeEts) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::IeeeSet, ifname, |s| {
            encode_set_ieee_ets(s, ifname, ets)
        })
    }

    /// Sets the PFC-enabled priorities and keeps the delay allowance the
    /// driver holds (read with `IEEE_GET` first): for a change of PFC that
    /// must not undo the headroom's delay. Returns the delay kept.
    /// [`DcbError::NotReported`] when the driver reports no PFC object.
    pub fn set_ieee_pfc_keep_delay(&mut self, ifname: &str, enabled: u8) -> Result<u16, DcbError> {
        let Some(pfc) = self.get_ieee_state(ifname)?.pfc else {
            return Err(DcbError::NotReported {
                ifname: ifname.to_owned(),
                cmd: DcbCmd::IeeeGet,
                what: "DCB_ATTR_IEEE_PFC",
                why: "it has no ieee_getpfc, so the delay to keep is unknown",
            });
        };
        self.set_ieee_pfc(ifname, enabled, pfc.delay)?;
        Ok(pfc.delay)
    }

    /// Adds the APP entries the kernel does not hold yet for `ifname` (read
    /// with `IEEE_GET` first, so an entry already there, ours or another
    /// tool's, is left alone instead of failing with `EEXIST`), in one
    /// `IEEE_SET`. Returns how many were added (0 for an empty list, with
    /// nothing sent).
    pub fn add_ieee_apps(&mut self, ifname: &str, apps: &[DcbApp]) -> Result<usize, DcbError> {
        if apps.is_empty() {
            return Ok(0);
        }
        super::app::check_apps(apps)?;
        let have = self.get_ieee_state(ifname)?.apps;
        let mut add: Vec<DcbApp> = Vec::new();
        for app in apps {
            if !have.contains(app) && !add.contains(app) {
                add.push(*app);
            }
        }
        if add.is_empty() {
            return Ok(0);
        }
        self.set_cmd(DcbCmd::IeeeSet, ifname, |s| {
            encode_set_ieee_apps(s, ifname, &add)
        })?;
        Ok(add.len())
    }

    /// Adds these APP entries one `IEEE_SET` each, so that a driver refusing one
    /// (mlx5, ice and hns3 take DSCP entries only) leaves the others set, and a
    /// driver's positive answer (ice) cannot stop the rest: `dcbnl_ieee_set` stops
    /// at the first entry whose `ieee_setapp` answers anything but 0. Entries the
    /// kernel already holds (read with one `IEEE_GET` first) are answered `Ok`
    /// without a request: `held` is the kernel's table as the caller read it (one
    /// `IEEE_GET` for a whole programming). The outer error is a failure before any
    /// entry was sent.
    pub fn add_ieee_apps_each(
        &mut self,
        ifname: &str,
        apps: &[DcbApp],
        held: &[DcbApp],
    ) -> Result<AppAnswers, DcbError> {
        self.each_app(apps, held, |d, app, held| {
            if held {
                return Ok(());
            }
            d.set_cmd(DcbCmd::IeeeSet, ifname, |s| {
                encode_set_ieee_apps(s, ifname, std::slice::from_ref(app))
            })
        })
    }

    /// Removes these APP entries, one `IEEE_DEL` each, each answered on its own (an
    /// entry the kernel no longer holds, by `held`, is `Ok`: it is gone, which was the
    /// aim).
    pub fn del_ieee_apps_each(
        &mut self,
        ifname: &str,
        apps: &[DcbApp],
        held: &[DcbApp],
    ) -> Result<AppAnswers, DcbError> {
        self.each_app(apps, held, |d, app, held| {
            if held {
                d.del_ieee_app(ifname, app)
            } else {
                Ok(())
            }
        })
    }

    /// Runs `one` for each distinct entry of `apps` (checked first), telling it
    /// whether the kernel holds the entry (`have`).
    fn each_app(
        &mut self,
        apps: &[DcbApp],
        have: &[DcbApp],
        mut one: impl FnMut(&mut Self, &DcbApp, bool) -> Result<(), DcbError>,
    ) -> Result<AppAnswers, DcbError> {
        if apps.is_empty() {
            return Ok(Vec::new());
        }
        super::app::check_apps(apps)?;
        let mut out: AppAnswers = Vec::new();
        for app in apps {
            if out.iter().any(|(a, _)| a == app) {
                continue;
            }
            let r = one(self, app, have.contains(app));
            out.push((*app, r));
        }
        Ok(out)
    }

    /// Removes these APP entries, one `IEEE_DEL` per entry, and only those
    /// the kernel holds (read with `IEEE_GET` first): never a blanket delete,
    /// so entries another tool set stay. Returns how many were removed; stops at
    /// the first refusal (those before it are gone). An empty list sends
    /// nothing.
    pub fn del_ieee_apps(&mut self, ifname: &str, apps: &[DcbApp]) -> Result<usize, DcbError> {
        if apps.is_empty() {
            return Ok(0);
        }
        super::app::check_apps(apps)?;
        let have = self.get_ieee_state(ifname)?.apps;
        let mut removed: Vec<DcbApp> = Vec::new();
        for app in apps {
            if have.contains(app) && !removed.contains(app) {
                self.del_ieee_app(ifname, app)?;
                removed.push(*app);
            }
        }
        Ok(removed.len())
    }

    /// One `DCB_CMD_IEEE_DEL` of exactly this entry (`ENOENT` as the status
    /// when the kernel does not hold it).
    pub fn del_ieee_app(&mut self, ifname: &str, app: &DcbApp) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::IeeeDel, ifname, |s| {
            encode_del_ieee_apps(s, ifname, std::slice::from_ref(app))
        })
    }

    /// Sets the selector trust order (say DSCP, then PCP) where the driver
    /// has one: `IEEE_GET` first, and [`DcbError::NotReported`] without
    /// sending anything when it reports no trust table (no
    /// `dcbnl_getapptrust`, or a kernel before Linux 6.2, which would drop
    /// the attribute without a word).
    pub fn set_app_trust(&mut self, ifname: &str, order: &[AppSelector]) -> Result<(), DcbError> {
        super::app::check_trust(order)?;
        let has_table = self.get_ieee_state(ifname)?.trust.is_some();
        self.set_app_trust_known(ifname, order, has_table)
    }

    /// [`Dcbnl::set_app_trust`] where the caller read `IEEE_GET` already: `has_table`,
    /// the driver reports a trust table.
    pub fn set_app_trust_known(
        &mut self,
        ifname: &str,
        order: &[AppSelector],
        has_table: bool,
    ) -> Result<(), DcbError> {
        super::app::check_trust(order)?;
        if !has_table {
            return Err(DcbError::NotReported {
                ifname: ifname.to_owned(),
                cmd: DcbCmd::IeeeGet,
                what: "DCB_ATTR_DCB_APP_TRUST_TABLE",
                why: "it has no selector trust table to set",
            });
        }
        self.set_cmd(DcbCmd::IeeeSet, ifname, |s| {
            encode_set_app_trust(s, ifname, order)
        })
    }

    /// `DCB_CMD_GDCBX`: the DCBX mode.
    pub fn get_dcbx(&mut self, ifname: &str) -> Result<DcbxMode, DcbError> {
        let v = self.u8_cmd(DcbCmd::GetDcbx, ifname, |s| encode_get_dcbx(s, ifname))?;
        Ok(DcbxMode(v))
    }

    /// `DCB_CMD_SDCBX`: sets the DCBX mode (checked with
    /// [`DcbxMode::check`]); a non-zero status is the driver's refusal.
    pub fn set_dcbx(&mut self, ifname: &str, mode: DcbxMode) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::SetDcbx, ifname, |s| {
            encode_set_dcbx(s, ifname, mode)
        })
    }
}
