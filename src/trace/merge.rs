//! Several processes' traces as one timeline: each trace's timestamps are shifted by its
//! wall-clock start (`start_time` of its first event) against the earliest, pids that two traces
//! share are renumbered (with their device pids), and flow ids are offset so they stay unique.

use super::read::Trace;
use crate::sink::schema::{self as s, DEVICE_PID_BASE, device_pid};
use serde_json::Value;
use std::collections::HashSet;

/// One trace to merge: its name (for messages) and events.
pub struct Input<'a> {
    pub name: String,
    pub trace: &'a Trace,
}

/// The merged events, or why a trace cannot be aligned.
pub fn merge(inputs: &[Input]) -> Result<Vec<Value>, String> {
    let mut starts = Vec::new();
    for i in inputs {
        let start = i
            .trace
            .events
            .iter()
            .find(|e| e.get("name").and_then(Value::as_str) == Some(s::TRACE_START))
            .and_then(|e| e.get("args"))
            .ok_or_else(|| {
                format!(
                    "{}: no `{}` event: not a clxfer trace",
                    i.name,
                    s::TRACE_START
                )
            })?;
        let wall = start
            .get(s::START_TIME.name)
            .and_then(Value::as_str)
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .ok_or_else(|| format!("{}: its start_time is missing or not RFC 3339", i.name))?;
        let pid = start.get(s::PID.name).and_then(Value::as_u64).unwrap_or(0) as u32;
        starts.push((wall, pid));
    }
    let Some(earliest) = starts.iter().map(|(w, _)| *w).min() else {
        return Ok(Vec::new());
    };
    let mut used: HashSet<u32> = HashSet::new();
    let mut out = Vec::new();
    let mut id_base = 0u64;
    for (i, &(wall, pid)) in inputs.iter().zip(&starts) {
        let shift_ns = (wall - earliest).num_nanoseconds().unwrap_or(0).max(0) as u64;
        let new_pid = if used.insert(pid) {
            pid
        } else {
            let free = (1..0x3f_ffff).find(|p| !used.contains(p)).unwrap_or(pid);
            used.insert(free);
            free
        };
        let mut max_id = 0;
        for e in &i.trace.events {
            let mut e = e.clone();
            let Some(obj) = e.as_object_mut() else {
                continue;
            };
            if let Some(ts) = obj.get("ts").and_then(Value::as_f64) {
                let ns = ((ts * 1000.0).round() as u64).saturating_add(shift_ns);
                obj.insert("ts".into(), Value::from(ns as f64 / 1000.0));
            }
            if let Some(p) = obj.get("pid").and_then(Value::as_u64) {
                let p = p as u32;
                let mapped = if p == pid {
                    new_pid
                } else if p >= DEVICE_PID_BASE && (p >> 8) & 0x3f_ffff == pid & 0x3f_ffff {
                    device_pid(new_pid, p & 0xff)
                } else {
                    p
                };
                obj.insert("pid".into(), Value::from(mapped));
                // The trace start and end are instants whose tid is the pid.
                if obj.get("tid").and_then(Value::as_u64) == Some(p as u64) && p == pid {
                    obj.insert("tid".into(), Value::from(new_pid));
                }
            }
            if matches!(obj.get("ph").and_then(Value::as_str), Some("s" | "f" | "t"))
                && let Some(id) = obj.get("id").and_then(Value::as_u64)
            {
                max_id = max_id.max(id);
                obj.insert("id".into(), Value::from(id.saturating_add(id_base)));
            }
            out.push(e);
        }
        id_base = id_base.saturating_add(max_id);
    }
    Ok(out)
}

/// The merged trace as a closed bare array, one event per line.
pub fn to_json(events: &[Value]) -> String {
    let mut s = String::from("[\n");
    for (i, e) in events.iter().enumerate() {
        s.push_str(&e.to_string());
        s.push_str(if i + 1 < events.len() { ",\n" } else { "\n" });
    }
    s.push_str("]\n");
    s
}
