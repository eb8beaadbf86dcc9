//! `flowboost run --config job.toml`: a job file with the same keys as the options.
//!
//! Every key is the long name of an option of `flowboost run` (`_` or `-`), at the top
//! level or in any table (table names only group keys: `[kafka]`, `[model]`,
//! `[schema]`). Strings and numbers are the option's value, `true` turns a flag on,
//! arrays are comma-separated lists. Options given on the command line override the file.
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

use std::ffi::OsString;
use std::path::Path;

/// Reads a job file and returns its options as command-line arguments (`--key value`).
pub fn job_file_args(path: &Path) -> Result<Vec<OsString>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read the job file: {e}", path.display()))?;
    let table: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: not a valid TOML job file: {e}", path.display()))?;
    let mut out = Vec::new();
    flatten(path, &table, &mut out)?;
    Ok(out)
}

fn flatten(path: &Path, table: &toml::Table, out: &mut Vec<OsString>) -> Result<(), String> {
    for (key, value) in table {
        let flag = format!("--{}", key.replace('_', "-"));
        if flag == "--config" {
            return Err(format!(
                "{}: a job file cannot name another (`config`)",
                path.display()
            ));
        }
        let text = match value {
            toml::Value::Table(t) => {
                flatten(path, t, out)?;
                continue;
            }
            toml::Value::Boolean(true) => {
                out.push(flag.into());
                continue;
            }
            toml::Value::Boolean(false) => continue,
            toml::Value::Array(items) => items
                .iter()
                .map(|v| scalar(path, key, v))
                .collect::<Result<Vec<_>, _>>()?
                .join(","),
            v => scalar(path, key, v)?,
        };
        out.push(flag.into());
        out.push(text.into());
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
}
