//! The `flowboost` binary: see `flowboost --help`.

use clap::Parser;
use flowboost::cli::{Cli, run};

fn main() {
    let args = match flowboost::kafka::job_file::expand_config(std::env::args_os().collect()) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("flowboost: error: {message}");
            std::process::exit(2);
        }
    };
    let cli = Cli::parse_from(args);
    if let Err(message) = run(cli) {
        eprintln!("flowboost: error: {message}");
        std::process::exit(2);
    }
}
