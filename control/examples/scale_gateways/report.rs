//! What the simulation measures: a replica's CPU and memory from `/proc`,
//! percentiles of the propagation times, and the printed table.

use std::time::Duration;

/// A control-service process at one moment, from `/proc/PID/stat` and
/// `/proc/PID/status`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcessSample {
    /// User + system CPU seconds since the process started.
    pub cpu_s: f64,
    /// Resident memory now (VmRSS), KiB.
    pub rss_kib: u64,
    /// Peak resident memory so far (VmHWM), KiB.
    pub hwm_kib: u64,
}

/// Clock ticks per second of `/proc/PID/stat` times: USER_HZ, 100 on every
/// Linux architecture the project builds for.
const USER_HZ: f64 = 100.0;

/// Reads process `pid`; None when it is gone or `/proc` is not Linux's.
pub fn sample(pid: u32) -> Option<ProcessSample> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: count the
    // fields after its closing parenthesis (field 3, the state, is first).
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |name: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    Some(ProcessSample {
        cpu_s: (utime + stime) / USER_HZ,
        rss_kib: kib("VmRSS:")?,
        hwm_kib: kib("VmHWM:")?,
    })
}

/// The CPU seconds of process `pid` and of its children alive now (the
/// PostgreSQL postmaster and its backends).
pub fn tree_cpu_s(pid: u32) -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0.0;
    };
    let mut total = 0.0;
    for entry in dir.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let ppid: Option<u32> = fields.get(1).and_then(|f| f.parse().ok());
        if child == pid || ppid == Some(pid) {
            let ticks = |i: usize| {
                fields
                    .get(i)
                    .and_then(|f| f.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            total += (ticks(11) + ticks(12)) / USER_HZ;
        }
    }
    total
}

/// Samples every pid (a gone process reads as zeros).
pub fn sample_all(pids: &[u32]) -> Vec<ProcessSample> {
    pids.iter()
        .map(|&pid| sample(pid).unwrap_or_default())
        .collect()
}

/// The nearest-rank percentile `p` (0–100) of sorted times.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Milliseconds, whole below 10 s.
pub fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

/// MiB from KiB, one decimal.
pub fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

/// Everything one run measured.
pub struct Figures {
    pub gateways: usize,
    pub replicas: usize,
    pub entries: usize,
    pub forgets: usize,
    pub forget_every: Duration,
    /// Gateways parked when the cold start ended (all, unless it hit its limit).
    pub parked: usize,
    pub cold_start: Duration,
    pub cold_failures: u64,
    pub snapshot_bytes: Option<usize>,
    /// Per replica: at the start, when all were parked (after the settle),
    /// at the end.
    pub before: Vec<ProcessSample>,
    pub after_cold: Vec<ProcessSample>,
    pub after_forgets: Vec<ProcessSample>,
    /// Forget answer → receipt, one per (gateway, forget) received; sorted.
    pub propagation: Vec<Duration>,
    /// Receipts that arrived before the forget call's answer did.
    pub before_answer: usize,
    pub run_failures: u64,
    /// The database's CPU (postmaster and backends) at the same three
    /// moments, when its pid was given.
    pub db_cpu: Option<[f64; 3]>,
    /// Gateways started from a held position, without a snapshot.
    pub warm: bool,
    /// This process's own CPU over the run (it shares the machine).
    pub client_cpu_s: f64,
}

impl Figures {
    /// Every receipt expected arrived.
    pub fn complete(&self) -> bool {
        self.propagation.len() == self.gateways * self.forgets
    }

    /// Prints the table.
    pub fn print(&self) {
        let per_replica = self.gateways / self.replicas.max(1);
        let sum = |a: &[ProcessSample], b: &[ProcessSample]| -> f64 {
            a.iter().zip(b).map(|(x, y)| y.cpu_s - x.cpu_s).sum()
        };
        println!(
            "latet scale: {} gateways on {} replicas (~{per_replica} each), vault of {} entries, {} forgets {} ms apart",
            self.gateways,
            self.replicas,
            self.entries,
            self.forgets,
            self.forget_every.as_millis()
        );
        println!(
            "cold start          {}/{} parked after {:.2} s; {} failed calls; control CPU {:.2} s",
            self.parked,
            self.gateways,
            self.cold_start.as_secs_f64(),
            self.cold_failures,
            sum(&self.before, &self.after_cold)
        );
        match self.snapshot_bytes {
            Some(bytes) if !self.warm => {
                println!("snapshot            {bytes} bytes per gateway start (compact form)")
            }
            _ => println!(
                "snapshot            none taken (warm: the gateways resumed from a held seq)"
            ),
        }
        println!(
            "forget propagation  {}/{} receipts ({} before the answer); answer → receipt p50 {}, p99 {}, max {}; {} failed calls",
            self.propagation.len(),
            self.gateways * self.forgets,
            self.before_answer,
            ms(percentile(&self.propagation, 50.0)),
            ms(percentile(&self.propagation, 99.0)),
            ms(self.propagation.last().copied().unwrap_or_default()),
            self.run_failures
        );
        println!(
            "forget phase        control CPU {:.2} s ({:.3} s a forget); this client {:.1} s CPU over the run",
            sum(&self.after_cold, &self.after_forgets),
            sum(&self.after_cold, &self.after_forgets) / self.forgets.max(1) as f64,
            self.client_cpu_s
        );
        if let Some([start, cold, end]) = self.db_cpu {
            println!(
                "database CPU        cold start {:.2} s, forgets {:.2} s ({:.3} s a forget)",
                cold - start,
                end - cold,
                (end - cold) / self.forgets.max(1) as f64
            );
        }
        println!("replica  CPU cold (s)  CPU forgets (s)  RSS idle (MiB)  RSS parked (MiB)  peak RSS (MiB)");
        for i in 0..self.before.len() {
            println!(
                "r{:<7} {:>12.2}  {:>15.2}  {:>14}  {:>16}  {:>14}",
                i + 1,
                self.after_cold[i].cpu_s - self.before[i].cpu_s,
                self.after_forgets[i].cpu_s - self.after_cold[i].cpu_s,
                mib(self.before[i].rss_kib),
                mib(self.after_cold[i].rss_kib),
                mib(self.after_forgets[i].hwm_kib)
            );
        }
        let hwm: Vec<String> = self.after_forgets.iter().map(|s| mib(s.hwm_kib)).collect();
        let parked: Vec<String> = self
            .before
            .iter()
            .zip(&self.after_cold)
            .map(|(idle, parked)| format!("{} → {}", mib(idle.rss_kib), mib(parked.rss_kib)))
            .collect();
        let db = |i: usize, j: usize| {
            self.db_cpu
                .map_or("–".to_string(), |cpu| format!("{:.1} s", cpu[j] - cpu[i]))
        };
        println!(
            "row: | {}{} | {:.1} s | {:.1} s | {} | {} | {} | {} | {} | {}/{} | {:.2} s | {} | {} | {} |",
            self.gateways,
            if self.warm { " warm" } else { "" },
            self.cold_start.as_secs_f64(),
            sum(&self.before, &self.after_cold),
            db(0, 1),
            match self.snapshot_bytes {
                Some(bytes) if !self.warm => bytes.to_string(),
                _ => "–".to_string(),
            },
            ms(percentile(&self.propagation, 50.0)),
            ms(percentile(&self.propagation, 99.0)),
            ms(self.propagation.last().copied().unwrap_or_default()),
            self.propagation.len(),
            self.gateways * self.forgets,
            sum(&self.after_cold, &self.after_forgets),
            db(1, 2),
            parked.join(" / "),
            hwm.join(" / "),
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_nearest_rank() {
        let sorted: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        for (p, want) in [(50.0, 50), (99.0, 99), (100.0, 100), (0.0, 1)] {
            assert_eq!(percentile(&sorted, p), Duration::from_millis(want));
        }
        assert_eq!(percentile(&[], 99.0), Duration::ZERO);
    }

    #[test]
    fn reads_this_process() {
        let me = sample(std::process::id()).unwrap();
        assert!(me.rss_kib > 0 && me.hwm_kib >= me.rss_kib);
    }
}
