//! Test support for the lossless workspace (a dev-dependency only, never published):
//!
//! * [`oracle`]: the external oracles (tshark, lldpad, lldpd, OpenSM, promtool,
//!   systemd-analyze, gcc, buildah, podman, kubectl, kubernetes-validate, root for
//!   namespaces), one availability check each, and the one rule for a missing one:
//!   [`require`] fails the test naming the package (Debian's, or PyPI's pinned), or
//!   skips it with `LOSSLESS_SKIP_ORACLES=1`;
//! * [`netns`]: network namespaces, veth pairs, temporary directories, polling;
//! * [`fanout`]: many veth pairs between two namespaces (a daemon with many ports);
//! * [`fault`]: faults of the disk under a daemon's state directory (a directory flush
//!   that fails, a tiny tmpfs or a read-only bind in a mount namespace of its own);
//! * [`clock`]: a step of the wall clock as one process sees it (a preloaded
//!   library), the kernel's clock and receive stamps untouched;
//! * [`tshark`]: tshark as a decoding oracle (fields of every frame of a capture) and
//!   live captures;
//! * [`pcap`]: capture files written from a test's frames;
//! * [`dcbdrv`]: an emulated DCB-capable driver, a C library preloaded into a process
//!   (lldpad, losslessd, a probe, iproute2's `dcb`) that answers dcbnl as the kernel does
//!   for the driver it models (generic, mlx5, ice, i40e, bnxt, hns3, ixgbe), and ethtool
//!   (pause, private flags, statistics) as that driver answers it, one NIC per
//!   interface shared by the processes that preload it with the same directory, and
//!   what it recorded;
//! * [`sysfs`]: an emulated host tree of RoCE NICs (sysfs, configfs, debugfs) laid as
//!   the kernel lays them per driver model and flavour (inbox, MLNX_OFED), with the
//!   kernel's write semantics enforced by the emulated driver library;
//! * [`lldpad`]: Debian's lldpad as a DCBX peer on veth, under that driver;
//! * [`lldpd`]: Debian's lldpd as an LLDP neighbour on veth, and its view of us;
//! * [`inject`]: LLDPDUs from a device on the link that only the far end hears;
//! * [`promtool`]: promtool as the oracle of the metrics' text format, and of the
//!   Prometheus rules;
//! * [`systemd`]: systemd-analyze as the oracle of the unit file, strace's view of
//!   what a run of the daemon asks of the kernel.
//! * [`metrics`]: scraping a metrics endpoint inside a namespace, reading a series;
//! * [`certs`]: a certificate authority and the certificates a test signs with it
//!   (rcgen), for TLS endpoints and client certificates;
//! * [`bench`]: the machine line every benchmark prints.
//! * [`opensm`]: OpenSM on an ibsim fabric, and the diags that ask what it answers and
//!   programmed.
//!
//! The crate's README says how the pieces work and what they cannot do.

pub mod bench;
pub mod certs;
pub mod clock;
pub mod dcbdrv;
pub mod fanout;
pub mod fault;
pub mod flood;
pub mod inject;
pub mod lldpad;
pub mod lldpd;
pub mod metrics;
pub mod netns;
pub mod opensm;
pub mod oracle;
pub mod pcap;
pub mod promtool;
pub mod sysfs;
pub mod systemd;
pub mod tshark;

pub use bench::{load, machine, thread_cpu_time};
pub use dcbdrv::{
    dcb_tool, ethtool_tool, output_text, set_stat, DriverState, LogEntry, Model, ShimEnv,
};
pub use fanout::{batch_ip, Fanout};
pub use flood::{Flood, FLOOD_MSAPS};
pub use inject::{lldpdu, pfc_frame, xoff_frame, Injector};
pub use lldpad::{
    dcbtool_field, dcbtool_fields, lldptool_app_config, lldptool_apps, lldptool_fields, LldpadApp,
    LldpadPeer, Mode,
};
pub use lldpd::Lldpd;
pub use metrics::{
    curl, http_get, http_request, metric, metric_value, scrape_metrics, CurlReply, HttpReply,
};
pub use netns::{packet_sockets, sh, unique, wait_every, wait_for, Netns, Pair, TempDir, Veth};
pub use opensm::{OpenSm, PathRecord, SimInput, VlArbRead};
pub use oracle::{require, Oracle};
pub use pcap::{read_frames, write_pcap, write_pcap_linktype, write_pcapng};
pub use promtool::{exposition_names, exposition_samples, promtool_check_metrics, promtool_run};
pub use sysfs::{Flavour, HostTree, Port};
pub use systemd::{
    syscall_set, systemd_security, systemd_verify, systemd_verify_with_dropins,
    unit_syscalls_allowed, unit_values, Trace,
};
pub use tshark::{tshark_fields, Capture, Fields};
