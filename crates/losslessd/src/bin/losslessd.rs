//! losslessd: DCBX (IEEE 802.1Qaz and CEE), adaptive PFC headroom and the PFC relay on
//! Linux interfaces.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
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
    /// Configuration file (TOML; see examples/losslessd.toml).
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
    /// Serve Prometheus metrics on this loopback address, e.g. 127.0.0.1:9717.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// Log filter (tracing syntax: info, debug, losslessd=debug,...) [default: the file's, else info].
    #[arg(long, value_name = "FILTER")]
    log: Option<String>,
    /// How log lines look: text for people, json one object per line. Colour only on a
    /// terminal (and NO_COLOR unset); no timestamp of ours under journald.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Check the configuration file and exit (0: valid).
    #[arg(long)]
    check: bool,
}

/// An interface name by the configuration file's rule.
fn interface_name(name: &str) -> Result<String, String> {
    lossless_node::config::check_interface_name(name).map(|()| name.to_string())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let opts = Options {
        config: args.config,
        interfaces: args.interfaces,
        socket: args.socket,
        state_dir: args.state_dir,
        metrics: args.metrics,
        log: args.log,
    };
    let config = match runtime::load_config(&opts) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("losslessd: {e}");
            return ExitCode::from(2);
        }
    };
    if args.check {
        println!("configuration is valid");
        return ExitCode::SUCCESS;
    }
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| config.daemon.log.clone());
    logging::init(&filter, args.log_format, Stderr::detect());
    match runtime::run(opts, config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("losslessd: {e}");
            ExitCode::FAILURE
        }
    }
}
