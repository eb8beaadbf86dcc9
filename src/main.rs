//! The `flowboost` binary: see `flowboost --help`.

use clap::Parser;
use flowboost::cli::{Cli, run};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The system allocator, counting the bytes allocated (for `flowboost inspect`'s in-memory
/// size of a model) once the count is started, that is from the first call to
/// [`allocated`] on. Until then an allocation costs one load of a flag that no thread
/// writes: counting always (one atomic add on one shared counter per allocation and free)
/// made every worker thread's allocations contend for that counter's cache line.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

fn count_up(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCATED.fetch_add(bytes, Ordering::Relaxed);
    }
}

fn count_down(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCATED.fetch_sub(bytes, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counter is only
// arithmetic on the sizes the caller passes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            count_up(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count_down(layout.size());
        // SAFETY: the caller's contract for `dealloc` is passed on as is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed` is passed on as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            count_up(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc` is passed on as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            count_down(layout.size());
            count_up(new_size);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The bytes allocated and not freed since the count started (wrapping: frees of memory
/// allocated before it count down too); the first call starts the count.
fn allocated() -> usize {
    COUNTING.store(true, Ordering::Relaxed);
    ALLOCATED.load(Ordering::Relaxed)
}

/// The one logging setup: `tracing` events (flowboost's and librdkafka's, target
/// `librdkafka`) to stderr, filtered by `FLOWBOOST_LOG` (else `RUST_LOG`; default `info`),
/// in `tracing_subscriber`'s env-filter syntax (`warn`, `info,librdkafka=debug`, ...).
fn init_logging() {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let spec = std::env::var("FLOWBOOST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::var("RUST_LOG")
                .ok()
                .filter(|v| !v.trim().is_empty())
        });
    let (filter, bad) = match spec {
        None => (EnvFilter::new("info"), None),
        Some(spec) => match EnvFilter::try_new(&spec) {
            Ok(f) => (f, None),
            Err(e) => (EnvFilter::new("info"), Some(format!("{spec:?}: {e}"))),
        },
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
    if let Some(bad) = bad {
        tracing::warn!("flowboost: FLOWBOOST_LOG/RUST_LOG {bad}: logging at info");
    }
}

fn main() {
    flowboost::model::set_heap_probe(allocated);
    init_logging();
    let args = match flowboost::cli::job_file::expand_config(std::env::args_os().collect()) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("flowboost: error: {message}");
            std::process::exit(2);
        }
    };
    let cli = Cli::parse_from(args);
    if let Err(message) = run(cli) {
        // No secret of the Kafka settings, whatever a client's error quoted.
        let message = flowboost::kafka::client_args::redact(&message);
        eprintln!("flowboost: error: {message}");
        std::process::exit(2);
    }
}
