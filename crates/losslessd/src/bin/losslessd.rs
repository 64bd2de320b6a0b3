//! losslessd: DCBX (IEEE 802.1Qaz and CEE), adaptive PFC headroom and the PFC relay on
//! Linux interfaces.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use lossless_node::config::unmatched::{describe, unmatched_interfaces, unmatched_patterns};
use lossless_node::config::DaemonConfig;
use losslessd::config_file::{ConfigSource, DEFAULT_CONFIG_PATH};
use losslessd::logging::{self, LogFormat, Stderr};
use losslessd::runtime::{self, Options};

/// The lossless daemon: negotiates DCBX with the link peer of every port, over
/// LLDP: IEEE 802.1Qaz (ETS, PFC, application priorities incl. DSCP) or the
/// pre-standard CEE DCBX (priority groups, PFC, applications), whichever the peer
/// speaks (dcbx.mode = "auto", the default).
///
/// Ports are the interfaces named with --interface plus those the
/// configuration file's [ports."..."] sections select (exact names or globs).
/// Without a file every port runs the defaults: DCBX on (auto), every feature
/// enabled, advertised and willing, PFC on no priority, nothing programmed
/// into the NIC.
///
/// Control it with `lossless status`, `lossless dcbx show|set`, `lossless
/// neighbors`, `lossless counters`, `lossless events`, `lossless reload`.
/// SIGHUP reloads the file; SIGTERM sends a shutdown LLDPDU on every port
/// and exits. See docs/daemon.md and docs/config.md.
#[derive(Parser, Debug)]
#[command(name = "losslessd", version)]
struct Args {
    /// Configuration file (TOML; see examples/losslessd.toml); it must exist
    /// [default: /etc/lossless/losslessd.toml if it exists, else the built-in defaults].
    #[arg(short, long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Run on this interface (repeatable), whatever the file selects.
    #[arg(short, long = "interface", value_name = "IF", value_parser = interface_name)]
    interfaces: Vec<String>,
    /// Control socket path [default: the file's, else /run/lossless/losslessd.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Where runtime changes persist [default: the file's, else /var/lib/lossless].
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Serve Prometheus metrics on this address, e.g. 127.0.0.1:9717: a port other
    /// than 0, and a loopback address unless a web configuration protects it (as the
    /// file's [daemon] metrics).
    #[arg(long, value_name = "ADDR", value_parser = metrics_address)]
    metrics: Option<SocketAddr>,
    /// The metrics endpoint's web configuration, in the format Prometheus's exporters
    /// share (exporter-toolkit's --web.config.file: tls_server_config,
    /// basic_auth_users, http_server_config.headers, rate_limit), as the file's
    /// [daemon] metrics_web_config. With TLS or basic authentication set the endpoint
    /// may listen on any address, e.g. --metrics 0.0.0.0:9717 for a fleet's central
    /// Prometheus; it is read again when it or a certificate it names changes.
    #[arg(long, visible_alias = "web.config.file", value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    web_config_file: Option<PathBuf>,
    /// Log filter (tracing syntax: info, debug, losslessd=debug,...) [default: the file's, else info].
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,
    /// How log lines look: text for people, json one object per line. Colour only on a
    /// terminal (and NO_COLOR unset); no timestamp of ours under journald.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Check the configuration (the file --config names, else the default file if it
    /// exists, else the built-in defaults), say which, and exit (0: valid, 2: not).
    /// Each [ports."..."] section and --interface name of a valid configuration that
    /// matches no interface in this network namespace is named in a warning on
    /// stderr; the exit status is 0 all the same.
    #[arg(long)]
    check: bool,
    /// Where sysfs is mounted: the RoCE host settings (RDMA CM's ToS and mode, ECN, the
    /// CNP's marking, the RDMA counters) are read and written under it, configfs at
    /// PATH/kernel/config and debugfs at PATH/kernel/debug. For a container that mounts
    /// the host's /sys elsewhere (as node_exporter's --path.sysfs).
    #[arg(long, value_name = "PATH", default_value = "/sys", value_hint = clap::ValueHint::DirPath)]
    sysfs: PathBuf,
    /// Write the man page, losslessd(8), into DIR (created if missing) and exit.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    man: Option<PathBuf>,
}

/// Writes losslessd.8 into `dir`, from this command line's own definition.
fn write_man(dir: &std::path::Path) -> ExitCode {
    let page = std::fs::create_dir_all(dir).and_then(|()| {
        clap_mangen::Man::new(Args::command())
            .section("8")
            .manual("System Manager's Manual")
            .generate_to(dir)
    });
    match page {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("losslessd: --man {}: {e}", dir.display());
            ExitCode::from(2)
        }
    }
}

/// The metrics address by the configuration file's rule.
fn metrics_address(s: &str) -> Result<SocketAddr, lossless_node::config::MetricsAddressError> {
    lossless_node::config::check_metrics_address(s)
}

/// An interface name by the configuration file's rule.
fn interface_name(name: &str) -> Result<String, lossless_node::config::InterfaceNameError> {
    lossless_node::config::check_interface_name(name).map(|()| name.to_string())
}

/// `--check`'s warnings: each port section and `--interface` name that matches no
/// interface in this network namespace, with the interfaces there. They leave the
/// file valid: an interface may come later, and one file may serve several hosts.
fn warn_unmatched(config: &DaemonConfig, named: &[String]) {
    let links = match lossless_sys::link::dump_links() {
        Ok(links) => links,
        Err(e) => {
            eprintln!(
                "losslessd: warning: cannot list the interfaces here ({e}): which port \
                 sections match none is not checked"
            );
            return;
        }
    };
    let here: Vec<&str> = links.iter().map(|l| l.name.as_str()).collect();
    let mut unmatched = unmatched_patterns(config, &here);
    unmatched.extend(unmatched_interfaces(named, &here));
    for u in &unmatched {
        eprintln!("losslessd: warning: {}", describe(u, &here));
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(dir) = &args.man {
        return write_man(dir);
    }
    let source = ConfigSource::resolve(args.config.as_deref(), Path::new(DEFAULT_CONFIG_PATH));
    let opts = Options {
        config: source.path().map(Path::to_path_buf),
        interfaces: args.interfaces,
        socket: args.socket,
        state_dir: args.state_dir,
        metrics: args.metrics,
        web_config: args.web_config_file,
        log: args.log,
        sysfs: args.sysfs,
    };
    let config = match runtime::load_config(&opts) {
        Ok(c) => c,
        Err(e) => {
            // A refused file lists each of its mistakes on a line of its own.
            for line in e.to_string().lines() {
                eprintln!("losslessd: {line}");
            }
            return ExitCode::from(2);
        }
    };
    if args.check {
        println!("{}: configuration is valid", source.describe());
        if let Ok(Some(web)) = runtime::web_config_for(&config) {
            println!(
                "metrics web configuration {}: valid: {}",
                web.path.display(),
                web.describe()
            );
        }
        warn_unmatched(&config, &opts.interfaces);
        return ExitCode::SUCCESS;
    }
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| config.daemon.log.clone());
    logging::init(&filter, args.log_format, Stderr::detect());
    tracing::info!(config = %source.describe(), "configuration");
    match runtime::run(opts, config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("losslessd: {e}");
            ExitCode::FAILURE
        }
    }
}
