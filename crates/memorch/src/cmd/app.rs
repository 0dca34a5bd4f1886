//! `memorch app`: a synthetic app with a real memory image, for tests, the bench and for trying memorch by hand.

use anyhow::{Context, Result};
use memorch_bench::app::{self, AppSpec, Content};
use std::io::Write;
use std::path::PathBuf;

/// Run a synthetic app: do its init work, fill an anonymous heap with realistic page
/// contents, map and read a file as its code, print one `ready` line, then serve commands on
/// standard input until it ends or the app is killed.
///
/// The ready line is `ready pid=P anon_bytes=N file_bytes=N init_ms=T`, so a script can wait
/// for it instead of sleeping. Commands, one a line:
///   resume   touch the working set; answers `resumed us=N major_faults=M`, then draws
///            frames at 60 Hz (a slice of the working set and 1 ms of CPU each)
///   back     stop drawing; answers `frames n=N janky=J p95_us=P max_us=M` (janky: over
///            16.7 ms, a missed frame)
///   exit     end the app
/// With standard input at end of file (or /dev/null), the app just stays alive.
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
    /// Heap content: text (compresses ~2-3x), zero, same (one word repeated), random (incompressible), shared
    /// (identical in every app: KSM merges it), or mixed (the realistic mix of docs/bench.md).
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
    /// A shared object of the app's own (`lib….so`, created if missing), mapped privately and written once at start, as
    /// a loader relocates a library, never touched again: pages of the library that only swap can take (SWAM's unshared
    /// SO pages).
    #[arg(long, requires = "so_mb")]
    so: Option<PathBuf>,
    /// How much of --so to map and read, in MiB.
    #[arg(long, requires = "so")]
    so_mb: Option<u64>,
    /// While not in front, run this often (ms): write the next 1 % of the heap, as apps do in the background (sync,
    /// push, prefetch). 0: never.
    #[arg(long, default_value_t = 0)]
    background_ms: u64,
    /// The process name shown in `status` (at most 15 bytes).
    #[arg(long)]
    name: Option<String>,
    /// CPU work at start, in ms (its cold-launch cost besides building memory).
    #[arg(long, default_value_t = 0)]
    init_ms: u64,
    /// Share of the heap and file touched on `resume` (its working set), 0..=1.
    #[arg(long, default_value_t = 0.3)]
    working_set: f64,
    /// Start in front: draw frames from `ready` on, as a launched app does.
    #[arg(long)]
    front: bool,
    /// A cache of this many MiB besides the heap (content as --content), which the app drops when memorch tells it to
    /// trim (with --trim-socket); it is rebuilt on the next `resume`, as a real app re-creates what it dropped.
    #[arg(long, default_value_t = 0)]
    cache_mb: u64,
    /// memorch's control socket: listen there for trim notices and drop the cache on each level (moderate, low,
    /// critical; not on `hidden`); a line `trimmed level=L bytes=N` goes to standard error.
    #[arg(long)]
    trim_socket: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    if let Some(name) = &args.name {
        let c = std::ffi::CString::new(name.as_bytes()).context("--name must not contain NUL")?;
        // SAFETY: PR_SET_NAME copies at most 16 bytes from a valid C string.
        unsafe { libc::prctl(libc::PR_SET_NAME, c.as_ptr()) };
    }
    anyhow::ensure!(
        (0.0..=1.0).contains(&args.working_set),
        "--working-set {}: give a share between 0 and 1",
        args.working_set
    );
    let spec = AppSpec {
        anon_bytes: args.anon_mb << 20,
        content: Content::parse(&args.content).expect("clap checked the value"),
        seed: args.seed,
        file: args.file.clone().zip(args.file_mb.map(|mb| mb << 20)),
        so: args.so.clone().zip(args.so_mb.map(|mb| mb << 20)),
    };
    let t0 = std::time::Instant::now();
    app::init_work(args.init_ms);
    let image = app::build(&spec).with_context(|| format!("building an app of {} MiB", args.anon_mb))?;
    let cache = std::sync::Arc::new(std::sync::Mutex::new(build_cache(&spec, args.cache_mb)?));
    if let Some(socket) = &args.trim_socket {
        listen_for_trims(socket, cache.clone())?;
    }
    let mut out = std::io::stdout().lock();
    let file_bytes = image.file.as_ref().map_or(0, |f| f.len());
    let (pid, anon, ms) = (std::process::id(), image.anon.len(), t0.elapsed().as_millis());
    writeln!(out, "ready pid={pid} anon_bytes={anon} file_bytes={file_bytes} init_ms={ms}")?;
    out.flush()?;
    if serve(&args, &spec, &image, &cache, &mut out)? {
        return Ok(());
    }
    drop(out);
    loop {
        // SAFETY: pause just waits for a signal; the default actions end the process.
        unsafe { libc::pause() };
    }
}

/// Whether standard input has a line within `ms` (a frame's or a background tick's wait).
fn input_within(ms: u64) -> bool {
    let mut pfd = libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 };
    // SAFETY: polling our standard input.
    unsafe { libc::poll(&mut pfd, 1, ms.min(i32::MAX as u64) as i32) != 0 }
}

/// The app's life after it is ready: frames while in front, background work while not, and the commands on standard
/// input. `true` on `exit`, `false` when standard input closes.
fn serve(
    args: &Args,
    spec: &AppSpec,
    image: &app::AppImage,
    cache: &std::sync::Mutex<Option<app::AppImage>>,
    out: &mut impl Write,
) -> Result<bool> {
    let mut line = String::new();
    // In front: frames until the next command.
    let mut frames: Option<app::FrameStats> = args.front.then(app::FrameStats::default);
    let (mut cursor, mut background_cursor) = (0usize, 0usize);
    let mut next_frame = std::time::Instant::now();
    loop {
        if frames.is_none() && args.background_ms > 0 && !input_within(args.background_ms) {
            image.background_tick(&mut background_cursor);
            continue;
        }
        if let Some(frames) = frames.as_mut() {
            let wait = next_frame.saturating_duration_since(std::time::Instant::now());
            if !input_within(wait.as_millis() as u64) {
                frames.us.push(image.frame(args.working_set, &mut cursor).as_micros() as u64);
                next_frame = (next_frame + app::FRAME_BUDGET).max(std::time::Instant::now());
                continue;
            }
        }
        line.clear();
        if std::io::stdin().read_line(&mut line).unwrap_or(0) == 0 {
            return Ok(false);
        }
        match line.trim() {
            "resume" => {
                let mut c = cache.lock().expect("cache");
                if c.is_none() {
                    *c = build_cache(spec, args.cache_mb)?;
                }
                drop(c);
                let r = image.resume(args.working_set);
                writeln!(out, "resumed us={} major_faults={}", r.us, r.major_faults)?;
                frames = Some(app::FrameStats::default());
                next_frame = std::time::Instant::now();
            }
            "back" => writeln!(out, "{}", frames.take().unwrap_or_default().line())?,
            "exit" => return Ok(true),
            other => writeln!(out, "error unknown command '{other}': use resume, back or exit")?,
        }
        out.flush()?;
    }
}

/// The app's cache: `mb` MiB of the heap's content (its own allocation, so dropping it gives the pages back to the
/// kernel at once).
fn build_cache(spec: &AppSpec, mb: u64) -> Result<Option<app::AppImage>> {
    if mb == 0 {
        return Ok(None);
    }
    let c = app::build(&AppSpec {
        anon_bytes: mb << 20,
        file: None,
        so: None,
        seed: spec.seed.wrapping_add(1),
        ..spec.clone()
    })
    .with_context(|| format!("building a cache of {mb} MiB"))?;
    Ok(Some(c))
}

/// Subscribe to memorch's trim notices; on each, drop the cache (a thread of its own, so the app's frames and commands
/// go on).
fn listen_for_trims(
    socket: &std::path::Path,
    cache: std::sync::Arc<std::sync::Mutex<Option<app::AppImage>>>,
) -> Result<()> {
    let notices = memorch_protocol::Client::new(socket)
        .trim_notices()
        .with_context(|| format!("listening for trim notices on {}", socket.display()))?;
    std::thread::spawn(move || {
        for e in notices {
            // Hidden is about what only its UI needs: the cache stays until memory is short.
            if let memorch_protocol::Event::Trim(n) = e {
                if n.level == memorch_core::engine::margins::TrimLevel::Hidden {
                    continue;
                }
                let dropped = cache.lock().expect("cache").take();
                eprintln!("trimmed level={} bytes={}", n.level.name(), dropped.map_or(0, |c| c.anon.len()));
            }
        }
    });
    Ok(())
}
