//! What clxfer itself cost the run, so that a user can tell the program's time from the tool's:
//! its own time on the program's threads (measured on one recorded call in 64, `sink::own`), its
//! writer thread's CPU time, and what device timing made the driver do: measured where clxfer
//! itself called the driver (profiling and status queries, releases, callbacks armed, profiling
//! switches), estimated by each device's rules for the rest (the events the driver made inside
//! the program's enqueues, the timestamps it kept: `driver_timed_us`, `driver_profiled_us`).

use crate::model::rules;
use crate::units::duration;
use serde::{Deserialize, Serialize};

/// The raw counts, as the layer's end (or a trace's end event) gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OwnFacts {
    /// Calls recorded on the program's threads (counted in steps of 64 per thread).
    pub calls: u64,
    /// Of them, those whose time in clxfer was measured, and that time, ns.
    pub measured: u64,
    pub measured_ns: u64,
    /// The writer thread's CPU time, ns.
    pub writer_cpu_ns: u64,
    /// How long, in all, the program's threads waited for the writer (its memory full), and how
    /// many times.
    pub held_ns: u64,
    pub held: u64,
}

/// What device timing added on one device.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimingFacts {
    /// Commands timed on the device.
    pub timed: u64,
    /// Of them, those whose event clxfer made (the program passed none).
    pub own_events: u64,
    /// Completion callbacks armed.
    pub callbacks: u64,
    /// Commands sampling left untimed.
    pub sampled: u64,
    /// Commands around which profiling was switched on and off, and the time the switches
    /// took (measured).
    pub toggles: u64,
    pub toggle_ns: u64,
    /// The time clxfer's own driver calls for device timing took (measured).
    pub driver_ns: u64,
}

/// The report's overhead section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Overhead {
    /// clxfer's time on the program's threads, estimated: the measured calls' mean over all
    /// recorded calls.
    pub layer_ns: u64,
    pub calls: u64,
    pub measured_calls: u64,
    /// The CPU time of clxfer's writer thread (trace writing, or summary mode's report).
    pub writer_cpu_ns: u64,
    /// How long, in all, the program's threads waited for the writer (its memory full, a slow
    /// disk or a starved CPU), and how many times.
    #[serde(default)]
    pub writer_waited_ns: u64,
    #[serde(default)]
    pub writer_waits: u64,
    pub timed_commands: u64,
    pub own_events: u64,
    pub callbacks: u64,
    pub sampled_out: u64,
    /// Profiling switched on and off around this many commands, taking this long (measured).
    pub toggles: u64,
    pub toggle_ns: u64,
    /// What device timing cost the driver: `driver_measured_ns` and the rest estimated.
    pub driver_ns: u64,
    /// Of it, the time clxfer's own driver calls for device timing took, the profiling switches
    /// included (measured).
    pub driver_measured_ns: u64,
    /// How the rest of `driver_ns` was estimated.
    pub driver_estimate: String,
}

impl Overhead {
    /// From the end's counts; `devices` are (rule set name, what timing added there).
    pub fn new(own: &OwnFacts, devices: &[(String, TimingFacts)]) -> Overhead {
        let mut t = TimingFacts::default();
        let mut estimated = 0u64;
        let mut prices = Vec::new();
        for (set, d) in devices {
            t.timed += d.timed;
            t.own_events += d.own_events;
            t.callbacks += d.callbacks;
            t.sampled += d.sampled;
            t.toggles += d.toggles;
            t.toggle_ns += d.toggle_ns;
            t.driver_ns += d.driver_ns;
            let r = rules::by_name(set).unwrap_or(&rules::GENERIC);
            // Every command on a queue with profiling on pays for its timestamps; where
            // profiling is switched on only around the timed ones, only those do.
            let profiled = d.timed + if r.toggle_profiling { 0 } else { d.sampled };
            let whole = d.timed as f64 * r.driver_timed_us + profiled as f64 * r.driver_profiled_us;
            let own = d.driver_ns + d.toggle_ns;
            // The rules' price is the driver's whole work, what clxfer's own calls took included.
            estimated += ((whole * 1e3).round() as u64).saturating_sub(own);
            let price = if r.driver_profiled_us == 0.0 {
                format!("{} µs a timed command, {set} rules", r.driver_timed_us)
            } else {
                format!(
                    "{} µs a timed command and {} µs a command on a profiling queue, {set} rules",
                    r.driver_timed_us, r.driver_profiled_us
                )
            };
            if d.timed > 0 && !prices.contains(&price) {
                prices.push(price);
            }
        }
        // What clxfer's own driver calls took, the profiling switches included.
        let measured = t.driver_ns + t.toggle_ns;
        let layer_ns = match own.measured {
            0 => 0,
            m => (own.measured_ns as f64 * own.calls.max(m) as f64 / m as f64) as u64,
        };
        Overhead {
            layer_ns,
            calls: own.calls,
            measured_calls: own.measured,
            writer_cpu_ns: own.writer_cpu_ns,
            writer_waited_ns: own.held_ns,
            writer_waits: own.held,
            timed_commands: t.timed,
            own_events: t.own_events,
            callbacks: t.callbacks,
            sampled_out: t.sampled,
            toggles: t.toggles,
            toggle_ns: t.toggle_ns,
            driver_ns: measured + estimated,
            driver_measured_ns: measured,
            driver_estimate: if prices.is_empty() {
                "no command was timed".into()
            } else {
                let toggled = match t.toggles {
                    0 => String::new(),
                    n => format!(
                        "; profiling switched on and off around {n} of them, {} a pair as \
                         measured",
                        duration(t.toggle_ns / n)
                    ),
                };
                format!(
                    "{} measured in clxfer's own driver calls (queries, releases, callbacks armed){toggled}; \
                     ~{} more estimated for what the driver did inside the program's calls and \
                     its own threads, at the price measured for it ({}; docs/PERFORMANCE.md)",
                    duration(measured),
                    duration(estimated),
                    prices.join(", ")
                )
            },
        }
    }

    /// The report's line.
    pub fn line(&self) -> String {
        let per_call = match self.calls {
            0 => String::new(),
            n => format!(", {} per call", duration(self.layer_ns / n)),
        };
        let waited = match self.writer_waits {
            0 => String::new(),
            n => format!(
                " (and {} waiting for it, {n} times: its memory was full, and nothing was \
                 dropped while it made progress)",
                duration(self.writer_waited_ns)
            ),
        };
        // Nothing measured is said so, not as ~0: calls are counted, and one in 64 measured, in
        // steps of 64 per thread.
        let threads = match self.measured_calls {
            0 => "not measured on the program's threads (one recorded call in 64 is, and no \
                  thread made 64)"
                .to_string(),
            m => format!(
                "~{} on the program's threads ({} calls, measured on {m}{per_call})",
                duration(self.layer_ns),
                self.calls
            ),
        };
        format!(
            "clxfer's own cost: {threads}, \
             {} CPU on its writer thread{waited}; device timing timed {} commands ({} with events \
             of its own, {} completion callbacks; {} left untimed by sampling), ~{} more in the \
             driver: {}",
            duration(self.writer_cpu_ns),
            self.timed_commands,
            self.own_events,
            self.callbacks,
            self.sampled_out,
            duration(self.driver_ns),
            self.driver_estimate
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_time_scales_from_the_measured_calls_and_the_driver_price_is_per_rule_set() {
        let own = OwnFacts {
            calls: 6400,
            measured: 100,
            measured_ns: 50_000,
            writer_cpu_ns: 7,
            ..OwnFacts::default()
        };
        let t = |timed, sampled| TimingFacts {
            timed,
            own_events: timed,
            callbacks: 1,
            sampled,
            toggles: 0,
            toggle_ns: 0,
            driver_ns: 0,
        };
        let nvidia = rules::NVIDIA.driver_timed_us;
        let cpu = rules::CPU.driver_timed_us + rules::CPU.driver_profiled_us;
        let o = Overhead::new(
            &own,
            &[("nvidia".into(), t(10, 5)), ("cpu".into(), t(4, 0))],
        );
        // 500 ns a measured call, over 6400 calls.
        assert_eq!(o.layer_ns, 3_200_000);
        assert_eq!((o.timed_commands, o.sampled_out, o.callbacks), (14, 5, 2));
        // NVIDIA switches profiling: its 5 untimed commands cost nothing; nothing was measured.
        assert_eq!(
            o.driver_ns,
            (10.0 * nvidia * 1e3) as u64 + (4.0 * cpu * 1e3) as u64
        );
        assert_eq!(o.driver_measured_ns, 0);
        assert!(
            o.driver_estimate.contains("nvidia rules"),
            "{}",
            o.driver_estimate
        );
        assert!(o.line().contains("500 ns per call"), "{}", o.line());
        // Nothing measured, nothing timed: zeros, said so.
        let none = Overhead::new(&OwnFacts::default(), &[]);
        assert_eq!((none.layer_ns, none.driver_ns), (0, 0));
        assert!(
            none.line()
                .starts_with("clxfer's own cost: not measured on the program's threads"),
            "{}",
            none.line()
        );
        assert_eq!(none.driver_estimate, "no command was timed");
        // Profiling switched around 4 commands: their measured time is the driver's too.
        let toggled = TimingFacts {
            toggles: 4,
            toggle_ns: 60_000,
            ..t(10, 0)
        };
        let o = Overhead::new(&own, &[("nvidia".into(), toggled)]);
        // Measured switches are part of the driver's whole price, not on top of it: here they
        // took more than the price, so nothing more is estimated.
        assert!(((10.0 * nvidia * 1e3) as u64) < 60_000);
        assert_eq!(o.driver_ns, 60_000);
        assert_eq!(o.driver_measured_ns, 60_000);
        assert!(
            o.driver_estimate
                .contains("around 4 of them, 15.0 µs a pair"),
            "{}",
            o.driver_estimate
        );
        // On PoCL every untimed command on the profiling queue pays for its timestamps, and
        // what clxfer's calls were measured to take beyond the price is the driver's share.
        let pocl = TimingFacts {
            driver_ns: 5_000_000,
            ..t(10, 1000)
        };
        let o = Overhead::new(&own, &[("cpu".into(), pocl)]);
        let whole = ((10.0 * cpu + 1000.0 * rules::CPU.driver_profiled_us) * 1e3).round() as u64;
        assert!(whole < 5_000_000);
        assert_eq!((o.driver_ns, o.driver_measured_ns), (5_000_000, 5_000_000));
        assert!(
            o.line()
                .contains("5.00 ms measured in clxfer's own driver calls"),
            "{}",
            o.line()
        );
        let cheap = Overhead::new(&own, &[("cpu".into(), t(10, 1000))]);
        assert_eq!(cheap.driver_ns, whole);
        assert!(
            cheap
                .line()
                .contains("a command on a profiling queue, cpu rules"),
            "{}",
            cheap.line()
        );
    }
}
