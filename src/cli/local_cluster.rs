//! `flowboost run --local-cluster P ...`: P processes of the same job on this machine,
//! started by one command (for tests and trials; on several machines, start each process
//! with `--processes P --process I --hostfile FILE`).

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Starts processes 1..P as children (the same command line, `--local-cluster` replaced by
/// `--processes P --process I --hostfile FILE`), then runs process 0 in the foreground,
/// passing its output through. If a process fails, the others are stopped; the first
/// failure is the error.
pub fn run(processes: usize, base_port: u16) -> Result<(), String> {
    if processes == 0 {
        return Err("--local-cluster must be at least 1".into());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find flowboost itself: {e}"))?;
    let args: Vec<String> = strip(std::env::args().skip(1).collect());
    let dir = std::env::temp_dir().join(format!("flowboost-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let hostfile = dir.join("hosts");
    let mut f =
        std::fs::File::create(&hostfile).map_err(|e| format!("{}: {e}", hostfile.display()))?;
    for i in 0..processes {
        writeln!(f, "127.0.0.1:{}", base_port as usize + i).map_err(|e| e.to_string())?;
    }
    drop(f);
    let command = |i: usize| {
        let mut c = Command::new(&exe);
        c.args(&args)
            .arg("--processes")
            .arg(processes.to_string())
            .arg("--process")
            .arg(i.to_string())
            .arg("--hostfile")
            .arg(&hostfile);
        c
    };
    let mut children: Vec<Child> = Vec::new();
    for i in 1..processes {
        let child = command(i)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start process {i}: {e}"))?;
        children.push(child);
    }
    let mut first = command(0)
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start process 0: {e}"))?;
    let mut all: Vec<(usize, Child)> = std::iter::once((0, first_take(&mut first)))
        .chain(children.into_iter().enumerate().map(|(i, c)| (i + 1, c)))
        .collect();
    let mut failure: Option<String> = None;
    let mut running = all.len();
    while running > 0 {
        running = 0;
        for (i, child) in all.iter_mut() {
            match child.try_wait() {
                Ok(Some(status)) if !status.success() && failure.is_none() => {
                    failure = Some(format!(
                        "process {i} of the local cluster failed ({status})"
                    ));
                }
                Ok(Some(_)) => {}
                Ok(None) => running += 1,
                Err(e) => {
                    failure.get_or_insert(format!("process {i}: {e}"));
                }
            }
        }
        if failure.is_some() {
            for (_, child) in all.iter_mut() {
                if matches!(child.try_wait(), Ok(None)) {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(&dir);
    match failure {
        Some(f) => Err(f),
        None => Ok(()),
    }
}

fn first_take(c: &mut Child) -> Child {
    std::mem::replace(c, Command::new("true").spawn().expect("`true` runs"))
}

/// The command line without `--local-cluster P` and `--local-base-port N`.
fn strip(args: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a == "--local-cluster" || a == "--local-base-port" {
            skip = true;
            continue;
        }
        if a.starts_with("--local-cluster=") || a.starts_with("--local-base-port=") {
            continue;
        }
        out.push(a);
    }
    out
}
