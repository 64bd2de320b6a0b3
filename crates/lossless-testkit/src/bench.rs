//! What every benchmark prints first: the machine its figures come from.

/// `CPU model, N cores, Linux RELEASE (ARCH), PROFILE build`, from /proc and the build.
pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    format!(
        "{cpu}, {cores} cores, Linux {kernel} ({}), {profile} build",
        std::env::consts::ARCH
    )
}

/// CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`): what a piece of
/// work costs even when the machine is busy and the thread waits for a core.
pub fn thread_cpu_time() -> std::time::Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(std::time::Duration::from)
        .unwrap_or_default()
}

/// The load average as `uptime` prints it (1, 5 and 15 minutes), for figures taken
/// on a machine others may be using: printed beside every figure. Read from
/// /proc/loadavg, so it needs no `uptime` binary and costs no process.
pub fn load() -> String {
    let l = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let f: Vec<&str> = l.split_whitespace().take(3).collect();
    format!("load average: {}", f.join(", "))
}
