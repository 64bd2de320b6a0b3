//! Test support for the lossless workspace (a dev-dependency only, never published):
//!
//! * [`netns`]: network namespaces, veth pairs, temporary directories, polling;
//! * [`fanout`]: many veth pairs between two namespaces (a daemon with many ports);
//! * [`tshark`]: tshark as a decoding oracle (fields of every frame of a capture) and
//!   live captures;
//! * [`dcbdrv`]: an emulated DCB-capable driver, a C library preloaded into a process
//!   (lldpad, losslessd, a probe) that answers dcbnl as the kernel does for a driver
//!   with the CEE and IEEE 802.1Qaz ops, and what it recorded;
//! * [`lldpad`]: Debian's lldpad as a DCBX peer on veth, under that driver;
//! * [`lldpd`]: Debian's lldpd as an LLDP neighbour on veth, and its view of us;
//! * [`promtool`]: promtool as the oracle of the metrics' text format, and of the
//!   Prometheus rules;
//! * [`systemd`]: systemd-analyze as the oracle of the unit file, strace's view of
//!   what a run of the daemon asks of the kernel.
//!
//! The crate's README says how the pieces work and what they cannot do.

pub mod dcbdrv;
pub mod fanout;
pub mod lldpad;
pub mod lldpd;
pub mod netns;
pub mod promtool;
pub mod systemd;
pub mod tshark;

pub use dcbdrv::{DriverState, LogEntry, ShimEnv};
pub use fanout::{batch_ip, Fanout};
pub use lldpad::{
    dcbtool_field, dcbtool_fields, lldptool_app_config, lldptool_apps, lldptool_fields, LldpadApp,
    LldpadPeer, Mode,
};
pub use lldpd::{lldpd_available, Lldpd};
pub use netns::{can_run, sh, unique, wait_every, wait_for, Netns, Pair, TempDir, Veth};
pub use promtool::{
    exposition_names, exposition_samples, promtool_available, promtool_check_metrics, promtool_run,
};
pub use systemd::{
    strace_available, syscall_set, systemd_analyze_available, systemd_security, systemd_verify,
    unit_syscalls_allowed, unit_values, Trace,
};
pub use tshark::{tshark_available, tshark_fields, Capture, Fields};
