//! `flowboost run --config job.toml`: a job file with the same keys as the options.
//!
//! Every key is the long name of an option of `flowboost run` (`_` or `-`), at the top
//! level or in any table (table names only group keys: `[kafka]`, `[model]`,
//! `[schema]`). Strings and numbers are the option's value, `true` turns a flag on. An
//! array is one option per item for an option given once per value (`kafka-set =
//! ["linger.ms=5", "acks=all"]` is `--kafka-set linger.ms=5 --kafka-set acks=all`), and a
//! comma-separated list for the options that take one (`label-names = ["a", "b"]` is
//! `--label-names a,b`); which is which is read from the command line's definition. A relative `kafka-config`
//! path is relative to the job file's folder (a `client.properties` beside the job file).
//! Options given on the command line override the file.
//!
//! ```toml
//! [kafka]
//! brokers = "127.0.0.1:9092"
//! source = "kafka:events"
//! sink = "kafka:predictions"
//! feedback = "kafka:feedback"
//! dead-letter = "kafka:dead-letters"
//! group = "job-1"
//! start = "committed"
//! exit-when-idle = 5
//!
//! [schema]
//! task = "multilabel"
//! dim = 120
//! num-labels = 101
//!
//! [model]
//! algo = "ada-olmr"
//! learners = 10
//! ```

use clap::{ArgAction, CommandFactory};
use std::ffi::OsString;
use std::path::Path;

/// Reads a job file and returns its options as command-line arguments (`--key value`).
pub fn job_file_args(path: &Path) -> Result<Vec<OsString>, String> {
    let text = flowboost_connectors::readers::read_small_text(path)
        .map_err(|e| format!("{}: cannot read the job file: {e}", path.display()))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: not a valid TOML job file: {e}", path.display()))?;
    let mut out = Vec::new();
    let command = super::Cli::command();
    let run = command
        .find_subcommand("run")
        .ok_or("the command line has no `run` command")?;
    flatten(path, run, &table, &mut out)?;
    Ok(out)
}

/// Whether `run`'s option `--long` takes one value per occurrence and collects them
/// (clap's `ArgAction::Append` without a value delimiter, like `--kafka-set`); options with
/// a delimiter (`--label-names a,b`) take the list as one value.
fn repeated(run: &clap::Command, long: &str) -> bool {
    run.get_arguments()
        .find(|a| a.get_long() == Some(long))
        .is_some_and(|a| {
            matches!(a.get_action(), ArgAction::Append) && a.get_value_delimiter().is_none()
        })
}

fn flatten(
    path: &Path,
    run: &clap::Command,
    table: &toml::Table,
    out: &mut Vec<OsString>,
) -> Result<(), String> {
    for (key, value) in table {
        let flag = format!("--{}", key.replace('_', "-"));
        if flag == "--config" {
            return Err(format!(
                "{}: a job file cannot name another (`config`)",
                path.display()
            ));
        }
        let long = &flag[2..];
        let text = match value {
            toml::Value::Table(t) => {
                flatten(path, run, t, out)?;
                continue;
            }
            toml::Value::Boolean(true) => {
                out.push(flag.into());
                continue;
            }
            toml::Value::Boolean(false) => continue,
            toml::Value::Array(items) => {
                let items = items
                    .iter()
                    .map(|v| scalar(path, key, v))
                    .collect::<Result<Vec<_>, _>>()?;
                if repeated(run, long) {
                    for item in items {
                        out.push(flag.clone().into());
                        out.push(item.into());
                    }
                    continue;
                }
                items.join(",")
            }
            v => scalar(path, key, v)?,
        };
        out.push(flag.clone().into());
        if long == "kafka-config" && Path::new(&text).is_relative() {
            let dir = path.parent().unwrap_or(Path::new(""));
            out.push(dir.join(&text).into_os_string());
        } else {
            out.push(text.into());
        }
    }
    Ok(())
}

fn scalar(path: &Path, key: &str, v: &toml::Value) -> Result<String, String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(format!(
            "{}: key `{key}`: unsupported value {other} (use a string, a number, a boolean or an array of them)",
            path.display()
        )),
    }
}

/// Expands `flowboost run --config FILE ...`: the file's options come first, then the
/// command line's (which override them). Other command lines are returned as they are.
pub fn expand_config(args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let Some(run) = args.iter().position(|a| a == "run") else {
        return Ok(args);
    };
    let mut file = None;
    let mut rest = Vec::new();
    let mut i = run + 1;
    while i < args.len() {
        let a = args[i].to_string_lossy();
        if a == "--config" {
            let Some(f) = args.get(i + 1) else {
                return Err("--config needs a file".into());
            };
            file = Some(f.clone());
            i += 2;
            continue;
        }
        if let Some(f) = a.strip_prefix("--config=") {
            file = Some(OsString::from(f));
            i += 1;
            continue;
        }
        rest.push(args[i].clone());
        i += 1;
    }
    let Some(file) = file else {
        return Ok(args);
    };
    let mut out: Vec<OsString> = args[..=run].to_vec();
    out.extend(job_file_args(Path::new(&file))?);
    out.extend(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_file_becomes_options_before_the_command_line() {
        let dir = std::env::temp_dir().join(format!("flowboost-job-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("job.toml");
        std::fs::write(
            &file,
            "brokers = \"127.0.0.1:9092\"\n[kafka]\nexit_when_idle = 2.5\nworkers = 2\nverbose = false\n[schema]\nlabel-names = [\"a\", \"b\"]\n",
        )
        .unwrap();
        let args: Vec<OsString> = [
            "flowboost",
            "run",
            "--config",
            file.to_str().unwrap(),
            "--workers",
            "3",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let out: Vec<String> = expand_config(args)
            .unwrap()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(
            out,
            [
                "flowboost",
                "run",
                "--brokers",
                "127.0.0.1:9092",
                "--exit-when-idle",
                "2.5",
                "--workers",
                "2",
                "--label-names",
                "a,b",
                "--workers",
                "3"
            ]
        );
        std::fs::write(&file, "brokers = [").unwrap();
        let bad = expand_config(vec![
            "flowboost".into(),
            "run".into(),
            format!("--config={}", file.display()).into(),
        ]);
        assert!(bad.unwrap_err().contains("not a valid TOML job file"));
    }

    #[test]
    fn repeated_options_get_one_flag_per_item_and_kafka_config_is_beside_the_file() {
        let dir = std::env::temp_dir().join(format!("flowboost-job-list-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("job.toml");
        std::fs::write(
            &file,
            "kafka-set = [\"linger.ms=5\", \"acks=all\"]\nfeature-names = [\"x\", \"y\"]\n[kafka]\nkafka-config = \"client.properties\"\n",
        )
        .unwrap();
        let out: Vec<String> = job_file_args(&file)
            .unwrap()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let beside = dir.join("client.properties").display().to_string();
        assert_eq!(
            out,
            [
                "--feature-names",
                "x,y",
                "--kafka-config",
                beside.as_str(),
                "--kafka-set",
                "linger.ms=5",
                "--kafka-set",
                "acks=all",
            ]
        );
        // An absolute path stays as it is.
        std::fs::write(&file, "kafka-config = \"/etc/kafka/client.properties\"\n").unwrap();
        let out = job_file_args(&file).unwrap();
        assert_eq!(out[1], OsString::from("/etc/kafka/client.properties"));
        // Parsed by clap, the items are separate values.
        std::fs::write(
            &file,
            "source = \"kafka:e\"\nkafka-set = [\"a=b\", \"c=d,e\"]\n",
        )
        .unwrap();
        let mut args: Vec<OsString> = vec!["flowboost".into(), "run".into()];
        args.extend(job_file_args(&file).unwrap());
        let cli = <crate::cli::Cli as clap::Parser>::try_parse_from(args).unwrap();
        let crate::cli::Command::Run(run) = cli.command else {
            panic!("not run")
        };
        assert_eq!(run.kafka.kafka_set, ["a=b", "c=d,e"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
