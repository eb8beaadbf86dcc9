//! Running the job on several processes (on one machine or several): timely's cluster
//! configuration, from `--processes`, `--process` and `--hostfile`.

use std::path::Path;

/// The processes of a cluster and which one this is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// How many processes.
    pub processes: usize,
    /// This process's index, `0..processes`.
    pub process: usize,
    /// Every process's `host:port`, in process order (empty for one process).
    pub addresses: Vec<String>,
}

impl Default for Cluster {
    fn default() -> Self {
        Cluster {
            processes: 1,
            process: 0,
            addresses: Vec::new(),
        }
    }
}

impl Cluster {
    /// A cluster of `processes`, this one being `process`, their addresses read from
    /// `hostfile` (one `host:port` per line; blank lines and `#` comments are skipped; at
    /// least `processes` lines).
    pub fn new(processes: usize, process: usize, hostfile: Option<&Path>) -> Result<Self, String> {
        if processes == 0 {
            return Err("--processes must be at least 1".into());
        }
        if process >= processes {
            return Err(format!(
                "--process {process} must be less than --processes {processes}"
            ));
        }
        if processes == 1 {
            return Ok(Cluster::default());
        }
        let hostfile = hostfile.ok_or("--processes above 1 needs --hostfile FILE")?;
        let text = flowboost_connectors::readers::read_small_text(hostfile)
            .map_err(|e| format!("{}: cannot read the hostfile: {e}", hostfile.display()))?;
        let addresses: Vec<String> = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        for (i, a) in addresses.iter().enumerate() {
            if a.rsplit_once(':')
                .and_then(|(_, port)| port.parse::<u16>().ok())
                .is_none()
            {
                return Err(format!(
                    "{}: line {}: `{a}` is not host:port",
                    hostfile.display(),
                    i + 1
                ));
            }
        }
        if addresses.len() < processes {
            return Err(format!(
                "{}: {} addresses for {processes} processes",
                hostfile.display(),
                addresses.len()
            ));
        }
        Ok(Cluster {
            processes,
            process,
            addresses: addresses.into_iter().take(processes).collect(),
        })
    }

    /// timely's configuration for `threads` workers in this process.
    pub fn timely_config(&self, threads: usize) -> Result<timely::Config, String> {
        if self.processes <= 1 {
            return Ok(timely::Config::process(threads));
        }
        Ok(timely::Config {
            communication: timely::CommunicationConfig::Cluster {
                threads,
                process: self.process,
                addresses: self.addresses.clone(),
                report: false,
                zerocopy: false,
            },
            worker: timely::WorkerConfig::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostfiles_are_read_and_checked() {
        let dir = std::env::temp_dir().join(format!("flowboost-hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("hosts");
        std::fs::write(
            &f,
            "# two local processes\n127.0.0.1:2101\n\n127.0.0.1:2102\n",
        )
        .unwrap();
        let c = Cluster::new(2, 1, Some(&f)).unwrap();
        assert_eq!(c.addresses, vec!["127.0.0.1:2101", "127.0.0.1:2102"]);
        assert!(
            Cluster::new(3, 0, Some(&f))
                .unwrap_err()
                .contains("2 addresses")
        );
        assert!(
            Cluster::new(2, 2, Some(&f))
                .unwrap_err()
                .contains("less than")
        );
        std::fs::write(&f, "localhost\n127.0.0.1:1\n").unwrap();
        assert!(Cluster::new(2, 0, Some(&f)).unwrap_err().contains("line 1"));
        assert!(Cluster::new(2, 0, None).unwrap_err().contains("--hostfile"));
        assert_eq!(Cluster::new(1, 0, None).unwrap(), Cluster::default());
    }
}
