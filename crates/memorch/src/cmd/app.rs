//! `memorch app`: a synthetic app with a real memory image, for tests, the bench and for
//! trying memorch by hand.

use anyhow::{Context, Result};
use memorch_bench::app::{self, AppSpec, Content};
use std::io::Write;
use std::path::PathBuf;

/// Run a synthetic app: fill an anonymous heap with realistic page contents, map and read a
/// file as its code, print one `ready` line, then stay alive until killed.
///
/// The ready line is `ready pid=P anon_bytes=N file_bytes=N`, so a script can wait for it
/// instead of sleeping.
///
/// Examples:
///   memorch app --anon-mb 200 --content text
///   memorch app --anon-mb 100 --content mixed --file /tmp/app.bin --file-mb 64
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Size of the anonymous heap in MiB.
    #[arg(long, default_value_t = 64)]
    anon_mb: u64,
    /// Heap content: text (compresses ~2-3x), zero, same (one word repeated), random
    /// (incompressible), shared (identical in every app: KSM merges it), or mixed (the
    /// realistic mix of docs/bench.md).
    #[arg(long, default_value = "mixed", value_parser = ["text", "zero", "same", "random", "shared", "mixed"])]
    content: String,
    /// Seed of this app's content: apps with the same seed hold identical pages.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A file to map and read as the app's code (created with text if missing or short).
    #[arg(long, requires = "file_mb")]
    file: Option<PathBuf>,
    /// How much of --file to map and read, in MiB.
    #[arg(long, requires = "file")]
    file_mb: Option<u64>,
    /// The process name shown in `status` (at most 15 bytes).
    #[arg(long)]
    name: Option<String>,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(name) = &args.name {
        let c = std::ffi::CString::new(name.as_bytes()).context("--name must not contain NUL")?;
        // SAFETY: PR_SET_NAME copies at most 16 bytes from a valid C string.
        unsafe { libc::prctl(libc::PR_SET_NAME, c.as_ptr()) };
    }
    let spec = AppSpec {
        anon_bytes: args.anon_mb << 20,
        content: Content::parse(&args.content).expect("clap checked the value"),
        seed: args.seed,
        file: args.file.clone().zip(args.file_mb.map(|mb| mb << 20)),
    };
    let image = app::build(&spec).with_context(|| format!("building an app of {} MiB", args.anon_mb))?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "ready pid={} anon_bytes={} file_bytes={}",
        std::process::id(),
        image.anon.len(),
        image.file.as_ref().map_or(0, |f| f.len())
    )?;
    out.flush()?;
    drop(out);
    loop {
        // SAFETY: pause just waits for a signal; the default actions end the process.
        unsafe { libc::pause() };
    }
}
