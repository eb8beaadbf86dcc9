use super::output;
use crate::model::inspect;
use clap::Args;
use std::path::PathBuf;

/// Options of `flowboost inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The model file (read as its framing says, at most 16 GiB: a device or a pipe is
    /// never read whole).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `flowboost inspect`.
pub fn run(args: InspectArgs) -> Result<(), String> {
    let report = inspect(&args.file)?;
    if args.json {
        output::print_json(&report)?;
    } else {
        output::print(&report.to_text())?;
    }
    Ok(())
}
