//! Which rank of a parallel job this process is, and on which host: what the launcher put in
//! its environment (Open MPI, MPICH's Hydra and other PMI launchers, PMIx, MVAPICH2, Slurm's
//! `srun`), read once. Trace and report names (`{rank}`, `{host}`), the trace's start event and
//! the report carry it, so the traces of a job's ranks say which is which.

use std::sync::OnceLock;

/// Launchers, by the variables that give a process its rank and the job's size; the first whose
/// rank variable is set is the one (Open MPI also sets PMIx's, and Slurm's stay set inside an
/// `mpirun` started by `sbatch`).
const LAUNCHERS: &[(&str, &str, &str)] = &[
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("MVAPICH2", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"),
    ("PMI", "PMI_RANK", "PMI_SIZE"),
    ("PMIx", "PMIX_RANK", "PMIX_SIZE"),
    ("Slurm", "SLURM_PROCID", "SLURM_NTASKS"),
];

/// This process's place in its job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Job {
    /// Its rank; `None` outside a job.
    pub rank: Option<u32>,
    /// The job's ranks, where the launcher says.
    pub ranks: Option<u32>,
    /// The launcher that said (`Open MPI`, `Slurm`, …).
    pub launcher: Option<&'static str>,
    /// The host it runs on.
    pub host: String,
}

impl Job {
    /// From any lookup of the environment (tests pass a map) and the host's own name.
    pub fn of(lookup: impl Fn(&str) -> Option<String>, hostname: &str) -> Job {
        let number = |var: &str| lookup(var).and_then(|v| v.trim().parse::<u32>().ok());
        let found = LAUNCHERS
            .iter()
            .find_map(|&(name, rank, size)| Some((name, number(rank)?, number(size))));
        // Slurm names the node as the cluster knows it; elsewhere the kernel's name.
        let host = lookup("SLURMD_NODENAME")
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| hostname.to_string());
        Job {
            rank: found.map(|f| f.1),
            ranks: found.and_then(|f| f.2),
            launcher: found.map(|f| f.0),
            host,
        }
    }

    /// `rank 3 of 4 on node7` (`on node7` outside a job).
    pub fn describe(&self) -> String {
        match (self.rank, self.ranks) {
            (Some(r), Some(n)) => format!("rank {r} of {n} on {}", self.host),
            (Some(r), None) => format!("rank {r} on {}", self.host),
            _ => format!("on {}", self.host),
        }
    }

    /// `{rank}` and `{host}` in a name filled in (`{rank}` is empty outside a job).
    pub fn fill(&self, name: &str) -> String {
        let rank = self.rank.map(|r| r.to_string()).unwrap_or_default();
        name.replace("{rank}", &rank).replace("{host}", &self.host)
    }
}

/// The kernel's name for this host.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// This process's job, read from its environment once.
pub fn this() -> &'static Job {
    static JOB: OnceLock<Job> = OnceLock::new();
    JOB.get_or_init(|| Job::of(|var| std::env::var(var).ok(), &hostname()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn job(vars: &[(&str, &str)]) -> Job {
        let map: HashMap<&str, &str> = vars.iter().copied().collect();
        Job::of(|v| map.get(v).map(|s| s.to_string()), "box")
    }

    #[test]
    fn each_launcher_s_variables_give_the_rank() {
        let ompi = job(&[("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4")]);
        assert_eq!(
            (ompi.rank, ompi.ranks, ompi.launcher),
            (Some(3), Some(4), Some("Open MPI"))
        );
        assert_eq!(ompi.describe(), "rank 3 of 4 on box");
        let hydra = job(&[("PMI_RANK", "1"), ("PMI_SIZE", "2")]);
        assert_eq!((hydra.rank, hydra.launcher), (Some(1), Some("PMI")));
        let pmix = job(&[("PMIX_RANK", "5")]);
        assert_eq!((pmix.rank, pmix.ranks), (Some(5), None));
        let srun = job(&[
            ("SLURM_PROCID", "7"),
            ("SLURM_NTASKS", "8"),
            ("SLURMD_NODENAME", "n12"),
        ]);
        assert_eq!((srun.rank, srun.host.as_str()), (Some(7), "n12"));
        assert_eq!(srun.fill("r{rank}-{host}.json"), "r7-n12.json");
        // Open MPI inside a Slurm allocation: Open MPI's rank, not the batch step's.
        let both = job(&[("SLURM_PROCID", "0"), ("OMPI_COMM_WORLD_RANK", "2")]);
        assert_eq!(both.rank, Some(2));
    }

    #[test]
    fn outside_a_job_there_is_no_rank() {
        let alone = job(&[("PMI_RANK", "x")]);
        assert_eq!((alone.rank, alone.launcher), (None, None));
        assert_eq!(alone.describe(), "on box");
        assert_eq!(alone.fill("t{rank}.json"), "t.json");
    }
}
