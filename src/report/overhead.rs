//! What clxfer itself cost the run, so that a user can tell the program's time from the tool's:
//! its own time on the program's threads (measured on one recorded call in 64, `sink::own`), its
//! writer thread's CPU time, and what device timing added (events, callbacks) with an estimate
//! of their price to the driver (each device's rules' `timed_command_us`).

use crate::model::rules;
use crate::units::duration;
use serde::Serialize;

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
}

/// The report's overhead section.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Overhead {
    /// clxfer's time on the program's threads, estimated: the measured calls' mean over all
    /// recorded calls.
    pub layer_ns: u64,
    pub calls: u64,
    pub measured_calls: u64,
    /// The CPU time of clxfer's writer thread (trace writing, or summary mode's report).
    pub writer_cpu_ns: u64,
    pub timed_commands: u64,
    pub own_events: u64,
    pub callbacks: u64,
    pub sampled_out: u64,
    /// Profiling switched on and off around this many commands, taking this long (measured).
    pub toggles: u64,
    pub toggle_ns: u64,
    /// What the timed commands cost the driver, estimated at each device's rules' price, and
    /// the profiling switches as measured.
    pub driver_ns: u64,
    /// How `driver_ns` was estimated.
    pub driver_estimate: String,
}

impl Overhead {
    /// From the end's counts; `devices` are (rule set name, what timing added there).
    pub fn new(own: &OwnFacts, devices: &[(String, TimingFacts)]) -> Overhead {
        let mut t = TimingFacts::default();
        let mut driver = 0.0;
        let mut prices = Vec::new();
        for (set, d) in devices {
            t.timed += d.timed;
            t.own_events += d.own_events;
            t.callbacks += d.callbacks;
            t.sampled += d.sampled;
            t.toggles += d.toggles;
            t.toggle_ns += d.toggle_ns;
            let us =
                rules::by_name(set).map_or(rules::GENERIC.timed_command_us, |r| r.timed_command_us);
            driver += d.timed as f64 * us * 1e3 + d.toggle_ns as f64;
            let price = format!("{us} µs a timed command, {set} rules");
            if d.timed > 0 && !prices.contains(&price) {
                prices.push(price);
            }
        }
        let layer_ns = match own.measured {
            0 => 0,
            m => (own.measured_ns as f64 * own.calls.max(m) as f64 / m as f64) as u64,
        };
        Overhead {
            layer_ns,
            calls: own.calls,
            measured_calls: own.measured,
            writer_cpu_ns: own.writer_cpu_ns,
            timed_commands: t.timed,
            own_events: t.own_events,
            callbacks: t.callbacks,
            sampled_out: t.sampled,
            toggles: t.toggles,
            toggle_ns: t.toggle_ns,
            driver_ns: driver as u64,
            driver_estimate: if prices.is_empty() {
                "no command was timed".into()
            } else {
                let toggled = match t.toggles {
                    0 => String::new(),
                    n => format!(
                        ", and profiling switched on and off around {n} of them, {} a pair as \
                         measured",
                        duration(t.toggle_ns / n)
                    ),
                };
                format!(
                    "estimated at the price measured for its driver ({}; docs/PERFORMANCE.md){toggled}",
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
        format!(
            "clxfer's own cost: ~{} on the program's threads ({} calls, measured on {}{per_call}), \
             {} CPU on its writer thread; device timing timed {} commands ({} with events of its \
             own, {} completion callbacks; {} left untimed by sampling), ~{} more in the driver, \
             {}",
            duration(self.layer_ns),
            self.calls,
            self.measured_calls,
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
        };
        let t = |timed, sampled| TimingFacts {
            timed,
            own_events: timed,
            callbacks: 1,
            sampled,
            toggles: 0,
            toggle_ns: 0,
        };
        let nvidia = rules::NVIDIA.timed_command_us;
        let cpu = rules::CPU.timed_command_us;
        let o = Overhead::new(
            &own,
            &[("nvidia".into(), t(10, 5)), ("cpu".into(), t(4, 0))],
        );
        // 500 ns a measured call, over 6400 calls.
        assert_eq!(o.layer_ns, 3_200_000);
        assert_eq!((o.timed_commands, o.sampled_out, o.callbacks), (14, 5, 2));
        assert_eq!(o.driver_ns, (10.0 * nvidia * 1e3 + 4.0 * cpu * 1e3) as u64);
        assert!(
            o.driver_estimate.contains("nvidia rules"),
            "{}",
            o.driver_estimate
        );
        assert!(o.line().contains("500 ns per call"), "{}", o.line());
        // Nothing measured, nothing timed: zeros, said so.
        let none = Overhead::new(&OwnFacts::default(), &[]);
        assert_eq!((none.layer_ns, none.driver_ns), (0, 0));
        assert_eq!(none.driver_estimate, "no command was timed");
        // Profiling switched around 4 commands: their measured time is the driver's too.
        let toggled = TimingFacts {
            toggles: 4,
            toggle_ns: 60_000,
            ..t(10, 0)
        };
        let o = Overhead::new(&own, &[("nvidia".into(), toggled)]);
        assert_eq!(o.driver_ns, (10.0 * nvidia * 1e3) as u64 + 60_000);
        assert!(
            o.driver_estimate
                .contains("around 4 of them, 15.0 µs a pair"),
            "{}",
            o.driver_estimate
        );
    }
}
