//! The process metrics every Prometheus client library exports (`process_cpu_seconds_total`,
//! `process_resident_memory_bytes`, `process_open_fds`, ...), which prometheus-client lacks:
//! read from /proc on each scrape (Linux only; elsewhere nothing is reported), a few small
//! reads, no crate. Clock ticks are taken as USER_HZ = 100, as prometheus/procfs takes them.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Clock ticks per second in /proc.
const USER_HZ: f64 = 100.0;

#[derive(Debug)]
pub(crate) struct ProcessMetrics {
    /// When the process started, in seconds since the epoch: read once.
    start_time: Option<f64>,
}

impl ProcessMetrics {
    pub(crate) fn new() -> Self {
        let start_time = (|| {
            let stat = Stat::read()?;
            let boot = std::fs::read_to_string("/proc/stat").ok()?;
            let btime = boot.lines().find_map(|l| l.strip_prefix("btime "))?;
            let btime: f64 = btime.trim().parse().ok()?;
            Some(btime + stat.start_ticks / USER_HZ)
        })();
        Self { start_time }
    }
}

/// The fields of /proc/self/stat the metrics need.
struct Stat {
    cpu_ticks: f64,
    start_ticks: f64,
    virtual_bytes: f64,
}

impl Stat {
    fn read() -> Option<Self> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // `pid (comm) state ...`: comm may hold spaces and ')', so count after the last ')'.
        let after_comm = stat.get(stat.rfind(')')? + 2..)?;
        let fields: Vec<&str> = after_comm.split_ascii_whitespace().collect();
        // fields[0] is field 3 (state) of proc(5).
        let field = |n: usize| -> Option<f64> { fields.get(n - 3)?.parse().ok() };
        Some(Self {
            cpu_ticks: field(14)? + field(15)?,
            start_ticks: field(22)?,
            virtual_bytes: field(23)?,
        })
    }
}

fn resident_bytes() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:"))?;
    let kib: f64 = kib.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024.0)
}

fn open_fds() -> Option<f64> {
    Some(std::fs::read_dir("/proc/self/fd").ok()?.count() as f64)
}

fn max_fds() -> Option<f64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line["Max open files".len()..]
        .split_ascii_whitespace()
        .next()?;
    soft.parse().ok()
}

impl Collector for ProcessMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        if let Some(stat) = Stat::read() {
            let cpu = ConstCounter::new(stat.cpu_ticks / USER_HZ);
            // The counter type appends `_total`.
            let help = "Total user and system CPU time spent in seconds.";
            let descriptor =
                encoder.encode_descriptor("process_cpu_seconds", help, None, cpu.metric_type())?;
            cpu.encode(descriptor)?;
            let help = "Virtual memory size in bytes.";
            gauge(
                &mut encoder,
                "process_virtual_memory_bytes",
                help,
                stat.virtual_bytes,
            )?;
        }
        let gauges = [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                resident_bytes(),
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                open_fds(),
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                max_fds(),
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                self.start_time,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(value) = value {
                gauge(&mut encoder, name, help, value)?;
            }
        }
        Ok(())
    }
}

fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let gauge = ConstGauge::new(value);
    gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)
}
