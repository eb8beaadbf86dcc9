//! Writing a simulated click log to disk in the Open Bandit Dataset's layout (what
//! `flowboost simulate-clicks` does): `clicks.csv` (or `clicks.csv.gz`), the
//! `item_context.csv` beside it, and `simulator.json` (the configuration that regenerates
//! the log, and its ground truth).

use super::logged_clicks::{SIMULATOR_FILE, SimulatorFile};
use super::off_policy::{Estimate, Mean};
use flate2::Compression;
use flate2::write::GzEncoder;
use flowboost_connectors::generators::clicks::{ClickSimConfig, ClickSimulator};
use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// An I/O error naming the file.
fn io(p: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{}: {e}", p.display())
}

/// What [`write_simulated_log`] wrote.
#[derive(Clone, Debug, Serialize)]
pub struct SimulatedLogSummary {
    /// The log file.
    pub log: PathBuf,
    /// Impressions.
    pub impressions: u64,
    /// Rows (impression, position).
    pub rows: u64,
    /// Clicks.
    pub clicks: u64,
    /// The logging policy (`uniform` or `bts`).
    pub logging_policy: String,
    /// The logged click-through rate per row.
    pub logged_ctr: Estimate,
    /// The logging policy's true click-through rate per slot.
    pub logging_true_ctr: Estimate,
    /// The best ranking's true click-through rate per slot.
    pub best_true_ctr: Estimate,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Writes the log of `config` into the folder `dir` (created if missing): `clicks.csv`
/// (`clicks.csv.gz` with `gzip`), `item_context.csv` and `simulator.json`.
pub fn write_simulated_log(
    config: &ClickSimConfig,
    dir: &Path,
    gzip: bool,
) -> Result<SimulatedLogSummary, String> {
    let start = Instant::now();
    let sim = ClickSimulator::new(config.clone()).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let context = dir.join("item_context.csv");
    std::fs::write(&context, sim.item_context_csv()).map_err(io(&context))?;
    let json = dir.join(SIMULATOR_FILE);
    let described = SimulatorFile {
        config: config.clone(),
        truth: sim.truth().clone(),
    };
    let text = serde_json::to_string_pretty(&described).map_err(|e| e.to_string())?;
    std::fs::write(&json, text + "\n").map_err(io(&json))?;
    let log = dir.join(if gzip { "clicks.csv.gz" } else { "clicks.csv" });
    let file = BufWriter::with_capacity(1 << 20, File::create(&log).map_err(io(&log))?);
    let tally = if gzip {
        let mut out = GzEncoder::new(file, Compression::fast());
        let tally = write_rows(sim, &mut out).map_err(io(&log))?;
        out.finish().and_then(|mut f| f.flush()).map_err(io(&log))?;
        tally
    } else {
        let mut out = file;
        let tally = write_rows(sim, &mut out).map_err(io(&log))?;
        out.flush().map_err(io(&log))?;
        tally
    };
    let Tally {
        impressions,
        rows,
        clicks,
        logged,
        logging,
        best,
    } = tally;
    Ok(SimulatedLogSummary {
        log,
        impressions,
        rows,
        clicks,
        logging_policy: config.logging.name().to_string(),
        logged_ctr: logged.estimate(),
        logging_true_ctr: logging.estimate(),
        best_true_ctr: best.estimate(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The counts of a written log.
struct Tally {
    impressions: u64,
    rows: u64,
    clicks: u64,
    logged: Mean,
    logging: Mean,
    best: Mean,
}

/// Writes the header and every row of `sim` to `out`.
fn write_rows(sim: ClickSimulator, out: &mut impl Write) -> std::io::Result<Tally> {
    out.write_all(sim.csv_header().as_bytes())?;
    let truth = sim.truth().clone();
    let mut t = Tally {
        impressions: 0,
        rows: 0,
        clicks: 0,
        logged: Mean::default(),
        logging: Mean::default(),
        best: Mean::default(),
    };
    let mut text = String::with_capacity(1 << 16);
    for imp in sim {
        imp.write_rows(&mut text);
        t.impressions += 1;
        for s in &imp.impression.slots {
            t.rows += 1;
            t.clicks += u64::from(s.click);
            t.logged.push(f64::from(u8::from(s.click)));
        }
        t.logging.push(imp.logging_ctr);
        t.best.push(truth.best_ctr(&imp.relevance));
        if text.len() > (1 << 16) - 1024 {
            out.write_all(text.as_bytes())?;
            text.clear();
        }
    }
    out.write_all(text.as_bytes())?;
    Ok(t)
}
